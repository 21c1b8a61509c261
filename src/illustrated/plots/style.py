"""One palette for the whole book: the post's colours for inputs, queries, keys and values."""
from __future__ import annotations

__all__ = ["COLORS", "CMAP", "DIVERGING_CMAP", "CONTENT_WIDTH_PX", "MIN_FONT_PT", "MIN_TEXT_PX"]

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
# about 8.3 in wide; tests/browser checks the displayed scale of every figure of the built pages
# against it (the plots still drawing text below MIN_FONT_PT are listed there, issue 13).
CONTENT_WIDTH_PX = 672
MIN_FONT_PT = 8.0
MIN_TEXT_PX = 9.0
