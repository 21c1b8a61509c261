"""What every test of the book's figures uses: the rule that a figure reads on the page."""
import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

from illustrated.book.kit import MAX_FIGURE_WIDTH_IN, MIN_FONT_PT

matplotlib.use("Agg")


def assert_legible(fig) -> None:
    """No text below MIN_FONT_PT and no wider than MAX_FIGURE_WIDTH_IN as drawn (then closed).

    The page shows a figure at most 672 px wide: 8 pt text of an 8 in figure drawn at 100 dpi
    then reads at 9.3 px (the browser tests measure the same on the built pages).
    """
    try:
        renderer = fig.canvas.get_renderer()
        fig.draw(renderer)
        small = sorted({(round(t.get_fontsize(), 2), t.get_text()[:30]) for t in fig.findobj(Text)
                        if t.get_visible() and t.get_text().strip() and t.get_figure() is fig
                        and t.get_fontsize() < MIN_FONT_PT - 1e-9})
        assert not small, f"text below {MIN_FONT_PT} pt: {small[:5]}"
        assert fig.get_figwidth() <= MAX_FIGURE_WIDTH_IN + 0.3, f"figure {fig.get_figwidth():.2f} in wide"
        drawn = fig.get_tightbbox(renderer).width
        assert drawn <= MAX_FIGURE_WIDTH_IN + 1e-6, f"drawn {drawn:.2f} in wide"
    finally:
        plt.close(fig)


@pytest.fixture
def legible():
    return assert_legible
