"""Probability distributions over the output vocabulary, drawn as cells and bar charts.

Arrays and labels in, Figure out; nothing here computes (the numbers come from
:mod:`illustrated.explain.loss` or :mod:`illustrated.reference`).

References: post "Recap Of Training" and "The Loss Function"; paper §5.4.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.patches import Rectangle

from .style import COLORS

__all__ = ["plot_vocabulary", "plot_one_hot", "plot_distributions", "update_distributions"]

_ROW_COLORS = (COLORS["value"], COLORS["input"], COLORS["key"], COLORS["query"])


def _check_tokens(tokens: Sequence[str]) -> list[str]:
    if isinstance(tokens, str) or not len(tokens) or not all(isinstance(t, str) for t in tokens):
        raise ValueError(f"tokens: expected a non-empty list of words, got {tokens!r}")
    return list(tokens)


def _draw_table(ax, row_labels: Sequence[str], cells: Sequence[Sequence[str]],
                colors: Sequence[Sequence[str]]) -> None:
    """Rows of labelled cells, the first row on top; one text per cell, plus the row labels."""
    n_rows, n_cols = len(cells), len(cells[0])
    for r, (label, texts, fills) in enumerate(zip(row_labels, cells, colors)):
        y = n_rows - 1 - r
        ax.text(-0.15, y + 0.5, label, ha="right", va="center", fontsize=10,
                fontweight="bold", color=COLORS["text"])
        for c, (text, fill) in enumerate(zip(texts, fills)):
            ax.add_patch(Rectangle((c, y), 1, 1, facecolor=fill, edgecolor="white", linewidth=2))
            ax.text(c + 0.5, y + 0.5, text, ha="center", va="center", fontsize=11,
                    color=COLORS["text"])
    ax.set_xlim(-1.6, n_cols + 0.05)
    ax.set_ylim(-0.05, n_rows + 0.05)
    ax.set_aspect("equal")
    ax.axis("off")


def plot_vocabulary(tokens: Sequence[str], *, ids: Sequence[int] | None = None,
                    title: str = "output vocabulary") -> Figure:
    """The output vocabulary: every word the model can output, with its index.

    Parameters
    ----------
    tokens : words, in vocabulary order.   ids : their indexes (default 0, 1, ...).
    title : axes title.

    Returns
    -------
    Figure with one axes: a row "word" and a row "index", one cell per word (texts: the row
    labels, then word/index per cell).

    Shapes
    ------
    tokens (vocab,); ids (vocab,).

    Raises
    ------
    ValueError
        If ``tokens`` is empty or ``ids`` does not have one index per word.

    References
    ----------
    Post "Recap Of Training" (the output vocabulary: a, am, i, thanks, student, <eos>).
    """
    tokens = _check_tokens(tokens)
    ids = list(range(len(tokens))) if ids is None else list(ids)
    if len(ids) != len(tokens):
        raise ValueError(f"ids: expected {len(tokens)} indexes, one per word, got {len(ids)}")
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(tokens), 1.9), constrained_layout=True)
    _draw_table(ax, ["word", "index"], [tokens, [str(i) for i in ids]],
                [[COLORS["decoder"]] * len(tokens), [COLORS["output"]] * len(tokens)])
    ax.set_title(title)
    return fig


def plot_one_hot(tokens: Sequence[str], vector: Sequence[float], *,
                 title: str = "one-hot encoding") -> Figure:
    """One-hot encoding: a vector as wide as the vocabulary, 1 in the word's cell, 0 elsewhere.

    Parameters
    ----------
    tokens : the vocabulary's words.   vector : one value per word (0s and one 1).
    title : axes title.

    Returns
    -------
    Figure with one axes: a row of words and a row of values; cells holding a non-zero value
    are coloured.

    Shapes
    ------
    tokens (vocab,); vector (vocab,).

    Raises
    ------
    ValueError
        If ``vector`` does not have one value per word.

    References
    ----------
    Post "Recap Of Training" (one-hot encoding of "am").
    """
    tokens = _check_tokens(tokens)
    values = np.asarray(vector, dtype=float)
    if values.shape != (len(tokens),):
        raise ValueError(f"vector: expected shape ({len(tokens)},), one value per word, "
                         f"got {values.shape}")
    fills = [COLORS["z"] if v else "#eceff1" for v in values]
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(tokens), 1.9), constrained_layout=True)
    _draw_table(ax, ["word", "value"], [tokens, [f"{v:g}" for v in values]],
                [[COLORS["decoder"]] * len(tokens), fills])
    ax.set_title(title)
    return fig


def plot_distributions(rows: Mapping[str, object], tokens: Sequence[str], *,
                       position_labels: Sequence[str] | None = None,
                       highlight: Sequence[int] | None = None, annotate: bool = False,
                       log: bool = False, ylim: tuple[float, float] | None = None,
                       title: str = "", fig: Figure | None = None) -> Figure:
    """Probability distributions over the vocabulary as bar charts, several positions side by side.

    One row of axes per entry of ``rows`` (e.g. "model output", "target"), one column per
    position. In every axes the bar of the ``highlight`` word of that position (the target) is
    drawn with a thick black edge and its tick label in bold.

    Parameters
    ----------
    rows : {row label: array (n_positions, vocab) or (vocab,)}, in display order.
    tokens : the vocabulary's words (x axis).
    position_labels : one column title per position (e.g. the target words).
    highlight : one word id per position, or None.
    annotate : write each bar's height above it (2 decimals).
    log : logarithmic y axis, to see the small probabilities.
    ylim : y-axis limits (default (0, 1.05), or (1e-6, 1.5) with ``log``).   title : figure title.
    fig : draw into this figure (cleared first) instead of a new one; for players.

    Returns
    -------
    Figure with ``len(rows) * n_positions`` axes, row by row; axes (r, p) holds one bar per
    word, heights ``rows[r][p]``.

    Shapes
    ------
    each row (n_positions, vocab); tokens (vocab,); position_labels, highlight (n_positions,).

    Raises
    ------
    ValueError
        If ``rows`` is empty, an array's last axis is not ``len(tokens)``, rows have different
        numbers of positions, or ``position_labels``/``highlight`` have the wrong length.

    References
    ----------
    Post "The Loss Function" (untrained output vs target; target and trained distributions).
    """
    tokens = _check_tokens(tokens)
    if not rows:
        raise ValueError("rows: expected at least one row of distributions, got none")
    arrays = {}
    for label, values in rows.items():
        a = np.atleast_2d(np.asarray(values, dtype=float))  # (n_positions, vocab)
        if a.ndim != 2 or a.shape[1] != len(tokens):
            raise ValueError(f"rows: {label!r} has shape {a.shape}, expected (n_positions, "
                             f"{len(tokens)}) to match the {len(tokens)} tokens")
        arrays[label] = a
    n_pos = {a.shape[0] for a in arrays.values()}
    if len(n_pos) != 1:
        raise ValueError(f"rows: expected the same number of positions in every row, got {n_pos}")
    n_pos = n_pos.pop()
    for name, seq in (("position_labels", position_labels), ("highlight", highlight)):
        if seq is not None and len(seq) != n_pos:
            raise ValueError(f"{name}: expected {n_pos} entries, one per position, got {len(seq)}")
    if ylim is None:
        ylim = (1e-6, 1.5) if log else (0.0, 1.05)
    n_rows = len(arrays)
    fig = fig if fig is not None else plt.figure()
    fig.clear()  # the figure's size is this function's, also in a player's figure
    fig.set_size_inches(0.4 + min(2.2, 0.26 * len(tokens) + 0.3, 7.6 / n_pos) * n_pos,
                        0.6 + 2.1 * n_rows)
    fig.set_layout_engine("constrained")
    axes = fig.subplots(n_rows, n_pos, squeeze=False, sharey=True)
    x = np.arange(len(tokens))
    for r, (label, a) in enumerate(arrays.items()):
        color = _ROW_COLORS[r % len(_ROW_COLORS)]
        for p in range(n_pos):
            ax = axes[r, p]
            bars = ax.bar(x, a[p], color=color, width=0.75)
            if highlight is not None:
                bars[highlight[p]].set_edgecolor("black")
                bars[highlight[p]].set_linewidth(2.0)
            if annotate:
                for xi, h in zip(x, a[p]):
                    ax.text(xi, h + 0.02 * (ylim[1] - ylim[0]), f"{h:.2f}", ha="center",
                            va="bottom", fontsize=8, rotation=90)
            ax.set_xticks(x)
            ax.set_xticklabels(tokens, rotation=90, fontsize=8)
            if highlight is not None:
                ax.get_xticklabels()[highlight[p]].set_fontweight("bold")
            if log:
                ax.set_yscale("log")
            ax.set_ylim(*ylim)
            ax.spines[["top", "right"]].set_visible(False)
            if p == 0:
                ax.set_ylabel(label, fontsize=9)
            if r == 0 and position_labels is not None:
                ax.set_title(position_labels[p], fontsize=10)
    if title:
        fig.suptitle(title)
    return fig


def update_distributions(fig: Figure, rows: Mapping[str, object]) -> Figure:
    """New distributions in a figure drawn by :func:`plot_distributions`: only the bars move.

    Sets the bar heights (and the value texts, if the figure was annotated) and the row labels;
    axes, ticks and highlights stay. Much faster than redrawing, for players. The first call
    freezes the figure's layout where it is, so that later frames do not recompute it.

    Parameters
    ----------
    fig : a Figure returned by :func:`plot_distributions`.
    rows : {row label: array (n_positions, vocab)}, as many rows and positions as the figure.

    Returns
    -------
    The same Figure.

    Shapes
    ------
    each row (n_positions, vocab), matching the figure's axes and bars.

    Raises
    ------
    ValueError
        If the rows do not match the figure's grid of axes or its number of bars.

    References
    ----------
    Post "The Loss Function" (the distributions sharpen as training goes on).
    """
    axes = fig.axes
    arrays = [np.atleast_2d(np.asarray(v, dtype=float)) for v in rows.values()]  # (n_positions, vocab) each
    n_pos = arrays[0].shape[0] if arrays else 0
    if not arrays or len(axes) != len(arrays) * n_pos:
        raise ValueError(f"rows: expected {len(axes)} distributions in all, one per axes of the "
                         f"figure, got {sum(a.shape[0] for a in arrays)}")
    engine = fig.get_layout_engine()
    if engine is not None and not isinstance(engine, PlaceHolderLayoutEngine):
        fig.draw_without_rendering()  # let the layout engine place the axes once
        fig.set_layout_engine("none")
    for r, (label, a) in enumerate(zip(rows, arrays)):
        for p in range(n_pos):
            ax = axes[r * n_pos + p]
            bars = ax.patches
            if a.shape != (n_pos, len(bars)):
                raise ValueError(f"rows: {label!r} has shape {a.shape}, expected "
                                 f"({n_pos}, {len(bars)}) like the figure")
            span = ax.get_ylim()[1] - ax.get_ylim()[0]
            for i, (bar, h) in enumerate(zip(bars, a[p])):
                bar.set_height(h)
                if len(ax.texts) == len(bars):
                    ax.texts[i].set_text(f"{h:.2f}")
                    ax.texts[i].set_y(h + 0.02 * span)
            if p == 0:
                ax.set_ylabel(label, fontsize=9)
    return fig
