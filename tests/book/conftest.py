"""What every test of the book's figures uses: the rule that a figure reads on the page, in the
desktop column and in a phone's."""
import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

from figure_colors import assert_palette

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
