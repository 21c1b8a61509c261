"""One palette for the whole book: the post's colours for inputs, queries, keys and values."""
from __future__ import annotations

__all__ = ["COLORS", "CMAP", "DIVERGING_CMAP"]

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
