"""One palette for the whole book: the post's colours for inputs, queries, keys and values."""
from __future__ import annotations

__all__ = ["COLORS", "CMAP", "DIVERGING_CMAP", "CONTENT_WIDTH_PX", "MIN_FONT_PT", "MIN_TEXT_PX",
           "MAX_WIDTH_IN", "MAX_FIGURE_WIDTH_IN", "TIGHT_PAD_IN"]

# Inputs green, queries purple, keys orange, values blue (the post's colour code), plus the
# colours of the other boxes of its diagrams.
COLORS = {
    "input": "#7dbb6e",
    "query": "#a77bca",
    "key": "#f0a35e",
    "value": "#6aa7d8",
    "z": "#e57373",
    "encoder": "#9ccc65",
    "decoder": "#f48fb1",
    "ffn": "#80cbc4",
    "attention": "#ffcc80",
    "norm": "#fff59d",
    "output": "#b0bec5",
    "text": "#263238",
}
CMAP = "viridis"            # sequential values (attention weights, probabilities)
DIVERGING_CMAP = "RdBu_r"   # signed values (embeddings, positional encodings)

# Sizes for the page. The book's content column is about 672 CSS px wide (a 1280 px window), and
# a figure wider than that is scaled down to fit, its text with it. Text of MIN_FONT_PT drawn at
# the notebook's 100 dpi reads at MIN_TEXT_PX (9 px) or more as long as the figure is at most
# about 8.3 in wide (MAX_WIDTH_IN); tests/browser checks the displayed scale of every figure of
# the built pages against it, and tests/test_plot_fonts.py every plot function's text and width.
CONTENT_WIDTH_PX = 672
MIN_FONT_PT = 8.0
MIN_TEXT_PX = 9.0
#: Widest picture (inches) whose MIN_FONT_PT text still reads at MIN_TEXT_PX once the page scales
#: it to CONTENT_WIDTH_PX: 672 px * 8 pt / (72 pt/in * 9 px) = 8.3 in, whatever the dpi.
MAX_WIDTH_IN = CONTENT_WIDTH_PX * MIN_FONT_PT / (72.0 * MIN_TEXT_PX)
#: The notebook saves a figure cropped to its drawn content plus this margin on each side
#: (matplotlib's bbox_inches="tight", pad_inches=0.1 of the inline backend).
TIGHT_PAD_IN = 0.1
#: What the plots draw to: the widest figure (its drawn content, inches) that stays within
#: MAX_WIDTH_IN with the inline backend's margins, rounded down.
MAX_FIGURE_WIDTH_IN = 8.0
