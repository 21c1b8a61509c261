"""What every test of the book's figures uses: the rule that a figure reads on the page, in the
desktop column and in a phone's."""
import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

import numpy as np
from matplotlib.colors import to_rgb, to_rgba

from illustrated.book import palette
from illustrated.book.kit import DESKTOP_WIDTH_IN, MIN_FONT_PT, PHONE_WIDTH_IN, drawn_texts

matplotlib.use("Agg")

#: The two widths the book draws every figure for (book/kit.py).
WIDTHS = (DESKTOP_WIDTH_IN, PHONE_WIDTH_IN)
#: How far (inches) drawn ink may pass the figure's edge: antialiasing, a line's cap.
EDGE_IN = 0.03


def _texts(fig):
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and t.get_figure() is not None and (t.axes is None or t.axes.get_visible())]


def assert_legible(fig, width: float = DESKTOP_WIDTH_IN) -> None:
    """No text drawn below MIN_FONT_PT (book.kit.drawn_texts: table cells and values in cells
    included), the figure no wider than ``width`` (inches) and nothing drawn past its edges,
    where the saved picture would cut it (then the figure is closed).

    The desktop column shows a figure at most 688 px wide: 8 pt text of an 8 in figure drawn at
    100 dpi reads at 9.6 px; a phone's column (about 358 px at 390 px) shows a 3.6 in figure at
    10.9 px (the browser tests measure the same on the built pages).
    """
    try:
        assert_palette(fig)
        renderer = fig.canvas.get_renderer()
        fig.draw(renderer)
        small = sorted({(round(size, 2), text[:30]) for size, text in drawn_texts(fig)
                        if size < MIN_FONT_PT - 1e-9})  # every text drawn, table cells included
        assert not small, f"text below {MIN_FONT_PT} pt: {small[:5]}"
        w, h = fig.get_size_inches()
        assert w <= width + 1e-6, f"figure {w:.2f} in wide for a {width} in column"
        drawn = fig.get_tightbbox(renderer)  # inches
        assert (drawn.x0 >= -EDGE_IN and drawn.y0 >= -EDGE_IN and drawn.x1 <= w + EDGE_IN
                and drawn.y1 <= h + EDGE_IN), (
            f"drawn {drawn.bounds} past the figure's edges (0, 0, {w:.2f}, {h:.2f}): "
            f"{_outside(fig, renderer, w, h)}")
    finally:
        plt.close(fig)


_DECLARED = np.array([to_rgb(c) for c in palette.ALL_COLORS])
_RAMPS = np.concatenate([matplotlib.colormaps[name](np.linspace(0, 1, 256))[:, :3]
                         for name in palette.COLORMAPS.values()])


def drawn_colors(fig) -> list[tuple[str, tuple]]:
    """(what, rgb) of every colour the figure's own artists draw with: the patches, lines and
    collections its code adds to each axes (boxes, bars, cells, curves), their outlines, and the
    texts written in the axes. Frames, spines, ticks and legend boxes are matplotlib's, not ours."""
    found = []
    for ax in fig.axes:
        for patch in ax.patches:
            if patch.get_visible():
                found += [("patch face", to_rgba(patch.get_facecolor())),
                          ("patch edge", to_rgba(patch.get_edgecolor()))]
        for line in ax.lines:
            if line.get_visible():
                found += [("line", to_rgba(line.get_color())),
                          ("marker", to_rgba(line.get_markerfacecolor()))]
        for collection in ax.collections:
            found += [("collection", tuple(c)) for c in collection.get_facecolors()]
        for text in ax.texts:
            if text.get_visible() and text.get_text().strip():
                found.append((f"text {text.get_text()[:20]!r}", to_rgba(text.get_color())))
                box = text.get_bbox_patch()
                if box is not None:
                    found.append(("text box", to_rgba(box.get_facecolor())))
    return [(what, rgba[:3]) for what, rgba in found if rgba[3] > 0]


def assert_palette(fig) -> None:
    """Every colour the figure's own artists draw with is one of book/palette.py's, or a value
    on one of its colour maps (a heatmap cell, a faint curve)."""
    def declared(rgb):
        rgb = np.asarray(rgb)
        return (np.abs(_DECLARED - rgb).max(axis=1).min() < 2 / 255
                or np.abs(_RAMPS - rgb).max(axis=1).min() < 3 / 255)
    stray = sorted({(what, "#%02x%02x%02x" % tuple(round(255 * c) for c in rgb))
                    for what, rgb in drawn_colors(fig) if not declared(rgb)})
    assert not stray, f"colours outside book/palette.py: {stray[:6]}"


def _outside(fig, renderer, w, h):
    """The texts drawn past the figure's edges, for the message."""
    dpi = fig.dpi
    return [t.get_text()[:30] for t in _texts(fig) if not (
        (box := t.get_window_extent(renderer)).x0 >= -EDGE_IN * dpi
        and box.y0 >= -EDGE_IN * dpi and box.x1 <= (w + EDGE_IN) * dpi
        and box.y1 <= (h + EDGE_IN) * dpi)][:5]


@pytest.fixture
def legible():
    return assert_legible


@pytest.fixture(params=WIDTHS, ids=["desktop", "phone"])
def width(request):
    """Each test that takes it runs for the desktop column and for a phone's."""
    return request.param
