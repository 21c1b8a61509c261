"""The drawing primitives the plot modules share: a frameless canvas, a labelled rounded box, and
how a number is written in a cell. Each module keeps its own look through the arguments (corner
radius, weight of the label, line width); nothing here computes math.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from .style import COLORS, MIN_FONT_PT

__all__ = ["canvas", "box", "format_value"]

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
