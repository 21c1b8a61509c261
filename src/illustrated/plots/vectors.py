"""Vectors drawn the post's way: a row of boxes per word, and the x → z → r flow through an encoder.

Small vectors (up to 8 numbers) are drawn as boxes in the post's colours with their values
written in; longer ones as boxes coloured by value (a diverging colour map with a colour bar).
Nothing here computes math: arrays and labels in, Figure out. Boxes carry ``gid`` names such as
``"x-1-3"`` (vector x, position 1, dimension 3) so tests can find them.

References: post "Bringing The Tensors Into The Picture" and "Now We're Encoding!".
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from .primitives import COLORBAR_ROOM_IN, box, colorbar, heatmap
from .style import CMAP, COLORS, DIVERGING_CMAP

__all__ = ["MAX_WRITTEN_VALUES", "vector_rows", "encoder_flow", "change_heatmaps"]

MAX_WRITTEN_VALUES = 8
"""Vectors up to this length get their numbers written in the boxes by default."""
_MARGIN = 0.03                 # left and right margins of the figure, as a share of its width
_AXES_SHARE = 1 - 2 * _MARGIN
_LEFT_IN = 0.1                 # left margin (inches) of a figure with a colour bar at its right

_INK = COLORS["text"]


def _as_matrix(name: str, value: object) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"{name}: expected a non-empty 2-D array (seq, d), got shape {array.shape}")
    return array


def _check_labels(name: str, labels: Sequence[str], n: int) -> list[str]:
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"{name}: expected {n} labels (one per row), got {len(labels)}")
    return labels


def _vector(ax: Axes, values: np.ndarray, x0: float, y0: float, *, gid: str, color: str,
            write: bool, decimals: int, norm: Normalize | None, cmap) -> None:
    """One vector as a row of unit boxes starting at (x0, y0)."""
    for j, v in enumerate(values):
        face = color if write else cmap(norm(v))
        ax.add_patch(Rectangle((x0 + j, y0), 1.0, 1.0, facecolor=face, edgecolor="white",
                               linewidth=1.0 if write else 0.4, gid=f"{gid}-{j}"))
        if write:
            ax.text(x0 + j + 0.5, y0 + 0.5, f"{v:.{decimals}f}", ha="center", va="center",
                    fontsize=8, color=_INK, gid=f"{gid}-{j}-value")
    # A coloured frame marks the vector's role (green input, red z, teal r, ...).
    ax.add_patch(Rectangle((x0, y0), len(values), 1.0, fill=False, edgecolor=color,
                           linewidth=1.6, gid=f"{gid}-frame"))


def _layout(fig: Figure, content_in: float, height_in: float, min_width_in: float,
            with_colorbar: bool) -> Axes:
    """Size the figure for ``content_in`` inches of axes (plus the colour bar's room at the
    right, inside the figure) and add its one axes."""
    if with_colorbar:
        width = max(min_width_in, _LEFT_IN + content_in + COLORBAR_ROOM_IN)
        fig.set_size_inches(width, height_in)
        ax = fig.add_subplot(1, 1, 1)
        fig.subplots_adjust(left=_LEFT_IN / width, right=1 - COLORBAR_ROOM_IN / width)
    else:
        fig.set_size_inches(max(min_width_in, content_in / _AXES_SHARE), height_in)
        ax = fig.add_subplot(1, 1, 1)
        fig.subplots_adjust(left=_MARGIN, right=1 - _MARGIN)
    return ax


def _colorbar(fig: Figure, ax: Axes, norm: Normalize, cmap) -> None:
    colorbar(fig, ScalarMappable(norm=norm, cmap=cmap), ax, label="value")


def _write(show_values: bool | None, d: int) -> bool:
    return d <= MAX_WRITTEN_VALUES if show_values is None else bool(show_values)


def vector_rows(vectors: object, labels: Sequence[str], *, names: Sequence[str] | None = None,
                title: str = "", color: str = COLORS["input"], show_values: bool | None = None,
                decimals: int = 2, fig: Figure | None = None) -> Figure:
    """Each word next to its vector, drawn as a row of boxes.

    Parameters
    ----------
    vectors : array_like
        One vector per row (e.g. a sentence's embeddings).
    labels : sequence of str
        One label per row (the words).
    names : sequence of str, optional
        A name per row written after the label (e.g. "x1", "x2").
    title : str, optional
        Axes title.
    color : str, default the input green
        Fill of the boxes when values are written, frame colour otherwise.
    show_values : bool, optional
        Write the numbers in the boxes; by default only for vectors up to
        :data:`MAX_WRITTEN_VALUES` long. Otherwise the boxes are coloured by value and a colour
        bar is added.
    decimals : int, default 2
        Digits written after the point.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        ``fig.axes[0]`` holds ``seq * d`` boxes with gids ``"row-i-j"`` (and texts
        ``"row-i-j-value"`` when written), the labels as texts with gid ``"label-i"``; a second
        axes is the colour bar when values are not written.

    Shapes
    ------
    ``vectors`` (seq, d); ``labels`` and ``names`` length seq.

    Raises
    ------
    ValueError
        If ``vectors`` is not a non-empty 2-D array or a label list has the wrong length.

    References
    ----------
    Post "Bringing The Tensors Into The Picture" (each word becomes a vector; "we'll represent
    those vectors with these simple boxes"); paper §3.4.
    """
    vectors = _as_matrix("vectors", vectors)
    seq, d = vectors.shape
    labels = _check_labels("labels", labels, seq)
    names = _check_labels("names", names, seq) if names is not None else None
    write = _write(show_values, d)
    # inches per box: the page's width at most, with the words and the colour bar
    sx = 0.55 if write else min(0.3, (5.6 if names else 6.0) / d)
    label_w = max(4.0 if names else 3.0, (1.5 if names else 1.1) / sx)  # room for the words
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    ax = _layout(fig, (label_w + d + 0.5) * sx, 0.6 + 0.5 * seq * 1.5, 4.0, not write)
    ax.set_xlim(-label_w, d + 0.5)
    ax.set_ylim(-0.3, seq * 1.5)
    ax.axis("off")
    limit = float(np.max(np.abs(vectors))) or 1.0
    norm = Normalize(-limit, limit)
    cmap = plt.get_cmap(DIVERGING_CMAP)
    for i in range(seq):
        y = (seq - 1 - i) * 1.5
        _vector(ax, vectors[i], 0.0, y, gid=f"row-{i}", color=color, write=write,
                decimals=decimals, norm=norm, cmap=cmap)
        ax.text(-label_w + 0.1, y + 0.5, labels[i], ha="left", va="center", fontsize=11,
                color=_INK, gid=f"label-{i}")
        if names:
            ax.text(-0.3, y + 0.5, names[i], ha="right", va="center", fontsize=10,
                    style="italic", color=_INK, gid=f"name-{i}")
    if title:
        ax.set_title(title, fontsize=11, color=_INK)
    if not write:
        _colorbar(fig, ax, norm, cmap)
    return fig


def _box(ax: Axes, x: float, y: float, w: float, h: float, text: str, color: str, gid: str,
         fontsize: float) -> None:
    box(ax, x, y, w, h, text, color, gid=gid, fontsize=fontsize, rounding=0.2, linewidth=1.0,
        label_background=True)

def _up(ax: Axes, x: float, y0: float, y1: float, gid: str) -> None:
    ax.add_patch(FancyArrowPatch((x, y0), (x, y1), arrowstyle="-|>", mutation_scale=10,
                                 color=_INK, linewidth=1.0, shrinkA=0, shrinkB=0, gid=gid))


def encoder_flow(x: object, z: object, r: object, words: Sequence[str], *, title: str = "",
                 names: tuple[str, str, str] = ("x", "z", "r"), show_values: bool | None = None,
                 decimals: int = 2, fig: Figure | None = None) -> Figure:
    """Each position's vector flowing up through one encoder: x into self-attention, z out; z into
    its own feed-forward network, r out.

    Self-attention is one box across all positions, with a line from every input to every
    output (its dependencies); the feed-forward network is drawn once per position (the same
    network, applied to each vector separately).

    Parameters
    ----------
    x, z, r : array_like
        The layer's input, the self-attention sub-layer's output, the feed-forward sub-layer's
        output; one vector per position.
    words : sequence of str
        The word at each position, written under its column.
    title : str, optional
        Axes title.
    names : (str, str, str), default ("x", "z", "r")
        Names of the three vector lists; position i's vector is labelled ``name + str(i + 1)``.
    show_values : bool, optional
        Write the numbers in the boxes (default: when d <= :data:`MAX_WRITTEN_VALUES`);
        otherwise colour the boxes by value, one colour scale shared by x, z and r.
    decimals : int, default 2
        Digits written after the point.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        ``fig.axes[0]`` holds boxes with gids ``"x-i-j"``, ``"z-i-j"``, ``"r-i-j"``; the patch
        ``"self-attention"``, one patch ``"ffn-i"`` per position, lines ``"attn-link-i-j"``
        (input i to output j) and the words as texts ``"word-i"``.

    Shapes
    ------
    ``x``, ``z``, ``r`` (seq, d_model); ``words`` length seq.

    Raises
    ------
    ValueError
        If the arrays are not 2-D of one shape, or ``words`` has the wrong length.

    References
    ----------
    Post "Bringing The Tensors Into The Picture" (its encoder-with-tensors figure) and "Now
    We're Encoding!"; paper §3.1, §3.3.
    """
    x, z, r = _as_matrix("x", x), _as_matrix("z", z), _as_matrix("r", r)
    if not x.shape == z.shape == r.shape:
        raise ValueError(f"z, r: expected the shape of x {x.shape}, got {z.shape} and {r.shape}")
    seq, d = x.shape
    words = _check_labels("words", words, seq)
    write = _write(show_values, d)
    # inches per box: numbers need 0.55 in; coloured boxes share what the page leaves after
    # the names between the columns (0.5 in each) and the colour bar
    sx = 0.55 if write else min(0.3, max(0.01, 6.95 - 0.5 * seq) / (seq * d))
    gap = max(2.0, 0.5 / sx)  # room for the names between columns, in boxes
    col_w = d + gap
    width = seq * col_w + 0.5
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    ax = _layout(fig, (width + 0.2) * sx, 5.6, 5.0, not write)
    ax.set_xlim(-0.2, width)
    ax.set_ylim(-0.6, 11.0)
    ax.axis("off")
    limit = float(max(np.max(np.abs(a)) for a in (x, z, r))) or 1.0
    norm, cmap = Normalize(-limit, limit), plt.get_cmap(DIVERGING_CMAP)
    colors = (COLORS["input"], COLORS["z"], COLORS["ffn"])
    rows_y = (1.0, 5.4, 9.4)
    left = [i * col_w + 0.75 * gap for i in range(seq)]  # first box of each column
    mid = [lx + d / 2 for lx in left]
    fontsize = 9 if sx * d < 1.6 else 11
    for i in range(seq):
        ax.text(mid[i], 0.2, words[i], ha="center", va="center", fontsize=11, color=_INK,
                gid=f"word-{i}")
        for values, name, color, y in zip((x, z, r), names, colors, rows_y):
            _vector(ax, values[i], left[i], y, gid=f"{name}-{i}", color=color, write=write,
                    decimals=decimals, norm=norm, cmap=cmap)
            ax.text(left[i] - 0.3, y + 0.5, f"{name}{i + 1}", ha="right", va="center",
                    fontsize=10, style="italic", color=_INK, gid=f"{name}-{i}-name")
        _up(ax, mid[i], 2.0, 2.8, gid=f"x-arrow-{i}")
        _up(ax, mid[i], 4.6, 5.4, gid=f"z-arrow-{i}")
        _up(ax, mid[i], 6.4, 7.2, gid=f"ffn-in-arrow-{i}")
        _up(ax, mid[i], 8.6, 9.4, gid=f"r-arrow-{i}")
        _box(ax, left[i] - 0.5, 7.2, d + 1.0, 1.4, "Feed Forward", COLORS["ffn"],
             gid=f"ffn-{i}", fontsize=fontsize)
    attn_x0, attn_x1 = left[0] - 0.5, left[-1] + d + 0.5
    ax.add_patch(FancyBboxPatch((attn_x0, 2.8), attn_x1 - attn_x0, 1.8,
                                boxstyle="round,pad=0,rounding_size=0.2",
                                facecolor=COLORS["attention"], edgecolor=_INK, linewidth=1.0,
                                gid="self-attention"))
    for i in range(seq):  # every input reaches every output
        for j in range(seq):
            ax.add_line(Line2D([mid[i], mid[j]], [2.8, 4.6], color=_INK, alpha=0.35,
                               linewidth=0.8, gid=f"attn-link-{i}-{j}"))
    ax.text((attn_x0 + attn_x1) / 2, 3.7, "Self-Attention", ha="center", va="center",
            fontsize=11, fontweight="bold", color=_INK, gid="self-attention-label",
            bbox={"facecolor": COLORS["attention"], "edgecolor": "none", "pad": 2.0})
    if title:
        ax.set_title(title, fontsize=11, color=_INK)
    if not write:
        _colorbar(fig, ax, norm, cmap)
    return fig


def change_heatmaps(changes: Mapping[str, object], words: Sequence[str], *,
                    perturbed: int | None = None,
                    row_change: Mapping[str, object] | None = None, title: str = "",
                    fig: Figure | None = None) -> Figure:
    """Which output rows move when one input row is nudged: one heatmap per sub-layer, rows = positions.

    Parameters
    ----------
    changes : Mapping[str, array_like]
        Sub-layer name -> the size of the change of its output, one row per position (e.g.
        ``Perturbation.changes`` from :mod:`illustrated.explain.tensors`). One shared colour
        scale from 0 to the largest change.
    words : sequence of str
        Row labels.
    perturbed : int, optional
        Row whose input was nudged; it is framed in every panel.
    row_change : Mapping[str, array_like], optional
        Sub-layer name -> one number per row (the row's total change), written at the right.
    title : str, optional
        Figure title.
    fig : Figure, optional
        A figure to clear and redraw into (players use this); a new one by default.

    Returns
    -------
    Figure
        One axes per entry of ``changes`` (titled with its name; ``ax.images[0]`` holds the
        array) and a colour bar axes. The frame of the nudged row has gid ``"perturbed"``; the
        row totals are texts with gid ``"row-change-i"``.

    Shapes
    ------
    each ``changes[name]`` (seq, d); each ``row_change[name]`` (seq,); ``words`` length seq.

    Raises
    ------
    ValueError
        If ``changes`` is empty, the arrays disagree in shape, ``words`` has the wrong length or
        ``perturbed`` is outside [0, seq).

    References
    ----------
    Post "Bringing The Tensors Into The Picture" (paths depend on each other in self-attention,
    not in the feed-forward layer); paper §3.3.
    """
    if not changes:
        raise ValueError("changes: expected at least one sub-layer, got none")
    arrays = {name: _as_matrix(f"changes[{name!r}]", a) for name, a in changes.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1:
        raise ValueError(f"changes: expected arrays of one shape, got {sorted(shapes)}")
    seq, d = shapes.pop()
    words = _check_labels("words", words, seq)
    if perturbed is not None and not 0 <= perturbed < seq:
        raise ValueError(f"perturbed: expected a row in [0, {seq}), got {perturbed}")
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    n = len(arrays)
    fig.set_size_inches(min(3.6, 7.0 / n) * n + 0.8, 1.0 + 0.42 * seq)
    fig.set_layout_engine("constrained", w_pad=0.04, h_pad=0.04, wspace=0.06)
    axes = fig.subplots(1, n, squeeze=False)[0]
    vmax = float(max(np.max(a) for a in arrays.values())) or 1.0
    for ax, (name, array) in zip(axes, arrays.items()):
        image = heatmap(ax, array, row_labels=words if ax is axes[0] else [""] * seq,
                        col_labels=(), cmap=CMAP, vmin=0.0, vmax=vmax, label_fontsize=None)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(f"{d} dimensions", fontsize=8)
        if perturbed is not None:
            ax.add_patch(Rectangle((-0.5, perturbed - 0.5), d, 1.0, fill=False,
                                   edgecolor=COLORS["z"], linewidth=2.0, gid="perturbed"))
        if row_change is not None:
            totals = np.asarray(row_change[name], dtype=np.float64)
            if totals.shape != (seq,):
                raise ValueError(f"row_change[{name!r}]: expected shape ({seq},), "
                                 f"got {totals.shape}")
            ax.text(d - 0.5 + 0.03 * d, -0.75, "row", ha="left", va="bottom", fontsize=8,
                    color=_INK, clip_on=False)
            for i, t in enumerate(totals):
                ax.text(d - 0.5 + 0.03 * d, i, f"{t:.2g}", ha="left", va="center", fontsize=8,
                        color=_INK, clip_on=False, gid=f"row-change-{i}")
    if title:
        fig.suptitle(title, fontsize=11)
    colorbar(fig, image, list(axes), label="|change|")
    return fig
