"""Drawings of chapter 05: positional vectors as boxes and heatmaps, the two layouts, the shift M_k.

Arrays and labels in, Figure out; nothing here computes math (the numbers come from
:mod:`illustrated.reference` and :mod:`illustrated.explain.positional`). Signed values use the
book's diverging colour map, fixed to [-1, 1] for positional tables since every entry is a sine
or a cosine.

References: post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from .player import frames_player
from .primitives import colorbar, heatmap
from .primitives import format_value as _format_value
from .style import COLORS, DIVERGING_CMAP, MAX_FIGURE_WIDTH_IN, MIN_FONT_PT

__all__ = ["MAX_WRITTEN", "format_value", "plot_vector_rows", "plot_position_boxes",
           "plot_positional_heatmap", "plot_layout_difference", "plot_frequency_spacing",
           "plot_relative_shift", "plot_order_blindness", "plot_position_scan",
           "update_position_scan", "position_player"]

MAX_WRITTEN = 8
"""Vectors up to this length get their numbers written in the cells by default."""

_INK = COLORS["text"]


def _matrix(name: str, value: object) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"{name}: expected a non-empty 2-D array, got shape {array.shape}")
    return array


def _labels(name: str, labels: Sequence[str], n: int) -> list[str]:
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"{name}: expected {n} labels, got {len(labels)}")
    return labels


def format_value(value: float, decimals: int = 4) -> str:
    """A number as the post writes it: rounded, trailing zeros dropped (0.8415, 0.0001, 1, -0.4161),
    never "-0"; see :func:`illustrated.plots.primitives.format_value` (``trim_zeros=True``),
    which raises ValueError for negative ``decimals``.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (the d=4 example).
    """
    return _format_value(value, decimals, trim_zeros=True)


def plot_vector_rows(rows: Mapping[str, object], words: Sequence[str], *, title: str = "",
                     symbols: Sequence[str] | None = None, show_values: bool | None = None,
                     decimals: int = 4, names: Mapping[str, Sequence[str]] | None = None,
                     vmax: float | None = None) -> Figure:
    """Vectors as strips of coloured cells: one row of the figure per kind, one column per word.

    This is the post's way of drawing "embedding + positional encoding = input" and
    "X + Z -> LayerNorm": every vector is a strip of ``d`` cells coloured by value.

    Parameters
    ----------
    rows : {row label: array (seq, d)}
        The vectors of each kind, in drawing order (top to bottom).
    words : sequence of str
        Column titles (the words), length seq.
    title : str, optional
        Figure title.
    symbols : sequence of str, optional
        ``len(rows) - 1`` symbols written between consecutive rows (e.g. "+", "=").
    show_values : bool, optional
        Write each number in its cell; by default only when d <= :data:`MAX_WRITTEN`.
    decimals : int, default 4
        Digits of the written numbers (see :func:`format_value`).
    names : {row label: sequence of str}, optional
        A name per vector written under each strip (e.g. "x1", "t1").
    vmax : float, optional
        Colour scale [-vmax, vmax]; by default the largest |value| of all rows.

    Returns
    -------
    Figure
        ``len(rows) * seq`` axes in row-major order, each with one image (1, d); the row
        labels are the y labels of the first column, the words the titles of the top row;
        symbols are figure texts.

    Shapes
    ------
    every array (seq, d) with the same shape.

    Raises
    ------
    ValueError
        For an empty ``rows``, arrays of different shapes, a wrong number of words, symbols or
        names.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (first figure) and
    "The Residuals" (second figure).
    """
    if not rows:
        raise ValueError("rows: expected at least one row of vectors, got none")
    arrays = {label: _matrix(f"rows[{label!r}]", value) for label, value in rows.items()}
    shape = next(iter(arrays.values())).shape
    for label, array in arrays.items():
        if array.shape != shape:
            raise ValueError(f"rows[{label!r}]: expected shape {shape} like the first row, "
                             f"got {array.shape}")
    seq, d = shape
    words = _labels("words", words, seq)
    if symbols is not None and len(symbols) != len(arrays) - 1:
        raise ValueError(f"symbols: expected {len(arrays) - 1} symbols (between rows), "
                         f"got {len(symbols)}")
    names = dict(names or {})
    for label, row_names in names.items():
        _labels(f"names[{label!r}]", row_names, seq)
    write = d <= MAX_WRITTEN if show_values is None else bool(show_values)
    scale = vmax if vmax is not None else max(float(np.abs(a).max()) for a in arrays.values())
    scale = scale or 1.0
    norm = Normalize(-scale, scale)
    n_rows = len(arrays)
    cell = 0.5 if write else 0.1  # inches per cell: a written number of MIN_FONT_PT needs 0.5
    width = min(max(2.2, cell * d) * seq + 1.8, MAX_FIGURE_WIDTH_IN)  # at most a page wide
    fig, axes = plt.subplots(n_rows, seq, figsize=(width, 0.95 * n_rows + 0.8),
                             squeeze=False, constrained_layout=True)
    if title:
        fig.suptitle(title)
    for r, (label, array) in enumerate(arrays.items()):
        for i in range(seq):
            ax = axes[r, i]
            strip = array[i][None, :]  # (1, d)
            image = heatmap(ax, strip, row_labels=(), col_labels=(), cmap=DIVERGING_CMAP,
                            norm=norm, annotate=write, fmt=partial(format_value, decimals=decimals),
                            fontsize=MIN_FONT_PT)
            if label in names:
                ax.set_xlabel(names[label][i], fontsize=9)
            if r == 0:
                ax.set_title(words[i])
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=9)
    colorbar(fig, image, axes, label="value")
    if symbols is not None:
        fig.canvas.draw()  # settle the layout so the symbols land between rows
        for r, symbol in enumerate(symbols):
            upper = axes[r, 0].get_position()
            lower = axes[r + 1, 0].get_position()
            fig.text(0.012, (upper.y0 + lower.y1) / 2, symbol, ha="left", va="center",
                     fontsize=16, fontweight="bold", color=_INK)
        fig.set_layout_engine("none")  # keep the symbols where they were placed
    return fig


def plot_position_boxes(pe: object, words: Sequence[str], *, decimals: int = 4,
                        title: str = "") -> Figure:
    """The positional vector of each position as boxes with their values written in (small d).

    Parameters
    ----------
    pe : array_like
        Positional vectors, one row per position.
    words : sequence of str
        A label per position (e.g. "je", "suis", "étudiant").
    decimals : int, default 4
        Digits written (see :func:`format_value`).
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        As :func:`plot_vector_rows` with one row labelled "positional encoding" and the cells'
        values written; each strip is named t1, t2, ...

    Shapes
    ------
    ``pe`` (n_positions, d_model).

    Raises
    ------
    ValueError
        As :func:`plot_vector_rows`.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (the toy embedding
    size of 4).
    """
    pe = _matrix("pe", pe)
    names = [f"t{i + 1} (position {i})" for i in range(pe.shape[0])]
    return plot_vector_rows({"positional\nencoding": pe}, words, title=title, show_values=True,
                            decimals=decimals, names={"positional\nencoding": names}, vmax=1.0)


def plot_positional_heatmap(pe: object, *, title: str = "", split: bool = False,
                            fig: Figure | None = None) -> Figure:
    """The positional table as a heatmap: one row per position, one column per dimension.

    Parameters
    ----------
    pe : array_like
        The table, values in [-1, 1].
    title : str, optional
        Axes title.
    split : bool, default False
        Mark the middle column with a dashed line and name the halves "sin" and "cos" (the
        concatenated layout).
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        ``axes[0]`` the heatmap (one image, colour scale [-1, 1]), ``axes[1]`` its colour bar.

    Shapes
    ------
    ``pe`` (n_positions, d_model).

    Raises
    ------
    ValueError
        If ``pe`` is not a non-empty 2-D array.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (20 x 512 figure
    and the July 2020 update); paper §3.5.
    """
    pe = _matrix("pe", pe)
    n, d = pe.shape
    if fig is None:
        fig = plt.figure(figsize=(8.0, 3.4), layout="constrained")
    else:
        fig.clear()
        fig.set_layout_engine("constrained")
    ax = fig.add_subplot()
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    image = heatmap(ax, pe, cmap=DIVERGING_CMAP, vmin=-1, vmax=1)
    ax.set_xlabel(f"dimension (column, 0..{d - 1})")
    ax.set_ylabel(f"position (row, 0..{n - 1})")
    if split:
        ax.axvline(d / 2 - 0.5, color=_INK, linestyle="--", linewidth=1)
        ax.text(d / 4, -0.6, "sin", ha="center", va="bottom", color=_INK)
        ax.text(3 * d / 4, -0.6, "cos", ha="center", va="bottom", color=_INK)
    if title:
        ax.set_title(title, pad=16 if split else 6)
    colorbar(fig, image, ax, label="value")
    return fig


def plot_layout_difference(concatenated: object, regrouped: object, difference: object, *,
                           title: str = "") -> Figure:
    """The post's table, the paper's table with its columns regrouped, and their difference.

    Parameters
    ----------
    concatenated : array_like
        tensor2tensor's table (all sines, then all cosines).
    regrouped : array_like
        The paper's interleaved table with its columns reordered the same way.
    difference : array_like
        ``concatenated - regrouped``, drawn with its own symmetric colour scale.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        Three heatmap axes (titles name each table) plus two colour bars.

    Shapes
    ------
    all three (n_positions, d_model).

    Raises
    ------
    ValueError
        If the arrays are not 2-D of one shape.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (July 2020
    update); paper §3.5; tensor2tensor ``get_timing_signal_1d``.
    """
    tables = [_matrix(name, value) for name, value in (("concatenated", concatenated),
                                                      ("regrouped", regrouped),
                                                      ("difference", difference))]
    if len({t.shape for t in tables}) != 1:
        raise ValueError(f"regrouped, difference: expected the shape of concatenated "
                         f"{tables[0].shape}, got {tables[1].shape} and {tables[2].shape}")
    fig = plt.figure(figsize=(8.0, 5.6), constrained_layout=True)
    grid = fig.add_gridspec(2, 2)
    axes = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])]
    names = ["post (tensor2tensor): sin | cos", "paper, columns regrouped: sin | cos",
             "difference (post - paper)"]
    for ax, table, name in zip(axes[:2], tables[:2], names[:2]):
        image = heatmap(ax, table, cmap=DIVERGING_CMAP, vmin=-1, vmax=1)
        ax.set(title=name, xlabel="dimension", ylabel="position")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    scale = float(np.abs(tables[2]).max()) or 1.0
    diff_image = heatmap(axes[2], tables[2], cmap=DIVERGING_CMAP, vmin=-scale, vmax=scale)
    axes[2].set(title=names[2], xlabel="dimension", ylabel="position")
    axes[2].yaxis.set_major_locator(MaxNLocator(integer=True))
    if title:
        fig.suptitle(title)
    colorbar(fig, image, axes[:2], label="value")
    colorbar(fig, diff_image, axes[2], label="difference")
    return fig


def plot_frequency_spacing(frequencies: Mapping[str, object], *, ratio: object = None,
                           ratio_label: str = "ratio", title: str = "") -> Figure:
    """The angular frequency of every sine/cosine pair, on a log scale, for each layout.

    Parameters
    ----------
    frequencies : {label: array (d_model/2,)}
        Frequencies per pair index i (e.g. the paper's and tensor2tensor's).
    ratio : array_like, optional
        A second panel: one curve against i (e.g. the ratio of the two frequency lists).
    ratio_label : str, default "ratio"
        Y label of the second panel.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        ``axes[0]`` one line per label (log y), ``axes[1]`` the ratio when given.

    Shapes
    ------
    every array (d_model/2,); ``ratio`` the same length.

    Raises
    ------
    ValueError
        If ``frequencies`` is empty or the arrays differ in length.

    References
    ----------
    Paper §3.5 ("the wavelengths form a geometric progression from 2π to 10000 · 2π");
    tensor2tensor ``get_timing_signal_1d``.
    """
    if not frequencies:
        raise ValueError("frequencies: expected at least one list of frequencies, got none")
    curves = {label: np.asarray(value, dtype=np.float64).ravel()
              for label, value in frequencies.items()}
    lengths = {len(c) for c in curves.values()}
    if ratio is not None:
        ratio = np.asarray(ratio, dtype=np.float64).ravel()
        lengths.add(len(ratio))
    if len(lengths) != 1:
        raise ValueError(f"frequencies: expected arrays of one length, got lengths "
                         f"{sorted(lengths)}")
    n_axes = 1 if ratio is None else 2
    fig, axes = plt.subplots(1, n_axes, figsize=(4.0 * n_axes, 3.2), squeeze=False,
                             constrained_layout=True)
    ax = axes[0, 0]
    for label, curve in curves.items():
        ax.plot(np.arange(len(curve)), curve, label=label)
    ax.set_yscale("log")
    ax.set(xlabel="pair index i", ylabel="angular frequency (radians per position)",
           title="frequency of each sin/cos pair")
    ax.legend()
    if ratio is not None:
        axes[0, 1].plot(np.arange(len(ratio)), ratio, color=COLORS["key"])
        axes[0, 1].set(xlabel="pair index i", ylabel=ratio_label, title=ratio_label)
    if title:
        fig.suptitle(title)
    return fig


def _column(ax, values: np.ndarray, title: str, write: bool) -> None:
    column = values[:, None]  # (d, 1)
    heatmap(ax, column, row_labels=(), col_labels=(), cmap=DIVERGING_CMAP, vmin=-1, vmax=1,
            annotate=write, fmt=partial(format_value, decimals=2), fontsize=8)
    ax.set_title(title, fontsize=10)


def plot_relative_shift(matrix: object, before: object, rotated: object, shifted: object, *,
                        k: int, position: int, title: str = "") -> Figure:
    """M_k, PE(pos), M_k PE(pos) and PE(pos + k): the same matrix shifts every position by k.

    Parameters
    ----------
    matrix : array_like
        M_k (see :func:`illustrated.reference.relative_position_matrix`).
    before : array_like
        PE(pos).
    rotated : array_like
        M_k @ PE(pos), computed elsewhere.
    shifted : array_like
        PE(pos + k), read from the table.
    k, position : int
        For the titles.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        Four axes: ``axes[0]`` the matrix, then three columns (values written when d <= 16).

    Shapes
    ------
    ``matrix`` (d_model, d_model); vectors (d_model,).

    Raises
    ------
    ValueError
        If ``matrix`` is not square or a vector has the wrong length.

    References
    ----------
    Paper §3.5 (linear function of PE_pos for a fixed offset k).
    """
    matrix = _matrix("matrix", matrix)
    d = matrix.shape[0]
    if matrix.shape != (d, d):
        raise ValueError(f"matrix: expected a square matrix, got shape {matrix.shape}")
    vectors = []
    for name, value in (("before", before), ("rotated", rotated), ("shifted", shifted)):
        v = np.asarray(value, dtype=np.float64).ravel()
        if v.shape != (d,):
            raise ValueError(f"{name}: expected {d} values to match matrix, got shape {v.shape}")
        vectors.append(v)
    fig, axes = plt.subplots(1, 4, figsize=(8, 3.8), constrained_layout=True,
                             gridspec_kw={"width_ratios": [4, 1, 1, 1]})
    heatmap(axes[0], matrix, cmap=DIVERGING_CMAP, vmin=-1, vmax=1)
    axes[0].set(title=f"M_{k} (depends on k={k} only)", xlabel="column", ylabel="row")
    write = d <= 16
    _column(axes[1], vectors[0], f"PE({position})", write)
    _column(axes[2], vectors[1], f"M_{k} PE({position})", write)
    _column(axes[3], vectors[2], f"PE({position + k})", write)
    if title:
        fig.suptitle(title)
    return fig


def plot_order_blindness(z_a: object, z_b: object, z_a_positions: object, z_b_positions: object,
                         words_a: Sequence[str], words_b: Sequence[str], *,
                         title: str = "") -> Figure:
    """Self-attention outputs of two word orders, without positions (top) and with them (bottom).

    Parameters
    ----------
    z_a, z_b : array_like
        Outputs without positions for sentence a and sentence b.
    z_a_positions, z_b_positions : array_like
        Outputs with positional vectors added to the inputs.
    words_a, words_b : sequence of str
        Row labels.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        2 x 2 heatmap axes (row = without / with positions, column = sentence) and a colour bar;
        each axes' y tick labels are the words.

    Shapes
    ------
    every array (seq, d).

    Raises
    ------
    ValueError
        If the arrays differ in shape or the word lists in length.

    References
    ----------
    Paper §3.5; post "Representing The Order of The Sequence Using Positional Encoding".
    """
    arrays = [_matrix(n, v) for n, v in (("z_a", z_a), ("z_b", z_b),
                                         ("z_a_positions", z_a_positions),
                                         ("z_b_positions", z_b_positions))]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(f"z_b, z_a_positions, z_b_positions: expected the shape of z_a "
                         f"{arrays[0].shape}, got {[a.shape for a in arrays[1:]]}")
    seq = arrays[0].shape[0]
    words_a = _labels("words_a", words_a, seq)
    words_b = _labels("words_b", words_b, seq)
    scale = max(float(np.abs(a).max()) for a in arrays) or 1.0
    fig, axes = plt.subplots(2, 2, figsize=(8, 5), constrained_layout=True)
    titles = [f"'{' '.join(words_a)}', no positions", f"'{' '.join(words_b)}', no positions",
              f"'{' '.join(words_a)}', with positions", f"'{' '.join(words_b)}', with positions"]
    for ax, array, words, name in zip(axes.ravel(), arrays, [words_a, words_b] * 2, titles):
        image = heatmap(ax, array, row_labels=words, cmap=DIVERGING_CMAP, vmin=-scale,
                        vmax=scale, label_fontsize=None)
        ax.set_xlabel("dimension of z")
        ax.set_title(name, fontsize=10)
    if title:
        fig.suptitle(title)
    colorbar(fig, image, axes, label="value")
    return fig


def plot_position_scan(pe: object, position: int = 0, *, title: str = "") -> Figure:
    """One position at a time: the table with that row framed (top) and the row as a curve (bottom).

    Parameters
    ----------
    pe : array_like
        The positional table.
    position : int, default 0
        The row shown.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        ``axes[0]`` the heatmap with a frame (a Rectangle patch) around the row, ``axes[1]``
        the row's values against the dimension (one Line2D). Redraw another row with
        :func:`update_position_scan`.

    Shapes
    ------
    ``pe`` (n_positions, d_model).

    Raises
    ------
    ValueError
        If ``position`` is outside the table.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding".
    """
    pe = _matrix("pe", pe)
    n, d = pe.shape
    fig, (ax_map, ax_row) = plt.subplots(2, 1, figsize=(7, 4.2), dpi=72,
                                         gridspec_kw={"height_ratios": [1.3, 1]},
                                         constrained_layout=True)
    heatmap(ax_map, pe, cmap=DIVERGING_CMAP, vmin=-1, vmax=1)
    ax_map.set(xlabel="dimension", ylabel="position")
    ax_map.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax_map.add_patch(Rectangle((-0.5, -0.5), d, 1, fill=False, edgecolor="black", linewidth=2))
    ax_row.plot(np.arange(d), pe[0], color=COLORS["input"], marker="." if d <= 64 else None)
    ax_row.set(xlim=(-0.5, d - 0.5), ylim=(-1.1, 1.1), xlabel="dimension", ylabel="value")
    if title:
        fig.suptitle(title)
    update_position_scan(fig, pe, position)
    fig.canvas.draw()  # lay out once, then freeze: a player redraws every frame
    fig.set_layout_engine("none")
    return fig


def update_position_scan(fig: Figure, pe: object, position: int) -> None:
    """Move a figure of :func:`plot_position_scan` to another position (frame, curve, title).

    Parameters
    ----------
    fig : Figure from :func:`plot_position_scan`.   pe : the same table.   position : int.

    Returns
    -------
    None; the figure is changed in place.

    Shapes
    ------
    ``pe`` (n_positions, d_model).

    Raises
    ------
    ValueError
        If ``position`` is outside the table.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding".
    """
    pe = _matrix("pe", pe)
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) \
            or not 0 <= position < pe.shape[0]:
        raise ValueError(f"position: expected an integer in [0, {pe.shape[0]}), got {position!r}")
    ax_map, ax_row = fig.axes[0], fig.axes[1]
    ax_map.patches[0].set_y(position - 0.5)
    ax_row.lines[0].set_ydata(pe[position])
    ax_row.set_title(f"the vector added at position {position}")


def position_player(pe: object, *, title: str = "") -> str:
    """A kernel-free slider over the positions of a table (one frame per row).

    Parameters
    ----------
    pe : array_like
        The positional table; keep it small (<= 20 rows) so the page stays light.
    title : str, optional
        Figure title.

    Returns
    -------
    str
        HTML of the player (show it with ``IPython.display.HTML``).

    Shapes
    ------
    ``pe`` (n_positions, d_model).

    Raises
    ------
    ValueError
        If ``pe`` is not a non-empty 2-D array.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding".
    """
    pe = _matrix("pe", pe)
    fig = plot_position_scan(pe, 0, title=title)
    return frames_player(fig, partial(update_position_scan, fig, pe), pe.shape[0])
