"""The figure kit every chapter draws with: the palette, a frameless canvas, boxes and arrows, how
a number is written, and a heatmap with its colour bar. It draws what it is given; the math is
computed by the package and the chapter modules.
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colorbar import Colorbar
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.transforms import Bbox

from . import palette

__all__ = ["COLORS", "HEAD_COLORS", "CMAP", "DIVERGING_CMAP", "MIN_FONT_PT", "DESKTOP_WIDTH_IN",
           "PHONE_WIDTH_IN", "PHONE_TEXT_CHARS", "MAX_FIGURE_WIDTH_IN", "COLUMN_WIDTH_IN", "DPI",
           "narrow", "wrap", "drawn_texts", "smallest_text_pt", "canvas", "box", "arrow", "title",
           "format_value", "probability_text", "ink_on", "heatmap", "write_values", "colorbar"]

# The colours of book/palette.py under the names the figures use: a tensor kind by its name
# (input, query, key, value, weights, z, memory, state, probs), a layer or ink by its role.
COLORS = {name: t.color for name, t in palette.TENSORS.items()} | dict(palette.ROLES)
# One colour per attention head, the same in the page's live view (site/js/selfattention.js).
HEAD_COLORS = palette.HEAD_COLORS
CMAP = palette.COLORMAPS["sequential"]           # attention weights, probabilities
DIVERGING_CMAP = palette.COLORMAPS["diverging"]  # signed values: embeddings, positional encodings

# Every draw function takes a keyword-only ``width`` (inches) and lays itself out for it. The
# book draws each figure twice: DESKTOP_WIDTH_IN for the page's text column (672 CSS px at
# 1280 px, so a figure drawn at DPI is shown at most 1.2x smaller and MIN_FONT_PT text stays at
# 9 px or more: 8 pt * 100/72 / 1.2 = 9.3 px), and PHONE_WIDTH_IN for a phone's column (about
# 360 CSS px, where 8 pt reads at about 11 px); the page picks the one that fits
# (book/interactive.py). A narrow figure is laid out for portrait (stacked panels, wrapped
# labels, fewer columns), not shrunk.
MIN_FONT_PT = 8.0
DESKTOP_WIDTH_IN = 8.0
PHONE_WIDTH_IN = 3.6
MAX_FIGURE_WIDTH_IN = DESKTOP_WIDTH_IN  # the widest a figure may be drawn
# The desktop column itself (672 CSS px at 1280 px): a figure of numbers written in cells is
# drawn this wide, so that the page shows it at its own size and its numbers at full size.
COLUMN_WIDTH_IN = 6.72
# A printed table (a cell's text output) is read on a phone too: a line of a cell's output holds
# this many characters at 390 CSS px before it wraps (tests/browser/test_phone_tables.py).
PHONE_TEXT_CHARS = 36
DPI = 100
COLORBAR_WIDTH_IN, COLORBAR_PAD_IN = 0.15, 0.1
_INK = COLORS["text"]

def narrow(width: float) -> bool:
    """Whether a figure ``width`` inches wide is laid out for a phone's column (portrait)."""
    return width < 5.0


def wrap(text: str, chars: int) -> str:
    """``text`` broken into lines of at most ``chars`` characters, at spaces."""
    return "\n".join(textwrap.wrap(text, chars, break_long_words=False)) or text


def drawn_texts(fig: Figure) -> list[tuple[float, str]]:
    """(font size in pt, text) of every non-blank text ``fig`` draws, as its renderer draws them:
    labels, tick labels, legends, values written in heatmap cells, table cells, annotations
    (drawing the figure once, on an Agg renderer of its own)."""
    from matplotlib.backends.backend_agg import RendererAgg

    width, height = fig.get_size_inches() * fig.dpi
    renderer, drawn = RendererAgg(int(width), int(height), fig.dpi), []
    draw_text = renderer.draw_text

    def record(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if str(s).strip():
            drawn.append((float(prop.get_size_in_points()), str(s)))
        return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = record
    fig.draw(renderer)
    return drawn


def smallest_text_pt(fig: Figure) -> float | None:
    """The font size (pt) of the smallest text ``fig`` draws (drawn_texts), None if it draws
    none."""
    return min((size for size, _ in drawn_texts(fig)), default=None)


def canvas(figsize: tuple[float, float], xlim: tuple[float, float], ylim: tuple[float, float], *,
           rect: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)) -> tuple[Figure, Axes]:
    """A figure with one frameless axes in data coordinates, for diagrams."""
    fig = plt.figure(figsize=figsize, dpi=DPI)
    ax = fig.add_axes(rect)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")
    return fig, ax


def box(ax: Axes, x: float, y: float, w: float, h: float, text: str, color: str | None = None,
        *, kind: str | None = None,
        fontsize: float = 11, bold: bool = True, subtitle: str = "", dashed: bool = False,
        rounding: float = 0.12, alpha: float = 1.0, zorder: float = 2,
        subtitle_size: float | None = None) -> FancyBboxPatch:
    """A rounded box at (x, y) of size (w, h) with its label centred (and a smaller subtitle, of
    ``subtitle_size`` pt: by default 3/4 of the label's, at least MIN_FONT_PT); ``kind`` (a tensor
    kind of book/palette.py) gives its colour and box style."""
    if kind is not None:
        style = palette.box_style(kind)
        color, rounding, dashed = style["color"], style["rounding"], dashed or style["dashed"]
    patch = FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={rounding}",
                           facecolor=color, edgecolor=_INK, linewidth=1.2, alpha=alpha,
                           linestyle="--" if dashed else "-", zorder=zorder)
    ax.add_patch(patch)
    lines = subtitle.count("\n")  # a wrapped subtitle: the title higher, the subtitle lower
    if text:
        ax.text(x + w / 2, y + h / 2 + ((0.16 + 0.06 * lines) * h if subtitle else 0), text,
                ha="center", va="center", fontsize=fontsize,
                fontweight="bold" if bold else "normal", color=_INK, zorder=zorder + 1)
    if subtitle:
        ax.text(x + w / 2, y + h / 2 - (0.2 + 0.06 * lines) * h, subtitle, ha="center",
                va="center", fontsize=subtitle_size or max(MIN_FONT_PT, fontsize * 0.75),
                color=_INK,
                zorder=zorder + 1, linespacing=1.1)
    return patch


def arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], *, color: str = _INK,
          width: float = 1.3, dashed: bool = False, curve: float = 0.0) -> FancyArrowPatch:
    """An arrow from ``start`` to ``end`` (data coordinates), optionally bent by ``curve``."""
    patch = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color=color,
                            linewidth=width, linestyle="--" if dashed else "-",
                            connectionstyle=f"arc3,rad={curve}", shrinkA=0, shrinkB=0, zorder=1)
    ax.add_patch(patch)
    return patch


def title(ax: Axes, text: str, fontsize: float = 11) -> None:
    """A figure title at the top of a diagram's axes."""
    ax.set_title(text, fontsize=fontsize, color=_INK, pad=4)


def format_value(value: float, decimals: int = 2, *, trim_zeros: bool = False) -> str:
    """How a number is written in a cell: integers bare, others to ``decimals``, never "-0"."""
    value = float(value)
    if np.isfinite(value) and abs(value - round(value)) < 1e-9:
        return f"{int(round(value))}"
    text = f"{value:.{decimals}f}"
    if trim_zeros and "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text.lstrip("-").strip("0.") == "" else text


def probability_text(p: float) -> str:
    """A probability as a cell shows it: two decimals; "<.01" or ">.99" where two decimals would
    print 0.00 or 1.00 for a value that is not 0 or 1 (a softmax gives neither)."""
    p = float(p)
    if p in (0.0, 1.0):
        return f"{p:.0f}"
    return "<.01" if p < 0.005 else ">.99" if p >= 0.995 else f"{p:.2f}"


def _luminance(color) -> float:
    channels = np.asarray(to_rgb(color), dtype=np.float64)
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def ink_on(color) -> str:
    """White or the book's ink, whichever contrasts more with ``color`` (WCAG 2.1 ratio)."""
    fill = _luminance(color)
    return "white" if 1.05 / (fill + 0.05) > (fill + 0.05) / (_luminance(_INK) + 0.05) else _INK


def heatmap(ax: Axes, values, *, row_labels: Sequence[str] | None = None,
            col_labels: Sequence[str] | None = None, cmap=CMAP, vmin: float | None = None,
            vmax: float | None = None, norm=None, annotate: bool = False,
            fmt: Callable[[float], str] = format_value, fontsize: float = MIN_FONT_PT,
            label_fontsize: float = 9.0, col_rotation: float = 0.0,
            aspect: str | float = "auto") -> AxesImage:
    """A matrix as coloured cells (row i at y = i), its values optionally written in them."""
    array = np.asarray(values, dtype=np.float64)
    image = ax.imshow(array, cmap=cmap, vmin=vmin, vmax=vmax, norm=norm, aspect=aspect,
                      interpolation="nearest")
    turned = {"rotation": col_rotation, "ha": "right"} if 0 < col_rotation < 90 else {}
    for labels, set_ticks, n, extra in ((col_labels, ax.set_xticks, array.shape[1], turned),
                                        (row_labels, ax.set_yticks, array.shape[0], {})):
        if labels is not None:
            set_ticks(range(n) if len(labels) else [], [str(t) for t in labels],
                      fontsize=label_fontsize, **extra)
    if annotate:
        write_values(ax, image, fmt=fmt, fontsize=fontsize)
    return image


def write_values(ax: Axes, image: AxesImage, *, fmt: Callable[[float], str] = format_value,
                 fontsize: float = MIN_FONT_PT) -> None:
    """Write each finite value of a heatmap in its cell, in the ink that reads on its colour."""
    for (i, j), value in np.ndenumerate(np.ma.filled(image.get_array(), np.nan)):
        if np.isfinite(value):
            ax.text(j, i, fmt(value), ha="center", va="center", fontsize=fontsize,
                    color=ink_on(image.cmap(image.norm(value))))


def colorbar(fig: Figure, mappable: ScalarMappable, ax: Axes | Sequence[Axes], *,
             label: str = "", below: bool = False) -> Colorbar:
    """The colour bar of one or more heatmaps, right of them (``below`` them, across, in a
    phone's column), the same thickness everywhere.

    With constrained layout the engine makes room for it; in a figure laid out by hand the
    figure must leave about 0.85 in right of the axes (0.6 in below them).
    """
    parents = [ax] if isinstance(ax, Axes) else list(np.ravel(np.asarray(ax, dtype=object)))
    width_in, height_in = fig.get_size_inches()
    engine = fig.get_layout_engine()
    if engine is None:
        area = Bbox.union([p.get_position() for p in parents])
        if below:
            cax = fig.add_axes((area.x0, area.y0 - (COLORBAR_PAD_IN + COLORBAR_WIDTH_IN) / height_in,
                                area.width, COLORBAR_WIDTH_IN / height_in))
            bar = fig.colorbar(mappable, cax=cax, orientation="horizontal", label=label or None)
        else:
            inset = min(0.1 / height_in, area.height / 10)  # room for the end ticks' labels
            cax = fig.add_axes((area.x1 + COLORBAR_PAD_IN / width_in, area.y0 + inset,
                                COLORBAR_WIDTH_IN / width_in, area.height - 2 * inset))
            bar = fig.colorbar(mappable, cax=cax, label=label or None)
        return _small_ticks(bar)
    engine.execute(fig)  # size the bar on the axes as they will be drawn
    area = Bbox.union([p.get_position() for p in parents])
    across, along = (area.height * height_in, area.width * width_in) if below else (
        area.width * width_in, area.height * height_in)
    return _small_ticks(fig.colorbar(
        mappable, ax=parents, location="bottom" if below else "right",
        fraction=1.4 * COLORBAR_WIDTH_IN / across, pad=COLORBAR_PAD_IN / across,
        aspect=max(1.0, along / COLORBAR_WIDTH_IN), label=label or None))


def _small_ticks(bar: Colorbar) -> Colorbar:
    bar.ax.tick_params(labelsize=9)
    bar.ax.xaxis.label.set_size(9)
    bar.ax.yaxis.label.set_size(9)
    return bar
