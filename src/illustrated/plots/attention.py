"""Attention drawn two ways, plus the softmax pictures of the scaling argument.

* :func:`plot_word_attention` / :func:`plot_word_attention_panels`: the tensor2tensor picture
  the post uses: the sentence twice, side by side; lines from one word on the left to every word
  on the right, as strong as its attention weight, and shading behind the right-hand words; one
  colour per head.
* :func:`plot_attention_heatmaps`: weight matrices as heatmaps, one panel per head (or layer).
* :func:`plot_scaled_softmax`: scores, scores / √d_k and their softmax as bars (the post's 112,
  96 → 14, 12 → 0.88, 0.12).
* :func:`plot_saturation`: why the scaling matters: a random query's softmax with and without
  it, and averages over d_k.

Arrays and labels in, Figure out; nothing here computes a softmax or a product. Artists carry
``gid`` names so that tests can read what was drawn.

References: post "Self-Attention at a High Level", "Self-Attention in Detail", "The Beast With
Many Heads"; paper §3.2.1 (and footnote 4), §3.2.2.
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .primitives import colorbar, heatmap, write_values
from .style import CMAP, COLORS

#: Narrowest heatmap cell, inches, whose value :func:`plot_attention_heatmaps` writes in it.
MIN_CELL_IN = 0.36

__all__ = ["HEAD_COLORS", "head_colors", "plot_word_attention", "plot_word_attention_panels",
           "plot_attention_heatmaps", "plot_scaled_softmax", "plot_saturation"]

_INK = COLORS["text"]

HEAD_COLORS = ("#26a69a", "#ec407a", "#8d6e63", "#afb42b", "#5c6bc0", "#78909c", "#ffb300",
               "#00acc1")
"""Colours of the heads: distinct from the post's input/query/key/value colours."""


def head_colors(n_heads: int) -> list[str]:
    """One colour per attention head, as tensor2tensor's visualisation gives each head its own.

    Parameters
    ----------
    n_heads : int
        Number of heads (1 or more; colours repeat after 8).

    Returns
    -------
    list of str
        Hex colours from :data:`HEAD_COLORS`, repeated after 8 heads.

    Shapes
    ------
    ``n_heads`` colours.

    Raises
    ------
    ValueError
        If ``n_heads`` < 1.

    References
    ----------
    Post "The Beast With Many Heads" (the coloured heads of the visualisation).
    """
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise ValueError(f"n_heads: expected a positive integer, got {n_heads!r}")
    return [HEAD_COLORS[h % len(HEAD_COLORS)] for h in range(n_heads)]


def _head_weights(weights: object, seq: int, name: str = "weights") -> np.ndarray:
    array = np.asarray(weights, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]  # (1, seq)
    if array.ndim != 2 or array.shape[1] != seq:
        raise ValueError(f"{name}: expected shape (n_heads, {seq}) or ({seq},), got "
                         f"{np.shape(weights)}")
    if np.any(array < -1e-9) or np.any(array > 1 + 1e-9):
        raise ValueError(f"{name}: expected attention weights in [0, 1], got values from "
                         f"{array.min():.3g} to {array.max():.3g}")
    return np.clip(array, 0.0, 1.0)


def _draw_word_attention(ax: Axes, tokens: Sequence[str], weights: np.ndarray, query: int,
                         colors: Sequence[str], title: str, prefix: str) -> None:
    """One tensor2tensor-style panel into ``ax``; gids start with ``prefix``."""
    seq = len(tokens)
    n_heads = weights.shape[0]
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(seq - 0.4, -0.8)
    ax.axis("off")
    x_left, x_right, stripe = 0.30, 0.70, 0.26 / n_heads
    for i, token in enumerate(tokens):
        bold = "bold" if i == query else "normal"
        ax.text(x_left, i, token, ha="right", va="center", fontsize=10, color=_INK,
                fontweight=bold, gid=f"{prefix}left-{i}")
        ax.text(x_right + 0.01, i, token, ha="left", va="center", fontsize=10, color=_INK,
                gid=f"{prefix}right-{i}", zorder=3)
        for h in range(n_heads):
            # One stripe per head behind the right-hand word, as dark as the head's weight.
            ax.add_patch(Rectangle((x_right + h * stripe, i - 0.42), stripe, 0.84,
                                   facecolor=colors[h], alpha=float(weights[h, i]),
                                   edgecolor="none", gid=f"{prefix}shade-{h}-{i}", zorder=1))
    ax.add_patch(Rectangle((0.0, query - 0.45), x_left + 0.01, 0.9, facecolor="#eceff1",
                           edgecolor="none", gid=f"{prefix}query", zorder=0))
    for h in range(n_heads):
        for i in range(seq):
            ax.plot([x_left + 0.015, x_right - 0.01], [query, i], color=colors[h],
                    alpha=float(weights[h, i]), linewidth=1.0 + 3.0 * float(weights[h, i]),
                    solid_capstyle="round", gid=f"{prefix}line-{h}-{i}", zorder=2)
    if title:
        ax.set_title(title, fontsize=10, color=_INK)


def _legend(ax: Axes, labels: Sequence[str], colors: Sequence[str]) -> None:
    handles = [plt.Line2D([], [], color=c, linewidth=3) for c in colors]
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
              ncol=min(2, len(labels)), fontsize=8)


def plot_word_attention_panels(tokens: Sequence[Sequence[str]], weights: Sequence[object],
                               queries: Sequence[int], *, titles: Sequence[str] | None = None,
                               head_labels: Sequence[str] | None = None,
                               colors: Sequence[str] | None = None, ncols: int | None = None,
                               suptitle: str = "", fig: Figure | None = None) -> Figure:
    """Several word-attention pictures side by side (one per sentence, layer or head).

    Parameters
    ----------
    tokens : sequence of token lists
        The words of each panel's sentence.
    weights : sequence of array_like
        Each panel's weights of the query word, (n_heads, seq) or (seq,) for a single head;
        every panel must have the same number of heads.
    queries : sequence of int
        Position of the query word in each panel.
    titles : sequence of str, optional
        One title per panel.
    head_labels : sequence of str, optional
        A legend label per head (e.g. "layer 1, head 3"); no legend by default.
    colors : sequence of str, optional
        A colour per head; default :func:`head_colors`.
    ncols : int, optional
        Panels per row; default all in one row.
    suptitle : str, optional
        Title of the whole figure.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes per panel. In panel p, the words are texts ``"p/left-i"`` and ``"p/right-i"``,
        the lines ``"p/line-h-i"`` (head h to word i; alpha = weight) and the shading
        ``"p/shade-h-i"`` (alpha = weight).

    Shapes
    ------
    ``weights[p]`` (n_heads, len(tokens[p])) or (len(tokens[p]),).

    Raises
    ------
    ValueError
        If the lists differ in length, are empty, a query is out of range, weights are not in
        [0, 1] or do not fit the tokens, head counts differ, or labels/colours do not match the
        heads.

    References
    ----------
    Post "Self-Attention at a High Level" and "The Beast With Many Heads"; tensor2tensor's
    attention visualisation.
    """
    n = len(tokens)
    if n == 0 or len(weights) != n or len(queries) != n:
        raise ValueError(f"tokens, weights, queries: expected the same non-zero number of panels, "
                         f"got {n}, {len(weights)}, {len(queries)}")
    if titles is not None and len(titles) != n:
        raise ValueError(f"titles: expected {n} titles, got {len(titles)}")
    panels = []
    for p in range(n):
        words = [str(t) for t in tokens[p]]
        if not words:
            raise ValueError(f"tokens[{p}]: expected at least one word, got none")
        w = _head_weights(weights[p], len(words), f"weights[{p}]")
        if not 0 <= int(queries[p]) < len(words):
            raise ValueError(f"queries[{p}]: expected a position in [0, {len(words)}), "
                             f"got {queries[p]}")
        panels.append((words, w, int(queries[p])))
    n_heads = panels[0][1].shape[0]
    if any(w.shape[0] != n_heads for _, w, _ in panels):
        raise ValueError(f"weights: expected {n_heads} heads in every panel, got "
                         f"{[w.shape[0] for _, w, _ in panels]}")
    colors = list(colors) if colors is not None else head_colors(n_heads)
    if len(colors) != n_heads:
        raise ValueError(f"colors: expected {n_heads} colours (one per head), got {len(colors)}")
    if head_labels is not None and len(head_labels) != n_heads:
        raise ValueError(f"head_labels: expected {n_heads} labels, got {len(head_labels)}")
    ncols = n if ncols is None else max(1, min(int(ncols), n))
    ncols = min(ncols, 2)  # 3.2 in per panel: two fit the page's content width
    nrows = -(-n // ncols)
    seq = max(len(words) for words, _, _ in panels)
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    legend_h = 0.25 * -(-n_heads // 2) + 0.15 if head_labels is not None else 0.0
    fig.set_size_inches(3.2 * ncols, (0.27 * seq + 0.7 + legend_h) * nrows + (0.3 if suptitle
                                                                               else 0))
    for p, (words, w, query) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, p + 1)
        _draw_word_attention(ax, words, w, query, colors, titles[p] if titles else "", f"{p}/")
        if head_labels is not None:
            _legend(ax, head_labels, colors)
    if suptitle:
        fig.suptitle(suptitle, fontsize=11, color=_INK)
    fig.tight_layout()
    return fig


def plot_word_attention(tokens: Sequence[str], weights: object, query: int, *, title: str = "",
                        head_labels: Sequence[str] | None = None,
                        colors: Sequence[str] | None = None, fig: Figure | None = None) -> Figure:
    """Where one word looks: lines from it to every word of the sentence, one colour per head.

    The picture of the post (from tensor2tensor): the sentence on the left and again on the
    right; the query word (e.g. "it") on the left is joined to each word on the right by a line
    whose opacity and width follow the attention weight, and each right-hand word is shaded by
    it, in a stripe per head.

    Parameters
    ----------
    tokens : sequence of str
        The sentence's words.
    weights : array_like
        The query word's attention weights, (n_heads, seq), or (seq,) for one head.
    query : int
        Position of the query word.
    title : str, optional
        Axes title.
    head_labels : sequence of str, optional
        Legend labels, one per head.
    colors : sequence of str, optional
        A colour per head; default :func:`head_colors`.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        As :func:`plot_word_attention_panels` with one panel (gids start with ``"0/"``).

    Shapes
    ------
    ``weights`` (n_heads, seq) or (seq,).

    Raises
    ------
    ValueError
        As :func:`plot_word_attention_panels`.

    References
    ----------
    Post "Self-Attention at a High Level" (as the model encodes "it", part of its attention
    is on "The Animal").
    """
    return plot_word_attention_panels([tokens], [weights], [query],
                                      titles=[title] if title else None, head_labels=head_labels,
                                      colors=colors, fig=fig)


def plot_attention_heatmaps(weights: object, row_labels: Sequence[str],
                            col_labels: Sequence[str], *, titles: Sequence[str] | None = None,
                            ncols: int | None = None, annotate: bool | None = None,
                            cmap: str = CMAP, vmin: float = 0.0, vmax: float = 1.0,
                            xlabel: str = "key (attended to)", ylabel: str = "query",
                            suptitle: str = "", fig: Figure | None = None) -> Figure:
    """Attention weights as heatmaps, one panel per head: row = the word looking, column = the word looked at.

    Parameters
    ----------
    weights : array_like
        One matrix per panel, (n_panels, n_rows, n_cols), or a single (n_rows, n_cols) matrix.
    row_labels : sequence of str
        Labels of the rows (queries).
    col_labels : sequence of str, or one sequence per panel
        Labels of the columns (keys), shared by all panels or given panel by panel (e.g. two
        sentences that differ in one word).
    titles : sequence of str, optional
        One title per panel.
    ncols : int, optional
        Panels per row; default up to 4.
    annotate : bool, optional
        Write the values in the cells (:func:`~illustrated.plots.primitives.format_value`, 2
        decimals), in ink or white for contrast; by default when the laid-out cells are at
        least ``MIN_CELL_IN`` inches wide, room for "0.00" at 8 pt with a gap.
    cmap : str
        Colour map; default the book's sequential map.
    vmin, vmax : float
        Colour scale limits (default 0 and 1, the range of attention weights).
    xlabel, ylabel : str
        Axis labels.
    suptitle : str, optional
        Title of the whole figure.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes per panel, each with one image (``ax.images[0].get_array()`` is the matrix)
        and, when annotated, the values as texts; then one colour bar axes.

    Shapes
    ------
    ``weights`` (n_panels, n_rows, n_cols) or (n_rows, n_cols).

    Raises
    ------
    ValueError
        If ``weights`` is not 2-D/3-D, labels do not match it, ``titles`` has the wrong length
        or ``vmin >= vmax``.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    array = np.asarray(weights, dtype=np.float64)
    if array.ndim == 2:
        array = array[None]  # (1, n_rows, n_cols)
    if array.ndim != 3 or 0 in array.shape:
        raise ValueError(f"weights: expected (n_panels, n_rows, n_cols) or (n_rows, n_cols), "
                         f"got shape {np.shape(weights)}")
    n, rows, cols = array.shape
    per_panel = len(col_labels) > 0 and not isinstance(col_labels[0], str)
    col_lists = [list(c) for c in col_labels] if per_panel else [list(col_labels)] * n
    if len(row_labels) != rows or len(col_lists) != n or any(len(c) != cols for c in col_lists):
        raise ValueError(f"row_labels, col_labels: expected {rows} row labels and {cols} column "
                         f"labels (or {n} lists of them), got {len(row_labels)} and "
                         f"{[len(c) for c in col_lists] if per_panel else len(col_labels)}")
    if titles is not None and len(titles) != n:
        raise ValueError(f"titles: expected {n} titles, got {len(titles)}")
    if not vmin < vmax:
        raise ValueError(f"vmin, vmax: expected vmin < vmax, got {vmin}, {vmax}")
    ncols = min(n, 4) if ncols is None else max(1, min(int(ncols), n))
    nrows = -(-n // ncols)
    side = min(0.32 * max(rows, cols) + 1.3, 7.2 / ncols)  # fits the content width
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(side * ncols + 0.8, side * nrows + (0.4 if suptitle else 0.1))
    fig.set_layout_engine("constrained")
    axes = [fig.add_subplot(nrows, ncols, p + 1) for p in range(n)]
    image = None
    for p, ax in enumerate(axes):
        image = heatmap(ax, array[p], row_labels=row_labels, col_labels=col_lists[p], cmap=cmap,
                        vmin=vmin, vmax=vmax, label_fontsize=8, col_rotation=90, aspect="equal")
        if p % ncols == 0:
            ax.set_ylabel(ylabel, fontsize=8)
        if p >= n - ncols:
            ax.set_xlabel(xlabel, fontsize=8)
        if titles is not None:
            ax.set_title(titles[p], fontsize=9, color=_INK)
    if suptitle:
        fig.suptitle(suptitle, fontsize=11, color=_INK)
    colorbar(fig, image, axes)  # lays the figure out: the cells have their final size now
    if annotate is None:
        cell = axes[0].get_position().width * fig.get_figwidth() / cols  # inches
        annotate = cell >= MIN_CELL_IN
    if annotate:
        for ax in axes:
            write_values(ax, ax.images[0])
    return fig


def _bars(ax: Axes, labels: Sequence[str], values: np.ndarray, color: str, title: str,
          gid: str, decimals: int, ylim: tuple[float, float] | None = None) -> None:
    bars = ax.bar(range(len(values)), values, color=color, edgecolor="white")
    for j, (bar, value) in enumerate(zip(bars, values)):
        bar.set_gid(f"{gid}-{j}")
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), f"{value:.{decimals}f}",
                ha="center", va="bottom", fontsize=9, color=_INK, gid=f"{gid}-value-{j}")
    ax.set_xticks(range(len(values)), list(labels), fontsize=9)
    ax.set_title(title, fontsize=10, color=_INK)
    ax.spines[["top", "right"]].set_visible(False)
    if ylim is not None:
        ax.set_ylim(*ylim)
    else:
        top = float(np.max(values)) if len(values) else 1.0
        bottom = min(0.0, float(np.min(values)))
        ax.set_ylim(bottom * 1.15, max(top * 1.18, 1e-9))


def plot_scaled_softmax(labels: Sequence[str], scores: object, scaled: object, weights: object,
                        d_k: int, *, fig: Figure | None = None) -> Figure:
    """Steps two to four for one word: the scores, the scores divided by √d_k, and their softmax.

    Parameters
    ----------
    labels : sequence of str
        One label per key (e.g. "q1·k1", "q1·k2").
    scores, scaled, weights : array_like
        The scores, the scaled scores and the softmax weights (computed by the caller).
    d_k : int
        The key dimension, written in the middle title.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        Three axes with bar charts; bars have gids ``"score-j"``, ``"scaled-j"``,
        ``"softmax-j"`` and their heights are the values.

    Shapes
    ------
    ``scores``, ``scaled``, ``weights`` (n,), ``labels`` length n.

    Raises
    ------
    ValueError
        If the arrays are not 1-D of the same length as ``labels``.

    References
    ----------
    Post "Self-Attention in Detail" (steps two to four); paper §3.2.1.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in (scores, scaled, weights)]
    n = len(labels)
    if n == 0 or any(a.shape != (n,) for a in arrays):
        raise ValueError(f"scores, scaled, weights: expected 1-D arrays of {n} values (one per "
                         f"label), got shapes {[a.shape for a in arrays]}")
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(8.0, 2.8)
    axes = fig.subplots(1, 3)
    _bars(axes[0], labels, arrays[0], COLORS["key"], "step 2: score = q · k", "score", 1)
    _bars(axes[1], labels, arrays[1], COLORS["query"], f"step 3: score / √d_k  (d_k = {d_k})",
          "scaled", 2)
    _bars(axes[2], labels, arrays[2], COLORS["value"], "step 4: softmax", "softmax", 3,
          ylim=(0.0, 1.15))
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.12, top=0.88, wspace=0.3)
    return fig


def plot_saturation(example_unscaled: object, example_scaled: object, d_k: int,
                    curve_d_k: object, score_variance: object, max_weight_unscaled: object,
                    max_weight_scaled: object, gradient_unscaled: object,
                    gradient_scaled: object, *, fig: Figure | None = None) -> Figure:
    """Why the scores are divided by √d_k: without it the softmax saturates as d_k grows.

    Four panels: (a) one random query's softmax over its keys, unscaled and scaled, at the
    current ``d_k``; (b) the variance of q · k against d_k (the paper's footnote: it is d_k);
    (c) the mean largest softmax weight (1 = all attention on one word); (d) the mean size of
    the softmax's gradient (its Jacobian's norm; near 0 = vanishing gradients). A dotted line
    marks the current ``d_k`` in (b)-(d).

    Parameters
    ----------
    example_unscaled, example_scaled : array_like
        The example query's softmax weights without and with the scaling, (n_keys,).
    d_k : int
        The current key dimension.
    curve_d_k : array_like
        The key dimensions of the curves, (m,), positive.
    score_variance, max_weight_unscaled, max_weight_scaled, gradient_unscaled, gradient_scaled : array_like
        The curves (see :class:`illustrated.explain.attention.SaturationCurve`), (m,) each.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        Four axes; in (a) bars with gids ``"unscaled-j"`` and ``"scaled-j"``; in (b)-(d)
        lines with gids ``"variance"``, ``"d_k"``, ``"max-unscaled"``, ``"max-scaled"``,
        ``"grad-unscaled"``, ``"grad-scaled"`` and the marker lines ``"current-b"``,
        ``"current-c"``, ``"current-d"``.

    Shapes
    ------
    ``example_*`` (n_keys,); curves (m,).

    Raises
    ------
    ValueError
        If the shapes do not match or a d_k is not positive.

    References
    ----------
    Post "Self-Attention in Detail" ("more stable gradients"); paper §3.2.1 and footnote 4.
    """
    unscaled = np.asarray(example_unscaled, dtype=np.float64)
    scaled = np.asarray(example_scaled, dtype=np.float64)
    if unscaled.ndim != 1 or unscaled.shape != scaled.shape or unscaled.size == 0:
        raise ValueError(f"example_unscaled, example_scaled: expected two 1-D arrays of the same "
                         f"length, got {unscaled.shape} and {scaled.shape}")
    x = np.asarray(curve_d_k, dtype=np.float64)
    curves = [np.asarray(c, dtype=np.float64) for c in
              (score_variance, max_weight_unscaled, max_weight_scaled, gradient_unscaled,
               gradient_scaled)]
    if x.ndim != 1 or x.size == 0 or np.any(x <= 0) or any(c.shape != x.shape for c in curves):
        raise ValueError(f"curve_d_k and the curves: expected 1-D arrays of the same length with "
                         f"positive d_k, got {x.shape} and {[c.shape for c in curves]}")
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(8.0, 5.6)
    (a, b), (c, d) = fig.subplots(2, 2)
    n_keys = unscaled.size
    positions = np.arange(n_keys)
    for offset, values, color, name in ((-0.2, unscaled, "#90a4ae", "unscaled"),
                                        (0.2, scaled, COLORS["query"], "scaled")):
        bars = a.bar(positions + offset, values, width=0.4, color=color,
                     label="softmax(q·k)" if name == "unscaled" else "softmax(q·k / √d_k)")
        for j, bar in enumerate(bars):
            bar.set_gid(f"{name}-{j}")
    a.set_xticks(positions, [f"k{j + 1}" for j in range(n_keys)], fontsize=8)
    a.set_ylim(0, 1.05)
    a.set_title(f"(a) one random query, d_k = {d_k}", fontsize=10, color=_INK)
    a.legend(fontsize=8, frameon=False, loc="upper right")
    b.loglog(x, curves[0], "o-", color=COLORS["key"], label="variance of q·k", gid="variance")
    b.loglog(x, x, ":", color=_INK, label="d_k (paper's footnote)", gid="d_k")
    b.set_title("(b) the scores spread out", fontsize=10, color=_INK)
    c.semilogx(x, curves[1], "o-", color="#90a4ae", label="unscaled", gid="max-unscaled")
    c.semilogx(x, curves[2], "o-", color=COLORS["query"], label="scaled by √d_k",
               gid="max-scaled")
    c.set_ylim(0, 1.05)
    c.set_title("(c) mean largest softmax weight", fontsize=10, color=_INK)
    d.semilogx(x, curves[3], "o-", color="#90a4ae", label="unscaled", gid="grad-unscaled")
    d.semilogx(x, curves[4], "o-", color=COLORS["query"], label="scaled by √d_k",
               gid="grad-scaled")
    d.set_ylim(bottom=0)
    d.set_title("(d) mean size of the softmax's gradient", fontsize=10, color=_INK)
    for ax, tag in ((b, "b"), (c, "c"), (d, "d")):
        ax.axvline(d_k, color=_INK, linestyle="--", linewidth=0.8, gid=f"current-{tag}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d_k", fontsize=8)
        ax.legend(fontsize=8, frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
    a.spines[["top", "right"]].set_visible(False)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.09, top=0.95, wspace=0.22, hspace=0.42)
    return fig
