"""Chapter 05, the order of the sequence: a vector per position added to the embeddings."""
from __future__ import annotations

from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

import illustrated as il

from . import kit

__all__ = ["OrderBlindness", "order_blindness", "draw_order_blindness", "draw_vectors",
           "draw_table", "draw_position", "LayoutComparison", "compare_layouts", "draw_shift"]


class OrderBlindness(NamedTuple):
    """Self-attention's output for two orders of the same words, without and with positions."""
    words_a: list[str]
    words_b: list[str]
    permutation: list[int]  # word j of b is word permutation[j] of a
    z_a: np.ndarray
    z_b: np.ndarray
    z_a_positions: np.ndarray
    z_b_positions: np.ndarray


def order_blindness(sentence_a: str, sentence_b: str, *, d_model: int = 8,
                    seed: int = 0) -> OrderBlindness:
    """Random embeddings and random W_Q, W_K, W_V: z of both sentences, without and with PE."""
    words_a, words_b = sentence_a.split(), sentence_b.split()
    left = list(enumerate(words_a))
    permutation = []
    for word in words_b:  # the first unused occurrence of each word of b in a
        i = next(k for k, (_, w) in enumerate(left) if w == word)
        permutation.append(left.pop(i)[0])
    rng = np.random.default_rng(seed)
    table = {w: rng.normal(size=d_model) for w in sorted(set(words_a))}
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
    pe = il.reference.positional_encoding(len(words_a), d_model)  # (seq, d_model)
    z = [il.reference.self_attention(np.stack([table[w] for w in words]) + extra,
                                     W_Q, W_K, W_V).z  # (seq, d_model)
         for extra in (0.0, pe) for words in (words_a, words_b)]
    return OrderBlindness(words_a, words_b, permutation, *z)


def draw_order_blindness(b: OrderBlindness, *, width: float = kit.DESKTOP_WIDTH_IN):
    """Self-attention outputs of both orders, without positions (top) and with them (bottom);
    in a phone's column the four panels one under another."""
    arrays = [b.z_a, b.z_b, b.z_a_positions, b.z_b_positions]
    scale = max(float(np.abs(a).max()) for a in arrays)
    phone = kit.narrow(width)
    fig, axes = plt.subplots(*((4, 1) if phone else (2, 2)),
                             figsize=(width, 8.0) if phone else (8, 4.6), dpi=kit.DPI,
                             layout="constrained")
    for ax, array, words, kind in zip(axes.ravel(), arrays, [b.words_a, b.words_b] * 2,
                                      ["no positions"] * 2 + ["with positions"] * 2):
        image = kit.heatmap(ax, array, row_labels=words, col_labels=[],
                            cmap=kit.DIVERGING_CMAP, vmin=-scale, vmax=scale)
        ax.set_title(f"'{' '.join(words)}', {kind}", fontsize=10)
        ax.set_xlabel("dimension of z", fontsize=9)
    kit.colorbar(fig, image, axes, label="value", below=phone)
    return fig


def draw_vectors(rows: dict, words, *, names=None, values: bool = False, vmax: float | None = None,
                 title: str = "", width: float = kit.DESKTOP_WIDTH_IN):
    """Vectors as strips of coloured cells: one row per kind, one column per word; in a phone's
    column each word's strips one under another, its name above them."""
    arrays = {label: np.asarray(a, dtype=np.float64) for label, a in rows.items()}
    scale = vmax or max(float(np.abs(a).max()) for a in arrays.values())
    norm = Normalize(-scale, scale)
    phone, kinds = kit.narrow(width), len(arrays)
    if phone:
        strip = 0.42 if values else 0.3
        height = len(words) * (0.3 + kinds * (strip + 0.08 + 0.2 * bool(names))) + 0.9
        fig = plt.figure(figsize=(width, height), dpi=kit.DPI, layout="constrained")
        grid = fig.add_gridspec(kinds * len(words), 1)
        axes = np.array([[fig.add_subplot(grid[i * kinds + r]) for i in range(len(words))]
                         for r in range(kinds)])  # axes[kind, word], as on the desktop
    else:
        fig, axes = plt.subplots(kinds, len(words), figsize=(8, 0.8 * kinds + 0.8),
                                 dpi=kit.DPI, squeeze=False, layout="constrained")
    for r, (label, array) in enumerate(arrays.items()):
        for i, word in enumerate(words):
            ax = axes[r, i]
            image = kit.heatmap(ax, array[i][None, :], row_labels=[], col_labels=[],
                                cmap=kit.DIVERGING_CMAP, norm=norm, annotate=values,
                                fmt=lambda v: kit.format_value(v, 4, trim_zeros=True),
                                fontsize=9)
            if r == 0:
                ax.set_title(word, fontsize=10, loc="left" if phone else "center",
                             fontweight="bold" if phone else "normal")
            if names is not None and label in names:
                ax.set_xlabel(names[label][i], fontsize=9)
            if phone or i == 0:
                ax.set_ylabel(label.replace("\n", " ") if phone else label, rotation=0,
                              ha="right", va="center", fontsize=9 if phone else 10)
    kit.colorbar(fig, image, axes, label="value", below=phone)
    if title:
        fig.suptitle(kit.wrap(title, 40) if phone else title, fontsize=10 if phone else 11)
    return fig


def _table(ax, pe, split: bool):
    n, d = pe.shape
    image = kit.heatmap(ax, pe, cmap=kit.DIVERGING_CMAP, vmin=-1, vmax=1)
    ax.set_yticks(range(0, n, 5 if n > 10 else 1))
    ax.tick_params(labelsize=9)
    ax.set_xlabel(f"dimension (0 to {d - 1})", fontsize=9)
    ax.set_ylabel("position", fontsize=9)
    if split:
        ax.axvline(d / 2 - 0.5, color=kit.COLORS["text"], linestyle="--", linewidth=1)
        for x, name in ((d / 4, "sin"), (3 * d / 4, "cos")):
            ax.text(x, -0.7, name, ha="center", va="bottom", fontsize=10)
    return image


def draw_table(pe, *, title: str, split: bool = False, windows=None,
               width: float = kit.DESKTOP_WIDTH_IN):
    """A positional table as a heatmap: one row per position, one column per dimension. With
    ``windows`` ((first, stop) column ranges) only those columns, one panel each, side by side
    (stacked in a phone's column): an interleaved table's neighbouring sine and cosine columns,
    512 of them in one picture, would blur into a moiré."""
    phone = kit.narrow(width)
    pe = np.asarray(pe)
    if not windows:
        fig, ax = plt.subplots(figsize=(width, 3.4), dpi=kit.DPI, layout="constrained")
        image = _table(ax, pe, split)
        ax.set_title(kit.wrap(title, 44) if phone else title, fontsize=10 if phone else 11,
                     pad=16 if split else 6)
        kit.colorbar(fig, image, ax, label="value", below=phone)
        return fig
    shape = (len(windows), 1) if phone else (1, len(windows))
    fig, axes = plt.subplots(*shape, figsize=(width, 2.6 * len(windows) + 0.6 if phone else 3.4),
                             dpi=kit.DPI, layout="constrained", squeeze=False)
    axes = axes.ravel()
    for ax, (first, stop) in zip(axes, windows):
        image = kit.heatmap(ax, pe[:, first:stop], cmap=kit.DIVERGING_CMAP, vmin=-1, vmax=1)
        n = pe.shape[0]
        ax.set_yticks(range(0, n, 5 if n > 10 else 1))
        ticks = range(0, stop - first, max(1, (stop - first) // 4))
        ax.set_xticks(ticks, [str(first + t) for t in ticks])
        ax.tick_params(labelsize=9)
        ax.set_xlabel(f"dimensions {first} to {stop - 1}", fontsize=9)
        ax.set_ylabel("position", fontsize=9)
    fig.suptitle(kit.wrap(title, 44) if phone else title, fontsize=10 if phone else 11)
    kit.colorbar(fig, image, list(axes), label="value", below=phone)
    return fig


def draw_position(pe, position: int, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The explorer of the models' (interleaved) table: row ``position`` framed in the heatmap,
    and drawn below as two curves over the frequencies, its sines (even dimensions) and its
    cosines (odd dimensions)."""
    pe = np.asarray(pe)
    n, d = pe.shape
    small = kit.narrow(width)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 5.4 if small else 4.6), dpi=kit.DPI,
                                      layout="constrained",
                                      gridspec_kw={"height_ratios": [1.1, 1]})
    image = kit.heatmap(top, pe, cmap=kit.DIVERGING_CMAP, vmin=-1, vmax=1)
    top.set_yticks(range(0, n, 5))
    top.tick_params(labelsize=9)
    top.set_xlabel(f"dimension (0 to {d - 1}): sin, cos, sin, cos, …", fontsize=9)
    top.set_ylabel("position", fontsize=9)
    top.add_patch(Rectangle((-0.5, position - 0.5), d, 1, fill=False, linewidth=2,
                            edgecolor="black"))
    bar = fig.colorbar(image, ax=top, orientation="horizontal" if small else "vertical",
                       fraction=0.08 if small else 0.04, pad=0.02)
    bar.set_ticks([-1, 0, 1])
    bar.ax.tick_params(labelsize=9)
    i = np.arange(d // 2)
    bottom.plot(i, pe[position, 0::2], color=kit.COLORS["query"], marker="o", ms=2.5, lw=1.2,
                label=r"$\sin(pos\,\omega_i)$, dimension $2i$")
    bottom.plot(i, pe[position, 1::2], color=kit.COLORS["key"], marker="o", ms=2.5, lw=1.2,
                label=r"$\cos(pos\,\omega_i)$, dimension $2i + 1$")
    # in a phone's column the legend, one entry a line, gets a band of its own below the curves
    bottom.set(xlim=(-0.5, d // 2 - 0.5), ylim=(-2.0 if small else -1.15, 1.15))
    bottom.set_yticks([-1, -0.5, 0, 0.5, 1])
    bottom.set_xlabel("frequency i: fast on the left, slow on the right", fontsize=9)
    bottom.set_ylabel("value", fontsize=9)
    bottom.tick_params(labelsize=9)
    bottom.legend(fontsize=9 if small else 8, frameon=False, loc="lower right", ncol=1 if small else 2)
    bottom.set_title(f"the vector added to the word at position {position}", fontsize=10)
    return fig


class LayoutComparison(NamedTuple):
    """tensor2tensor's table (the post's) beside the paper's, and how far apart they are."""
    concatenated: np.ndarray
    interleaved: np.ndarray
    regrouped: np.ndarray  # the paper's columns reordered as all sines, then all cosines
    frequencies_concatenated: np.ndarray
    frequencies_interleaved: np.ndarray
    max_difference: float  # max |concatenated - regrouped|
    worst_column_match: float  # the post column farthest from every column of the paper's


def compare_layouts(n_positions: int = 20, d_model: int = 512) -> LayoutComparison:
    """Both layouts of the sinusoids, and whether one is a column permutation of the other."""
    concatenated = il.reference.positional_encoding(n_positions, d_model, "concatenated")
    interleaved = il.reference.positional_encoding(n_positions, d_model, "interleaved")
    regrouped = np.concatenate([interleaved[:, 0::2], interleaved[:, 1::2]], axis=1)
    closest = [np.abs(interleaved - column[:, None]).max(axis=0).min()  # column (n, 1)
               for column in concatenated.T]
    return LayoutComparison(concatenated, interleaved, regrouped,
                            il.reference.positional_frequencies(d_model, "concatenated"),
                            il.reference.positional_frequencies(d_model, "interleaved"),
                            float(np.abs(concatenated - regrouped).max()), float(max(closest)))


def draw_shift(k: int, position: int, d_model: int = 16, *,
               width: float = kit.DESKTOP_WIDTH_IN):
    """M_k, PE(pos), M_k PE(pos) and PE(pos + k) of the interleaved layout; in a phone's
    column M_k above the three vectors."""
    M = il.reference.relative_position_matrix(k, d_model)  # (d_model, d_model)
    pe = il.reference.positional_encoding(position + k + 1, d_model)  # (position + k + 1, d_model)
    columns = {f"PE({position})": pe[position], f"M_{k} PE({position})": M @ pe[position],
               f"PE({position + k})": pe[position + k]}
    if kit.narrow(width):
        fig = plt.figure(figsize=(width, 7.4), dpi=kit.DPI, layout="constrained")
        grid = fig.add_gridspec(2, 3, height_ratios=[1, 1.15])
        axes = [fig.add_subplot(grid[0, :])] + [fig.add_subplot(grid[1, i]) for i in range(3)]
    else:
        fig, axes = plt.subplots(1, 4, figsize=(8, 4.2), dpi=kit.DPI, layout="constrained",
                                 gridspec_kw={"width_ratios": [4, 1, 1, 1]})
    kit.heatmap(axes[0], M, cmap=kit.DIVERGING_CMAP, vmin=-1, vmax=1, aspect="equal")
    axes[0].set_title(f"M_{k}: depends on k = {k} only", fontsize=10)
    axes[0].tick_params(labelsize=9 if kit.narrow(width) else 8)
    for ax, (name, vector) in zip(axes[1:], columns.items()):
        kit.heatmap(ax, vector[:, None], row_labels=[], col_labels=[], cmap=kit.DIVERGING_CMAP,
                    vmin=-1, vmax=1, annotate=True, fmt=lambda v: kit.format_value(v, 2),
                    fontsize=9 if kit.narrow(width) else kit.MIN_FONT_PT)
        ax.set_title(name, fontsize=9 if kit.narrow(width) else 10)
    return fig
