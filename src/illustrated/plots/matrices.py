"""Matrix products drawn the post's way: coloured grids of numbers with ×, = and names between.

* :func:`plot_equations` / :func:`plot_equation_panels`: rows such as ``X × W_Q = Q`` or
  ``softmax(Q × Kᵀ / 8) × V = Z``, one panel per attention head if wanted.
* :func:`plot_self_attention_steps`: the post's table of the six steps for "Thinking Machines",
  one column per word, one row per step (embedding, queries, keys, values, score, ÷ 8, softmax,
  softmax × value, sum).
* :func:`plot_multi_head_recap`: the whole multi-headed attention in one picture, with the real
  shapes of every matrix.

Arrays and labels in, Figure out: nothing here multiplies a matrix or takes a softmax; the
caller passes every result. Cells carry ``gid`` names (``"<panel>/<row>/<term>/cell-i-j"``, the
number ``.../value-i-j``, the name ``.../name``) so tests can find what was drawn.

References: post "Self-Attention in Detail", "Matrix Calculation of Self-Attention", "The Beast
With Many Heads"; paper §3.2.1-§3.2.2.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .attention import head_colors as default_head_colors
from .primitives import format_value as _format_value
from .style import COLORS, DIVERGING_CMAP, MAX_FIGURE_WIDTH_IN, MIN_FONT_PT

__all__ = ["MatrixTerm", "StepRow", "format_value", "plot_equations", "plot_equation_panels",
           "plot_self_attention_steps", "plot_multi_head_recap"]

_INK = COLORS["text"]
_OP_FONT = 15
_GAP = 0.35          # space around an operator, in cells
_MAX_WIDTH_IN = MAX_FIGURE_WIDTH_IN  # widest figure legible at the content width (style.py)
_MIN_SCALE = 0.35    # inches per cell that a number of MIN_FONT_PT such as "-0.13" needs
_MARGIN_IN = 0.4     # the figure's width beyond its cells
_ROW_GAP = 1.6       # vertical space between rows, in cells (room for the names)


class MatrixTerm(NamedTuple):
    """One matrix of an equation: its name, its values and its colour.

    ``values`` may be 1-D (drawn as one row, like the post's vectors) or 2-D. ``column_colors``
    (one colour per column) overrides ``color``, e.g. to show which head each column of a
    concatenation came from. ``show_values=False`` draws the cells coloured by value instead of
    writing the numbers (for matrices too big to read).
    """

    name: str
    values: object
    color: str = COLORS["input"]
    column_colors: Sequence[str] | None = None
    show_values: bool = True


class StepRow(NamedTuple):
    """One row of the six-steps table: a label, one cell per word, a colour for vector cells.

    A cell is a 1-D array (drawn as boxes with numbers), a str (written as text) or None (empty).
    """

    label: str
    cells: Sequence[object]
    color: str = COLORS["input"]


def format_value(value: float, decimals: int = 2) -> str:
    """How a number is written in a matrix cell: integers without decimals, others rounded to
    ``decimals`` digits, trailing zeros kept (``"112"``, ``"0.88"``, ``"0.10"``, ``"-1"``); see
    :func:`illustrated.plots.primitives.format_value`, which raises ValueError for negative
    ``decimals``.

    References
    ----------
    Post "Self-Attention in Detail" (numbers written in the boxes).
    """
    return _format_value(value, decimals)


def _as_values(name: str, values: object) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]  # (1, n)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"{name}: expected a non-empty 1-D or 2-D array, got shape "
                         f"{np.shape(values)}")
    return array


def _check_term(term: object, where: str) -> MatrixTerm | str:
    if isinstance(term, str):
        return term
    if isinstance(term, MatrixTerm):
        values = _as_values(f"{where} ({term.name})", term.values)
        if term.column_colors is not None and len(term.column_colors) != values.shape[1]:
            raise ValueError(f"{where} ({term.name}): expected {values.shape[1]} column colours, "
                             f"got {len(term.column_colors)}")
        return term._replace(values=values)
    raise ValueError(f"{where}: expected a MatrixTerm or an operator str, got "
                     f"{type(term).__name__}")


def _term_size(term: MatrixTerm | str) -> tuple[float, float]:
    """Width and height of a term in cells; an empty operator is a gap of one cell."""
    if isinstance(term, str):
        return (2 * _GAP + 0.42 * len(term) if term else 1.0), 1.0
    rows, cols = term.values.shape
    return cols + 0.2, float(rows)


def _draw_matrix(ax: Axes, term: MatrixTerm, x0: float, y_mid: float, gid: str,
                 decimals: int, fontsize: float, show_shape: bool) -> None:
    """Draw ``term`` with its left edge at x0, centred vertically on y_mid (y grows downward)."""
    values = term.values
    rows, cols = values.shape
    y0 = y_mid - rows / 2
    limit = float(np.max(np.abs(values))) or 1.0
    norm, cmap = Normalize(-limit, limit), plt.get_cmap(DIVERGING_CMAP)
    for i in range(rows):
        for j in range(cols):
            if term.show_values:
                face = term.column_colors[j] if term.column_colors is not None else term.color
            else:
                face = cmap(norm(values[i, j]))
            ax.add_patch(Rectangle((x0 + j, y0 + i), 1.0, 1.0, facecolor=face, edgecolor="white",
                                   linewidth=1.0, alpha=0.9, gid=f"{gid}/cell-{i}-{j}"))
            if term.show_values:
                ax.text(x0 + j + 0.5, y0 + i + 0.5, format_value(values[i, j], decimals),
                        ha="center", va="center", fontsize=fontsize, color=_INK,
                        gid=f"{gid}/value-{i}-{j}")
    frame = term.column_colors[0] if term.column_colors is not None else term.color
    ax.add_patch(Rectangle((x0, y0), cols, rows, fill=False, edgecolor=frame, linewidth=1.6,
                           gid=f"{gid}/frame"))
    name = f"{term.name}  ({rows}×{cols})" if show_shape else term.name
    ax.text(x0 + cols / 2, y0 + rows + 0.25, name, ha="center", va="top", fontsize=10,
            color=_INK, gid=f"{gid}/name")


def _draw_panel(ax: Axes, rows: list[list[MatrixTerm | str]], panel: int, x_left: float,
                decimals: int, fontsize: float, show_shapes: bool, y_top: float = 0.0) -> None:
    y = y_top
    for r, row in enumerate(rows):
        height = max(_term_size(t)[1] for t in row)
        y_mid = y + height / 2
        x = x_left
        for t, term in enumerate(row):
            width = _term_size(term)[0]
            gid = f"{panel}/{r}/{t}"
            if isinstance(term, str):
                if term:
                    ax.text(x + width / 2, y_mid, term, ha="center", va="center",
                            fontsize=_OP_FONT, color=_INK, gid=f"{gid}/operator")
            else:
                _draw_matrix(ax, term, x + 0.1, y_mid, gid, decimals, fontsize, show_shapes)
            x += width
        y += height + _ROW_GAP


def _panel_size(rows: list[list[MatrixTerm | str]]) -> tuple[float, float]:
    width = max(sum(_term_size(t)[0] for t in row) for row in rows)
    height = sum(max(_term_size(t)[1] for t in row) for row in rows) + _ROW_GAP * len(rows)
    return width, height


def _wrap_row(row: list[MatrixTerm | str], max_cells: float) -> list[list[MatrixTerm | str]]:
    """Split a row wider than ``max_cells`` into lines that fit. An operator that does not fit
    starts the next line; a matrix that does not fit moves to the next line with what follows
    the line's last gap (""), else its last "=", else its last operator. A single term wider
    than the page stays on a line of its own."""
    lines: list[list[MatrixTerm | str]] = [[]]
    for term in row:
        line = lines[-1]
        width = sum(_term_size(t)[0] for t in line) + _term_size(term)[0]
        if line and width > max_cells:
            if isinstance(term, str):
                lines.append([])  # break before the operator; a gap is dropped
            else:
                gaps = [i for i, t in enumerate(line) if t == ""]
                ops = [i for i, t in enumerate(line) if isinstance(t, str) and t and i > 0]
                equals = [i for i in ops if line[i] == "="]
                cut = gaps[-1] if gaps else (equals or ops or [len(line)])[-1]
                rest = line[cut + 1:] if gaps else line[cut:]
                del line[cut:]
                lines.append(rest)
            line = lines[-1]
        if not (term == "" and not line):  # no gap at the start of a line
            line.append(term)
    return [line for line in lines if line]


def plot_equation_panels(panels: Sequence[Sequence[Sequence[MatrixTerm | str]]], *,
                         panel_titles: Sequence[str] | None = None, title: str = "",
                         decimals: int = 2, show_shapes: bool = False, scale: float = 0.42,
                         fig: Figure | None = None) -> Figure:
    """Several panels of matrix equations side by side, e.g. one per attention head.

    Parameters
    ----------
    panels : sequence of panels
        Each panel is a sequence of rows; each row a sequence of :class:`MatrixTerm` and
        operator strings (``"×"``, ``"="``, ``"softmax("``, ...; ``""`` is a plain gap).
    panel_titles : sequence of str, optional
        One title per panel (e.g. "head 0").
    title : str, optional
        Title of the whole figure.
    decimals : int
        Digits written after the point for non-integers.
    show_shapes : bool
        Write each matrix's shape after its name, e.g. ``Q  (2×4)``.
    scale : float
        Inches per cell; at least 0.35 (the room a number of MIN_FONT_PT needs). A row wider
        than the page (style.MAX_FIGURE_WIDTH_IN) wraps: at a gap ``""``, else before its last
        fitting ``=`` or other operator; panels too wide side by side go one under the other.
    fig : Figure, optional
        A figure to clear and redraw into (for players); a new one by default.

    Returns
    -------
    Figure
        One axes holding every panel; cells have gids ``"p/r/t/cell-i-j"`` (panel p, line r,
        term t; a wrapped row's lines count as rows), written numbers ``"p/r/t/value-i-j"``,
        names ``"p/r/t/name"``, operators ``"p/r/t/operator"`` and panel titles ``"p/title"``.

    Shapes
    ------
    Each matrix (rows, cols); a 1-D vector is drawn as one row.

    Raises
    ------
    ValueError
        If a panel or row is empty, a term is neither a MatrixTerm nor a str, a matrix is not
        1-D/2-D, ``column_colors`` does not match the columns, or ``panel_titles`` has the
        wrong length.

    References
    ----------
    Post "Matrix Calculation of Self-Attention" and "The Beast With Many Heads".
    """
    checked: list[list[list[MatrixTerm | str]]] = []
    if len(panels) == 0:
        raise ValueError("panels: expected at least one panel, got none")
    for p, panel in enumerate(panels):
        if len(panel) == 0 or any(len(row) == 0 for row in panel):
            raise ValueError(f"panels[{p}]: expected non-empty rows, got {panel!r}")
        checked.append([[_check_term(t, f"panels[{p}][{r}][{i}]") for i, t in enumerate(row)]
                        for r, row in enumerate(panel)])
    if panel_titles is not None and len(panel_titles) != len(checked):
        raise ValueError(f"panel_titles: expected {len(checked)} titles, got {len(panel_titles)}")
    # Cells big enough for their numbers at MIN_FONT_PT; rows too wide for the page wrap.
    scale = max(float(scale), _MIN_SCALE)
    max_cells = (_MAX_WIDTH_IN - _MARGIN_IN) / scale
    checked = [[line for row in panel for line in _wrap_row(row, max_cells)] for panel in checked]
    sizes = [_panel_size(panel) for panel in checked]
    gap = 2.5
    width = sum(w for w, _ in sizes) + gap * (len(sizes) - 1)
    top = 1.4 if panel_titles is not None else 0.4
    height = max(h for _, h in sizes) + top
    # Panels side by side if that fits the page's content width, one under the other if not.
    stacked = len(sizes) > 1 and width * scale + _MARGIN_IN > _MAX_WIDTH_IN
    if stacked:
        width = max(w for w, _ in sizes)
        height = sum(h + top for _, h in sizes) + gap * (len(sizes) - 1)
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(max(3.0, width * scale + _MARGIN_IN),
                        max(1.6, height * scale + (0.4 if title else 0.1)))
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.98 if not title else 0.88))
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(height - top + 0.2, -top)
    ax.set_aspect("equal")
    ax.axis("off")
    fontsize = MIN_FONT_PT
    x = y = 0.0
    for p, (panel, (w, h)) in enumerate(zip(checked, sizes)):
        if panel_titles is not None:
            ax.text(x + w / 2, y - 0.9, panel_titles[p], ha="center", va="center", fontsize=11,
                    fontweight="bold", color=_INK, gid=f"{p}/title")
        _draw_panel(ax, panel, p, x, decimals, fontsize, show_shapes, y_top=y)
        if stacked:
            y += h + top + gap
        else:
            x += w + gap
    if title:
        fig.suptitle(title, fontsize=12, color=_INK)
    return fig


def plot_equations(rows: Sequence[Sequence[MatrixTerm | str]], *, title: str = "",
                   decimals: int = 2, show_shapes: bool = False, scale: float = 0.42,
                   fig: Figure | None = None) -> Figure:
    """Matrix equations, one per row, drawn as coloured grids of numbers: e.g. X × W_Q = Q.

    Parameters
    ----------
    rows : sequence of rows
        Each row a sequence of :class:`MatrixTerm` and operator strings.
    title, decimals, show_shapes, scale, fig
        As :func:`plot_equation_panels`.

    Returns
    -------
    Figure
        As :func:`plot_equation_panels` with a single panel 0.

    Shapes
    ------
    Each matrix (rows, cols); a 1-D vector is drawn as one row.

    Raises
    ------
    ValueError
        As :func:`plot_equation_panels`.

    References
    ----------
    Post "Matrix Calculation of Self-Attention" (X × W_Q = Q, and softmax(Q Kᵀ / √d_k) V = Z).
    """
    return plot_equation_panels([rows], title=title, decimals=decimals, show_shapes=show_shapes,
                                scale=scale, fig=fig)


def plot_self_attention_steps(words: Sequence[str], rows: Sequence[StepRow], *, title: str = "",
                              decimals: int = 2, fig: Figure | None = None) -> Figure:
    """The post's step table: one column per word, one row per step of the self-attention calculation.

    Parameters
    ----------
    words : sequence of str
        The input words, written at the top of their columns.
    rows : sequence of StepRow
        Each row's label (left) and one cell per word: a 1-D array (boxes with numbers in the
        row's colour), a str (text) or None (left empty).
    title : str, optional
        Figure title.
    decimals : int
        Digits after the point for non-integers.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes; the words are texts with gid ``"word-j"``, row labels ``"label-r"``, vector
        boxes ``"cell-r-j-i"`` with numbers ``"value-r-j-i"`` (row r, word j, component i),
        text cells ``"text-r-j"``.

    Shapes
    ------
    Every vector cell 1-D; vectors may differ in length between rows.

    Raises
    ------
    ValueError
        If ``words`` or ``rows`` is empty, a row has not one cell per word, or a cell is neither
        a 1-D array, a str nor None.

    References
    ----------
    Post "Self-Attention in Detail" (the figures of steps one to six).
    """
    words = [str(w) for w in words]
    if not words or not rows:
        raise ValueError(f"words, rows: expected at least one word and one row, got "
                         f"{len(words)} and {len(rows)}")
    cells: list[list[object]] = []
    for r, row in enumerate(rows):
        if len(row.cells) != len(words):
            raise ValueError(f"rows[{r}] ({row.label}): expected {len(words)} cells (one per "
                             f"word), got {len(row.cells)}")
        checked = []
        for j, cell in enumerate(row.cells):
            if cell is None or isinstance(cell, str):
                checked.append(cell)
                continue
            array = np.asarray(cell, dtype=np.float64)
            if array.ndim != 1 or array.size == 0:
                raise ValueError(f"rows[{r}] ({row.label}) cell {j}: expected a 1-D vector, a str "
                                 f"or None, got shape {array.shape}")
            checked.append(array)
        cells.append(checked)
    col_w = max([4] + [len(c) for row in cells for c in row if isinstance(c, np.ndarray)]) + 2.0
    label_w = 5.5
    width, height = label_w + col_w * len(words), 1.4 * (len(rows) + 1)
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(width * 0.42, height * 0.42 + (0.3 if title else 0))
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.98 if not title else 0.9))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    for j, word in enumerate(words):
        ax.text(label_w + col_w * (j + 0.5), 0.7, word, ha="center", va="center", fontsize=12,
                fontweight="bold", color=_INK, gid=f"word-{j}")
    for r, (row, row_cells) in enumerate(zip(rows, cells)):
        y = 1.4 * (r + 1) + 0.2
        ax.text(0.2, y + 0.5, row.label, ha="left", va="center", fontsize=10, color=_INK,
                gid=f"label-{r}")
        ax.plot([0.1, width - 0.1], [y - 0.2, y - 0.2], color="#cfd8dc", linewidth=0.6)
        for j, cell in enumerate(row_cells):
            centre = label_w + col_w * (j + 0.5)
            if isinstance(cell, str):
                ax.text(centre, y + 0.5, cell, ha="center", va="center", fontsize=11,
                        color=_INK, gid=f"text-{r}-{j}")
            elif isinstance(cell, np.ndarray):
                x0 = centre - len(cell) / 2
                for i, v in enumerate(cell):
                    ax.add_patch(Rectangle((x0 + i, y), 1.0, 1.0, facecolor=row.color,
                                           edgecolor="white", linewidth=1.0,
                                           gid=f"cell-{r}-{j}-{i}"))
                    ax.text(x0 + i + 0.5, y + 0.5, format_value(v, decimals), ha="center",
                            va="center", fontsize=8, color=_INK, gid=f"value-{r}-{j}-{i}")
    if title:
        fig.suptitle(title, fontsize=12, color=_INK)
    return fig


def plot_multi_head_recap(words: Sequence[str], X: object, head_weights: Sequence[Sequence[object]],
                          q: object, k: object, v: object, z: object, concat: object, W_O: object,
                          output: object, *, head_colors: Sequence[str] | None = None,
                          show_values: bool = False, scale: float = 0.16,
                          fig: Figure | None = None) -> Figure:
    """Multi-headed self-attention in one picture: words, X, each head's W and Q/K/V and Z, concat × W_O.

    Every matrix is drawn with its real shape (one cell per number, coloured by value unless
    ``show_values``) and its shape written under it. Two rows, to fit the page's width: steps
    1-3 (words, X, each head's weights and Q/K/V), then steps 4-5 (each head's Z, the
    concatenation, W_O, the result).

    Parameters
    ----------
    words : sequence of str
        The input words (rows of X).
    X : array_like
        The layer's input.
    head_weights : sequence of (W_Q^h, W_K^h, W_V^h)
        Each head's three weight matrices.
    q, k, v, z : array_like
        Each head's queries, keys, values and output.
    concat : array_like
        The heads' outputs side by side.
    W_O : array_like
        Output weights.
    output : array_like
        ``concat @ W_O``: the layer's result.
    head_colors : sequence of str, optional
        A colour per head (default :func:`illustrated.plots.attention.head_colors`).
    show_values : bool
        Write the numbers instead of colouring the cells by value.
    scale : float
        Inches per cell at most; smaller when the figure would be wider than the page
        (style.MAX_FIGURE_WIDTH_IN).
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes. Matrices have gids ``"X"``, ``"W_Q^h"``, ``"W_K^h"``, ``"W_V^h"``, ``"Q_h"``,
        ``"K_h"``, ``"V_h"``, ``"Z_h"``, ``"concat"``, ``"W_O"``, ``"Z"`` on their frames (with
        ``"/frame"``) and cells (``"/cell-i-j"``); names under them with ``"/name"``; the five
        step captions are texts ``"step-1"`` ... ``"step-5"``.

    Shapes
    ------
    ``X`` (seq, d_model); ``W_*^h`` (d_model, d_k); ``q``, ``k``, ``v``, ``z``
    (n_heads, seq, d_k); ``concat`` (seq, n_heads * d_k); ``W_O`` (n_heads * d_k, d_model);
    ``output`` (seq, d_model).

    Raises
    ------
    ValueError
        If a shape does not fit the others or the counts of heads differ.

    References
    ----------
    Post "The Beast With Many Heads" (the recap figure); paper §3.2.2.
    """
    words = [str(w) for w in words]
    X = _as_values("X", X)
    seq, d_model = X.shape
    if len(words) != seq:
        raise ValueError(f"words: expected {seq} words (rows of X), got {len(words)}")
    per_head = {}
    for name, arr in (("q", q), ("k", k), ("v", v), ("z", z)):
        arr = np.asarray(arr, dtype=np.float64)
        if arr.ndim != 3 or arr.shape[1] != seq:
            raise ValueError(f"{name}: expected shape (n_heads, {seq}, d_k), got {arr.shape}")
        per_head[name] = arr
    n_heads, _, d_k = per_head["q"].shape
    if any(a.shape != (n_heads, seq, d_k) for a in per_head.values()):
        raise ValueError(f"q, k, v, z: expected the same shape {(n_heads, seq, d_k)}, got "
                         f"{[a.shape for a in per_head.values()]}")
    if len(head_weights) != n_heads:
        raise ValueError(f"head_weights: expected {n_heads} heads like q, got {len(head_weights)}")
    weights = []
    for h, triple in enumerate(head_weights):
        if len(triple) != 3:
            raise ValueError(f"head_weights[{h}]: expected (W_Q, W_K, W_V), got {len(triple)} items")
        mats = [_as_values(f"head_weights[{h}]", w) for w in triple]
        if any(m.shape != (d_model, d_k) for m in mats):
            raise ValueError(f"head_weights[{h}]: expected shapes ({d_model}, {d_k}), got "
                             f"{[m.shape for m in mats]}")
        weights.append(mats)
    concat, W_O, output = (_as_values(n, a) for n, a in
                           (("concat", concat), ("W_O", W_O), ("output", output)))
    if concat.shape != (seq, n_heads * d_k) or W_O.shape != (n_heads * d_k, d_model) or \
            output.shape != (seq, d_model):
        raise ValueError(f"concat, W_O, output: expected shapes {(seq, n_heads * d_k)}, "
                         f"{(n_heads * d_k, d_model)}, {(seq, d_model)}, got {concat.shape}, "
                         f"{W_O.shape}, {output.shape}")
    if head_colors is None:
        head_colors = default_head_colors(n_heads)
    elif len(head_colors) != n_heads:
        raise ValueError(f"head_colors: expected {n_heads} colours, got {len(head_colors)}")

    # Two rows, to fit the page: (1-3) words, X, each head's W and Q/K/V; below them
    # (4-5) each head's Z, the concatenation, W_O and the result.
    gap = 3.6                                  # between columns, in cells
    block = max(d_model, seq) + 3.0            # height of one head's block in the first row
    col_x = {"words": 0.0, "X": 5.5}
    col_x["W"] = col_x["X"] + d_model + gap
    col_x["QKV"] = col_x["W"] + 3 * d_k + 2 + gap
    width_a = col_x["QKV"] + 3 * d_k + 2 + 1.0
    col_x["Z"] = col_x["X"]
    col_x["concat"] = col_x["Z"] + max(d_k + gap, 13.5)   # room for caption 4
    col_x["W_O"] = col_x["concat"] + n_heads * d_k + 2.5
    col_x["out"] = col_x["W_O"] + d_model + 2.5
    width = max(width_a, col_x["out"] + d_model + 1.0)
    block_b = seq + 3.0                        # height of one head's Z in the second row
    top_b = n_heads * block + 4.0              # where the second row starts
    height_b = max(n_heads * block_b, n_heads * d_k + 3.0, d_model + 3.0)
    height = top_b + height_b
    scale = min(float(scale), (MAX_FIGURE_WIDTH_IN - 0.3) / width)
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(width * scale + 0.3, (height + 3.6) * scale)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(-0.5, width)
    ax.set_ylim(height, -3.6)
    ax.set_aspect("equal")
    ax.axis("off")
    fontsize = MIN_FONT_PT
    middle = n_heads * block / 2
    middle_b = top_b + height_b / 2

    def draw(name: str, gid: str, values: np.ndarray, x0: float, y_mid: float, color) -> None:
        term = MatrixTerm(name, values, color, show_values=show_values)
        _draw_matrix(ax, term, x0, y_mid, gid, 2, fontsize, show_shape=False)
        rows, cols = values.shape
        ax.texts[-1].set_text(f"{name}\n{rows}×{cols}")
        ax.texts[-1].set_fontsize(fontsize)

    captions = [("1) input\nwords", col_x["words"], -2.0),
                ("2) embed\neach word", col_x["X"], -2.0),
                ("3) per head: X times its $W^Q_h$, $W^K_h$, $W^V_h$\ngives $Q_h$, $K_h$, $V_h$",
                 col_x["W"], -2.0),
                ("4) attention in each\nhead gives its $Z_h$", col_x["Z"], top_b - 2.0),
                ("5) concatenate the $Z_h$,\nmultiply by $W^O$", col_x["concat"], top_b - 2.0)]
    for i, (text, x, y) in enumerate(captions, start=1):
        ax.text(x, y, text, ha="left", va="center", fontsize=fontsize + 1, color=_INK,
                fontweight="bold", gid=f"step-{i}")
    for i, word in enumerate(words):
        ax.text(col_x["X"] - 1.0, middle - seq / 2 + i + 0.5, word, ha="right", va="center",
                fontsize=fontsize + 2, color=_INK, gid=f"word-{i}")
    draw("X", "X", X, col_x["X"], middle, COLORS["input"])
    rows_b = n_heads * block_b
    for h in range(n_heads):
        y_mid = h * block + block / 2
        y_b = top_b + (height_b - rows_b) / 2 + h * block_b + block_b / 2
        color = head_colors[h]
        ax.text(col_x["W"] - 1.0, y_mid, f"head {h}", ha="right", va="center", rotation=90,
                fontsize=fontsize + 1, color=color, fontweight="bold", gid=f"head-{h}")
        ax.text(col_x["Z"] - 1.0, y_b, f"head {h}", ha="right", va="center",
                fontsize=fontsize + 1, color=color, fontweight="bold", gid=f"head-{h}-z")
        for m, (letter, role) in enumerate((("Q", "query"), ("K", "key"), ("V", "value"))):
            draw(f"$W^{letter}_{{{h}}}$", f"W_{letter}^{h}", weights[h][m],
                 col_x["W"] + m * (d_k + 1), y_mid, COLORS[role])
            draw(f"${letter}_{{{h}}}$", f"{letter}_{h}", per_head[letter.lower()][h],
                 col_x["QKV"] + m * (d_k + 1), y_mid, COLORS[role])
        draw(f"$Z_{{{h}}}$", f"Z_{h}", per_head["z"][h], col_x["Z"], y_b, color)
        for (x_from, y_from), (x_to, y_to) in (
                ((col_x["X"] + d_model + 0.3, middle), (col_x["W"] - 0.3, y_mid)),
                ((col_x["W"] + 3 * d_k + 2.3, y_mid), (col_x["QKV"] - 0.3, y_mid)),
                ((col_x["Z"] + d_k + 0.3, y_b), (col_x["concat"] - 0.3, middle_b))):
            ax.annotate("", (x_to, y_to), (x_from, y_from),
                        arrowprops={"arrowstyle": "-|>", "color": color, "linewidth": 0.8})
    draw("concat", "concat", concat, col_x["concat"], middle_b, COLORS["z"])
    for h in range(n_heads):  # which columns of the concatenation came from which head
        ax.add_patch(Rectangle((col_x["concat"] + h * d_k, middle_b - seq / 2 - 0.5), d_k, 0.35,
                               facecolor=head_colors[h], edgecolor="none", gid=f"concat/head-{h}"))
    ax.text(col_x["W_O"] - 1.25, middle_b, "×", ha="center", va="center", fontsize=_OP_FONT,
            color=_INK)
    draw("$W^O$", "W_O", W_O, col_x["W_O"], middle_b, COLORS["output"])
    ax.text(col_x["out"] - 1.25, middle_b, "=", ha="center", va="center", fontsize=_OP_FONT,
            color=_INK)
    draw("Z", "Z", output, col_x["out"], middle_b, COLORS["z"])
    return fig
