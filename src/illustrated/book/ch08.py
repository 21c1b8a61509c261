"""Chapter 08, training and the loss: the vocabulary, one-hot targets, distributions, smoothing."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

import illustrated as il
from illustrated.data import load_corpus
from illustrated.modules import Transformer
from illustrated.pretrained_models import SETTINGS, make_config

from . import kit
from .kit import probability_text

__all__ = ["SOURCE", "TARGET", "untrained_model", "train_snapshots", "draw_cells",
           "draw_distributions", "probability_text", "entropy", "draw_label_smoothing"]

SOURCE, TARGET = "je suis étudiant", "i am a student"  # the pair whose distributions we follow


def untrained_model(seed: int):
    """The post corpus's model as il.train_corpus builds it from ``seed``, before any training."""
    _, src_vocab, tgt_vocab = load_corpus("post")
    il.set_seed(seed)
    return Transformer(make_config("post", src_vocab, tgt_vocab)).eval(), src_vocab, tgt_vocab


def train_snapshots(seed: int, steps, *, label_smoothing: float = 0.0):
    """Train the post corpus's model from ``seed`` with its settings: (model, history,
    {step: the distributions of SOURCE -> TARGET after that step, (5, vocab)})."""
    model, src_vocab, tgt_vocab = untrained_model(seed)
    pairs, _, _ = load_corpus("post")
    snapshots = {}

    def record(step, history=None):
        if step in steps:
            snapshots[step] = il.trace(model, SOURCE, TARGET, src_vocab=src_vocab,
                                       tgt_vocab=tgt_vocab).probs
    record(0)
    history = il.train(model, pairs, src_vocab, tgt_vocab, **SETTINGS["post"]["train"],
                       label_smoothing=label_smoothing, seed=seed, device="cpu",
                       progress=False, callback=record)
    return model.eval(), history, snapshots


def draw_cells(rows: dict, *, highlight: dict | None = None, title: str = "",
               width: float = kit.DESKTOP_WIDTH_IN):
    """Rows of labelled cells, e.g. {"index": [0, 1, ...], "word": ["a", "am", ...]}; the
    cells in ``highlight`` ({row label: column}) are coloured. A phone's column turns the
    table: each row a column, its label on top."""
    n_rows, n_cols = len(rows), len(next(iter(rows.values())))
    phone = kit.narrow(width)
    if phone:
        fig, ax = kit.canvas((0.2 + 1.1 * n_rows, 0.45 + 0.42 * (n_cols + 1) + 0.3 * bool(title)),
                             (-0.1, n_rows + 0.1), (n_cols + 1.05 + 0.75 * bool(title), -0.05))
    else:
        fig, ax = kit.canvas((1.6 + 0.95 * n_cols, 0.55 + 0.6 * n_rows), (-1.7, n_cols + 0.05),
                             (-0.05, n_rows + (0.55 if title else 0.05)))
    for r, (label, cells) in enumerate(rows.items()):
        y = n_rows - 1 - r
        if phone:  # column r, its label in the first row, its cells below
            ax.text(r + 0.5, n_cols + 0.5, label, ha="center", va="center", fontsize=11,
                    color=kit.COLORS["text"])
        else:
            ax.text(-0.15, y + 0.5, label, ha="right", va="center", fontsize=11,
                    color=kit.COLORS["text"])
        for c, text in enumerate(cells):
            on = (highlight or {}).get(label) == c
            x0, y0 = (r, n_cols - 1 - c) if phone else (c, y)
            ax.add_patch(Rectangle((x0, y0), 1, 1, edgecolor="white", linewidth=2,
                                   facecolor=kit.COLORS["z" if on else "output" if r else "decoder"]))
            ax.text(x0 + 0.5, y0 + 0.5, str(text), ha="center", va="center", fontsize=11,
                    fontweight="bold" if on else "normal", color=kit.COLORS["text"])
    if title and phone:
        ax.text(n_rows / 2, n_cols + 1.35, kit.wrap(title, 30), ha="center", va="center",
                fontsize=10)
    elif title:
        ax.text(n_cols / 2, n_rows + 0.3, title, ha="center", va="center", fontsize=11)
    if phone:
        ax.invert_yaxis()  # (the canvas counts down; the cells are laid out counting up)
    return fig


def draw_distributions(probs, tokens, row_labels, target_ids, *, title: str = "",
                       width: float = kit.DESKTOP_WIDTH_IN):
    """Distributions over the vocabulary as rows of cells with their values; the target
    word of each row is framed. A phone's column turns the table: one column per
    distribution, one row per word."""
    probs = np.atleast_2d(probs)  # (n_rows, vocab)
    phone = kit.narrow(width)
    if phone:
        fig, ax = plt.subplots(figsize=(width, 1.6 + 0.32 * len(tokens)), dpi=kit.DPI,
                               layout="constrained")
        kit.heatmap(ax, probs.T, row_labels=tokens, col_labels=[  # "3: student" on two lines
                        str(label).replace(": ", "\n") for label in row_labels], vmin=0, vmax=1,
                    annotate=True, fmt=probability_text, fontsize=9, label_fontsize=10)
        ax.tick_params(axis="x", labelsize=9)
        for row, column in enumerate(target_ids):
            ax.add_patch(Rectangle((row - 0.5, column - 0.5), 1, 1, fill=False,
                                   edgecolor=kit.COLORS["z"], linewidth=3))
    else:
        fig, ax = plt.subplots(figsize=(8, 1.3 + 0.42 * len(probs)), dpi=kit.DPI,
                               layout="constrained")
        kit.heatmap(ax, probs, row_labels=row_labels, col_labels=tokens, vmin=0, vmax=1,
                    annotate=True, fmt=probability_text, fontsize=9, label_fontsize=10)
        for row, column in enumerate(target_ids):
            ax.add_patch(Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False,
                                   edgecolor=kit.COLORS["z"], linewidth=3))
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    if title:
        fig.suptitle(title, fontsize=11, x=0.02, ha="left")
    return fig


def entropy(p) -> float:
    """The entropy of a distribution in nats: its cross-entropy with itself."""
    return float(il.reference.cross_entropy(p, p))


def draw_label_smoothing(epsilon: float, V: int, *, tokens, target_id: int, sizes, shown: int = 9,
                         width: float = kit.DESKTOP_WIDTH_IN):
    """The smoothed target of one word for ``epsilon`` and ``V``, its values, and the lowest
    loss a model can reach against it for every V of ``sizes`` (below, in a phone's column)."""
    p = il.reference.smooth_labels([target_id], V, epsilon)[0]  # (V,)
    phone = kit.narrow(width)
    fig, (bars, floor) = plt.subplots(*((2, 1) if phone else (1, 2)),
                                      figsize=(width, 6.6) if phone else (8, 3.6), dpi=kit.DPI,
                                      layout="constrained",
                                      gridspec_kw={"height_ratios" if phone else "width_ratios":
                                                   [1.25, 1] if phone else [1.1, 1]})
    k = min(V, shown)
    bars.bar(range(k), p[:k], color=[kit.COLORS["chosen"] if i == target_id else kit.COLORS["probs"]
                                     for i in range(k)])
    bars.set_xticks(range(k), tokens[:k], rotation=45, ha="right", fontsize=9)
    bars.set_ylim(0, 1.05)
    bars.tick_params(axis="y", labelsize=9)
    bars.spines[["top", "right"]].set_visible(False)
    more = f"{chr(10) if phone else ', '}{V - k} more cells not drawn" if V > k else ""
    bars.set_title(f"ε = {epsilon:.2f}, V = {V}{more}\n"
                   f"correct word: 1 − ε + ε/V = {p[target_id]:.4f}\n"
                   f"each other word: ε/V = {epsilon / V:.4g}\n"
                   f"lowest possible loss: {entropy(p):.4f} nats", fontsize=10, loc="left")
    grid, label_y = np.linspace(0, 0.5, 26), -1.0
    curves = {size: [entropy(il.reference.smooth_labels([target_id], size, e)[0]) for e in grid]
              for size in sorted(sizes)}
    top = 1.08 * max(max(c) for c in curves.values())
    for size, curve in curves.items():
        floor.plot(grid, curve, color=kit.COLORS["text"] if size == V else _faint(size, sizes),
                   linewidth=2.2 if size == V else 1.2)
        label_y = max(curve[-1], label_y + 0.09 * top)  # a 9 pt line apart: labels never overlap
        floor.text(grid[-1] + 0.01, label_y, f"V = {size}", va="center", fontsize=9)
    floor.plot([epsilon], [entropy(p)], "o", color=kit.COLORS["chosen"], markersize=8)
    floor.set(xlim=(0, 0.7 if phone else 0.66), ylim=(0, max(top, label_y + 0.05 * top)))
    floor.set_xticks(np.arange(0, 0.51, 0.1))  # ε goes to 0.5; the room after it holds the labels
    floor.spines["bottom"].set_bounds(0, 0.5)
    floor.set_xlabel("ε", fontsize=10)
    floor.set_title(kit.wrap("lowest possible loss (the target's entropy), nats", 40 if phone
                             else 60), fontsize=10)
    floor.tick_params(labelsize=9)
    floor.spines[["top", "right"]].set_visible(False)
    return fig


def _faint(size: int, sizes) -> str:
    return plt.get_cmap(kit.palette.COLORMAPS["series"])(0.35 + 0.1 * list(sizes).index(size))
