"""The drawing primitives the plot modules share: a frameless canvas, a labelled rounded box, how
a number is written in a cell, a heatmap with its colour bar, and the text colour that reads on
a given fill. Each module keeps its own look through the arguments (corner radius, weight of the
label, line width, colour map); nothing here computes the book's math, only how to draw it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colorbar import Colorbar
from matplotlib.colors import Colormap, Normalize, to_rgb
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import FancyBboxPatch
from matplotlib.transforms import Bbox

from .style import CMAP, COLORS, MIN_FONT_PT

__all__ = ["canvas", "box", "format_value", "ink_on", "heatmap", "write_values", "colorbar",
           "COLORBAR_WIDTH_IN", "COLORBAR_PAD_IN", "COLORBAR_ROOM_IN"]

#: Thickness of every colour bar, inches.
COLORBAR_WIDTH_IN = 0.15
#: Gap between a colour bar and the axes it belongs to, inches.
COLORBAR_PAD_IN = 0.1
#: What a colour bar takes right of its axes: the gap, the bar, its tick labels (up to four
#: characters such as "-0.5") and its label. Figures laid out by hand leave this much room
#: (wider tick labels narrow the axes, see :func:`colorbar`).
COLORBAR_ROOM_IN = 0.85

_INK = COLORS["text"]


def canvas(fig: Figure | None, figsize: tuple[float, float], *,
           rect: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
           xlim: tuple[float, float] | None = None,
           ylim: tuple[float, float] | None = None) -> tuple[Figure, Axes]:
    """A figure with one frameless axes at ``rect`` (figure fractions), for diagrams drawn in
    data coordinates.

    Parameters
    ----------
    fig : Figure or None
        A figure to clear and redraw into (for players); a new one of ``figsize`` (inches,
        width and height) by default.
    rect : (left, bottom, width, height) of the axes, as fractions of the figure.
    xlim, ylim : data limits of the axes, if given.

    Returns
    -------
    (Figure, Axes)

    Shapes
    ------
    Not applicable.

    Raises
    ------
    Nothing of its own.

    References
    ----------
    None (drawing only).
    """
    if fig is None:
        fig = plt.figure(figsize=figsize)
    else:
        fig.clear()
    ax = fig.add_axes(rect)
    if xlim is not None:
        ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.axis("off")
    return fig, ax


def box(ax: Axes, x: float, y: float, w: float, h: float, text: str, color: str, *, gid: str,
        fontsize: float = 11, bold: bool = True, rounding: float = 0.12, linewidth: float = 1.2,
        subtitle: str = "", dashed: bool = False, alpha: float = 1.0,
        label_background: bool = False, zorder: float | None = None) -> FancyBboxPatch:
    """A rounded box with its label centred in it (and an optional smaller line under it).

    Parameters
    ----------
    ax : the axes to draw on.   x, y, w, h : lower-left corner, width and height (data units).
    text : the label ("" for none).   color : fill colour.   gid : the box's gid; the label's
    is ``gid + "-label"``, the subtitle's ``gid + "-subtitle"``.
    fontsize : points; the subtitle is 3/4 of it, never below MIN_FONT_PT.
    bold : bold label.   rounding : corner radius (data units).   linewidth : edge width.
    subtitle : a second, smaller line.   dashed : dashed edge.   alpha : fill opacity.
    label_background : the label on a patch of the fill colour (readable over lines).
    zorder : of the box; the label sits one above it.

    Returns
    -------
    FancyBboxPatch: the box.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    Nothing of its own.

    References
    ----------
    The post's diagrams (boxes for the encoders, decoders and sub-layers).
    """
    layer = {} if zorder is None else {"zorder": zorder}
    patch = FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={rounding}",
                           facecolor=color, edgecolor=_INK, linewidth=linewidth, alpha=alpha,
                           linestyle="--" if dashed else "-", gid=gid, **layer)
    ax.add_patch(patch)
    label_layer = {} if zorder is None else {"zorder": zorder + 1}
    if text:
        ty = y + h / 2 + (0.16 * h if subtitle else 0.0)
        background = ({"bbox": {"facecolor": color, "edgecolor": "none", "pad": 1.0}}
                      if label_background else {})
        ax.text(x + w / 2, ty, text, ha="center", va="center", fontsize=fontsize,
                fontweight="bold" if bold else "normal", color=_INK, gid=f"{gid}-label",
                **background, **label_layer)
    if subtitle:
        ax.text(x + w / 2, y + h / 2 - 0.2 * h, subtitle, ha="center", va="center",
                fontsize=max(MIN_FONT_PT, fontsize * 0.75), color=_INK, gid=f"{gid}-subtitle",
                **label_layer)
    return patch


def format_value(value: float, decimals: int = 2, *, trim_zeros: bool = False) -> str:
    """How a number is written in a cell: integers without decimals, others rounded to
    ``decimals`` digits (trailing zeros dropped with ``trim_zeros``), and never "-0".

    Parameters
    ----------
    value : float
        The number.
    decimals : int
        Digits after the point for non-integers.
    trim_zeros : bool
        Drop trailing zeros (the positional-encoding tables: 0.8415, 0.0001, 1, -0.4161);
        kept otherwise (the matrices: 0.88, 0.10, 112).

    Returns
    -------
    str

    Shapes
    ------
    Scalar in, text out.

    Raises
    ------
    ValueError
        If ``decimals`` is negative.

    References
    ----------
    Post "Self-Attention in Detail" (numbers in the boxes) and "Representing The Order of The
    Sequence Using Positional Encoding" (the d=4 example).
    """
    if decimals < 0:
        raise ValueError(f"decimals: expected a non-negative integer, got {decimals!r}")
    value = float(value)
    if np.isfinite(value) and abs(value - round(value)) < 1e-9:
        return f"{int(round(value))}"
    text = f"{value:.{decimals}f}"
    if trim_zeros and "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text.lstrip("-").strip("0.") == "" else text


def _luminance(color) -> float:
    """Relative luminance of a colour (WCAG 2: sRGB channels linearised, then weighted)."""
    channels = np.asarray(to_rgb(color), dtype=np.float64)
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def ink_on(color) -> str:
    """The text colour that reads best on a fill: the book's dark ink or white, whichever has
    the higher contrast ratio with ``color`` (the one rule for numbers written in cells).

    Parameters
    ----------
    color : any matplotlib colour (name, hex string, RGB or RGBA tuple; alpha is ignored)
        The fill behind the text.

    Returns
    -------
    str
        ``"white"`` or the ink colour ``COLORS["text"]``.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``color`` is not a colour matplotlib understands.

    References
    ----------
    WCAG 2.1, "contrast ratio" and "relative luminance" (https://www.w3.org/TR/WCAG21/).
    """
    fill = _luminance(color)
    against_white = 1.05 / (fill + 0.05)
    against_ink = (fill + 0.05) / (_luminance(_INK) + 0.05)
    return "white" if against_white > against_ink else _INK


def _formatter(fmt: Callable[[float], str] | str) -> Callable[[float], str]:
    if callable(fmt):
        return fmt
    if isinstance(fmt, str):
        return fmt.format
    raise ValueError(f"fmt: expected a callable or a format string such as '{{:.2f}}', "
                     f"got {fmt!r}")


def _ticks(set_ticks, labels: Sequence[str] | None, n: int, name: str, **text) -> None:
    if labels is None:
        return
    labels = [str(label) for label in labels]
    if not labels:
        set_ticks([])
        return
    if len(labels) != n:
        raise ValueError(f"{name}: expected {n} labels (one per {name[:3]}), got {len(labels)}")
    set_ticks(range(n), labels, **text)


def heatmap(ax: Axes, values: object, *, row_labels: Sequence[str] | None = None,
            col_labels: Sequence[str] | None = None, cmap: str | Colormap = CMAP,
            vmin: float | None = None, vmax: float | None = None, norm: Normalize | None = None,
            annotate: bool = False, fmt: Callable[[float], str] | str = format_value,
            fontsize: float = MIN_FONT_PT, label_fontsize: float | None = 9.0,
            col_rotation: float = 0.0, aspect: str | float = "auto",
            interpolation: str = "nearest", gid: str | None = None) -> AxesImage:
    """A matrix drawn as coloured cells, optionally with its values written in them.

    Row ``i`` is drawn at y = i (top to bottom), column ``j`` at x = j. The values are drawn as
    given (NaN cells are left blank and unwritten); written values are coloured by
    :func:`ink_on` against their own cell, so they read on dark and pale cells alike.

    Parameters
    ----------
    ax : Axes
        Where to draw.
    values : array_like
        The matrix.
    row_labels, col_labels : sequence of str, optional
        One tick label per row / column; ``None`` keeps matplotlib's numeric ticks (for large
        tables), an empty sequence removes the ticks.
    cmap : colour map or its name
        Default the book's sequential map.
    vmin, vmax : float, optional
        Colour scale limits (default the data's); not together with ``norm``.
    norm : Normalize, optional
        A colour scale shared with other heatmaps.
    annotate : bool, default False
        Write each value in its cell.
    fmt : callable or str, default :func:`format_value`
        How a value is written: a function of the value, or a format string such as
        ``"{:.2f}"``.
    fontsize : float, default MIN_FONT_PT
        Points, of the written values.
    label_fontsize : float or None, default 9
        Points, of the tick labels (None: matplotlib's default).
    col_rotation : float, default 0
        Degrees the column labels are turned; between 0 and 90 they are right-aligned to
        their tick.
    aspect : "auto", "equal" or float, default "auto"
        Cell aspect (as :meth:`Axes.imshow`).
    interpolation : str, default "nearest"
        As :meth:`Axes.imshow`; "nearest" shows every cell as one flat colour.
    gid : str, optional
        The image's gid; the written values get ``gid + "-value-i-j"``.

    Returns
    -------
    AxesImage
        The image; ``image.get_array()`` is ``values`` (NaN masked).

    Shapes
    ------
    ``values`` (n_rows, n_cols); ``row_labels`` n_rows, ``col_labels`` n_cols labels.

    Raises
    ------
    ValueError
        If ``values`` is not a non-empty 2-D array, a label list has the wrong length,
        ``norm`` is given with ``vmin``/``vmax``, ``vmin >= vmax`` or ``fmt`` is neither a
        callable nor a str.

    References
    ----------
    None (drawing only); the attention heatmaps of post "The Beast With Many Heads" and the
    positional-encoding table of "Representing The Order of The Sequence Using Positional
    Encoding" are drawn with it.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"values: expected a non-empty 2-D array, got shape {np.shape(values)}")
    if norm is not None and (vmin is not None or vmax is not None):
        raise ValueError("norm, vmin, vmax: give either a norm or vmin/vmax, not both")
    if vmin is not None and vmax is not None and not vmin < vmax:
        raise ValueError(f"vmin, vmax: expected vmin < vmax, got {vmin}, {vmax}")
    write = _formatter(fmt)
    rows, cols = array.shape
    image = ax.imshow(array, cmap=cmap, vmin=vmin, vmax=vmax, norm=norm, aspect=aspect,
                      interpolation=interpolation)
    if gid is not None:
        image.set_gid(gid)
    size = {} if label_fontsize is None else {"fontsize": label_fontsize}
    turned = ({"rotation": col_rotation, "ha": "right"} if 0 < col_rotation < 90
              else {"rotation": col_rotation} if col_rotation else {})
    _ticks(ax.set_xticks, col_labels, cols, "col_labels", **size, **turned)
    _ticks(ax.set_yticks, row_labels, rows, "row_labels", **size)
    if annotate:
        write_values(ax, image, fmt=write, fontsize=fontsize, gid=gid)
    return image


def write_values(ax: Axes, image: AxesImage, *, fmt: Callable[[float], str] | str = format_value,
                 fontsize: float = MIN_FONT_PT, gid: str | None = None) -> None:
    """Write each finite value of a :func:`heatmap` image in its cell, in :func:`ink_on` its
    cell's colour (what ``heatmap(..., annotate=True)`` does; for figures that decide after
    their layout whether the cells are wide enough).

    Parameters
    ----------
    ax : Axes
        The heatmap's axes.
    image : AxesImage
        The image :func:`heatmap` returned.
    fmt : callable or str, default :func:`format_value`
        How a value is written.
    fontsize : float, default MIN_FONT_PT
        Points.
    gid : str, optional
        The texts get ``gid + "-value-i-j"``.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``fmt`` is neither a callable nor a str.

    References
    ----------
    None (drawing only).
    """
    write = _formatter(fmt)
    for (i, j), value in np.ndenumerate(np.ma.filled(image.get_array(), np.nan)):
        if not np.isfinite(value):
            continue
        ax.text(j, i, write(value), ha="center", va="center", fontsize=fontsize,
                color=ink_on(image.cmap(image.norm(value))),
                gid=None if gid is None else f"{gid}-value-{i}-{j}")


def _pull_inside(fig: Figure, bar: Colorbar, parents: list[Axes], box: Bbox) -> None:
    """In a figure laid out by hand: if the bar's tick labels or label (unusually wide ones,
    such as "-0.0015") would end past the figure's right edge, narrow the axes and move the
    bar left by that much."""
    get_renderer = getattr(fig.canvas, "get_renderer", None)
    if get_renderer is None:
        return
    over = (bar.ax.get_tightbbox(get_renderer()).x1 - fig.bbox.x1) / fig.bbox.width
    if over <= 0:
        return
    shift = over + 2.0 / fig.bbox.width  # and two pixels to spare
    keep = max(0.5, (box.width - shift) / box.width)
    for ax in parents:
        pos = ax.get_position()
        ax.set_position((box.x0 + (pos.x0 - box.x0) * keep, pos.y0, pos.width * keep,
                         pos.height))
    pos = bar.ax.get_position()
    bar.ax.set_position((pos.x0 - box.width * (1 - keep), pos.y0, pos.width, pos.height))


def colorbar(fig: Figure, mappable: ScalarMappable, ax: Axes | Sequence[Axes], *,
             label: str = "") -> Colorbar:
    """The colour bar of one or more heatmaps, right of them, the same size in every figure.

    The bar is :data:`COLORBAR_WIDTH_IN` thick, :data:`COLORBAR_PAD_IN` from its axes and as
    tall as they are. In a figure with a layout engine (constrained layout) the engine makes
    room for the bar, its ticks and ``label``, so they stay inside the figure; add titles
    before the bar, since it takes the axes' height when it is made. In a figure laid out by
    hand the bar is placed right of the axes without shrinking them, and the figure must leave
    :data:`COLORBAR_ROOM_IN` inches there.

    Parameters
    ----------
    fig : Figure
        The figure of the axes.
    mappable : ScalarMappable
        What the bar shows: an image from :func:`heatmap`, or a ``ScalarMappable(norm, cmap)``
        for cells drawn as patches.
    ax : Axes or sequence of Axes
        The axes the bar belongs to (it spans all of them).
    label : str, optional
        Written along the bar.

    Returns
    -------
    Colorbar

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``ax`` is an empty sequence.

    References
    ----------
    None (drawing only).
    """
    parents = [ax] if isinstance(ax, Axes) else list(np.ravel(np.asarray(ax, dtype=object)))
    if not parents:
        raise ValueError("ax: expected at least one axes for the colour bar, got none")
    width_in, height_in = fig.get_size_inches()
    engine = fig.get_layout_engine()
    if engine is None:
        box = Bbox.union([p.get_position() for p in parents])  # figure fractions
        cax = fig.add_axes((box.x1 + COLORBAR_PAD_IN / width_in, box.y0,
                            COLORBAR_WIDTH_IN / width_in, box.height))
        bar = fig.colorbar(mappable, cax=cax, label=label or None)
        _pull_inside(fig, bar, parents, box)
    else:
        # Lay the axes out first, so that the bar is sized on them as they will be drawn: as
        # tall as they are (its aspect), COLORBAR_WIDTH_IN thick (its slot is a little wider,
        # since the engine narrows the axes to make room for it).
        engine.execute(fig)
        box = Bbox.union([p.get_position() for p in parents])
        span = box.width * width_in
        bar = fig.colorbar(mappable, ax=parents, fraction=1.4 * COLORBAR_WIDTH_IN / span,
                           pad=COLORBAR_PAD_IN / span,
                           aspect=max(1.0, box.height * height_in / COLORBAR_WIDTH_IN),
                           label=label or None)
    return bar
