"""The book's one visual language: a colour and a box style for each kind of tensor, declared
once. Every figure (book/kit.py and the chapter modules) draws with it, and the page reads the
same declaration as CSS custom properties (``--il-<kind>`` in _static/illustrated.css, checked
equal by tests/book/test_palette.py), which the live widgets use.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tensor", "TENSORS", "ROLES", "HEAD_COLORS", "COLORMAPS", "ALL_COLORS", "RAMP_STOPS",
           "css", "ramp", "box_style", "legend", "legend_html"]


@dataclass(frozen=True)
class Tensor:
    """A kind of tensor as every figure draws it: its fill, its name in a legend, and its box
    (rounded corners for a vector, square cells for a table of weights or probabilities, a
    dashed outline for what is read from elsewhere)."""
    color: str
    label: str
    rounding: float = 0.12
    dashed: bool = False


# The post's colour code: inputs green, queries purple, keys orange, values blue, outputs red.
TENSORS = {
    "input": Tensor("#7dbb6e", "input embedding x"),
    "query": Tensor("#a77bca", "query q"),
    "key": Tensor("#f0a35e", "key k"),
    "value": Tensor("#6aa7d8", "value v"),
    "weights": Tensor("#ffcc80", "attention weights", rounding=0.0),
    "z": Tensor("#e57373", "output z"),
    "memory": Tensor("#9ccc65", "encoder memory", dashed=True),
    "state": Tensor("#f48fb1", "decoder state"),
    "probs": Tensor("#b0bec5", "logits / probabilities", rounding=0.0),
}
# Layers and ink: what is not a tensor (the boxes of the diagrams, text, the chosen word).
ROLES = {
    "encoder": TENSORS["memory"].color, "decoder": TENSORS["state"].color, "ffn": "#80cbc4",
    "attention": TENSORS["weights"].color, "norm": "#fff59d", "output": TENSORS["probs"].color,
    "text": "#263238", "muted": "#78909c", "faint": "#cfd8dc", "off": "#eceff1",
    "blank": "#f5f5f5", "chosen": "#c0392b", "kept": "#e1d5f0", "finished": "#d7ecd0",
    "finished-edge": "#4e8a3e", "dropped-edge": "#9e9e9e", "cached": "#fde9d5",
    "white": "#ffffff", "black": "#000000",
}
# One colour per attention head, the same in the page's live views.
HEAD_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#17becf")
# Values drawn as colour: weights and probabilities (sequential), signed numbers such as
# embeddings (diverging), and a family of curves that differ in one setting (greys).
COLORMAPS = {"sequential": "viridis", "diverging": "RdBu_r", "series": "Greys"}
# The page draws a weight or a probability as one of this many colours of the sequential map.
RAMP_STOPS = 9
ALL_COLORS = ({t.color for t in TENSORS.values()} | set(ROLES.values()) | set(HEAD_COLORS))


def box_style(kind: str) -> dict:
    """kit.box's keywords for a box holding a tensor of ``kind`` (a key of TENSORS)."""
    t = TENSORS[kind]
    return {"color": t.color, "rounding": t.rounding, "dashed": t.dashed}


def legend(ax, kinds, **kwargs):
    """A legend naming each tensor kind of ``kinds`` by its colour and box, for the first figure
    in which the kind appears."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=TENSORS[k].color, edgecolor=ROLES["text"],
                     linestyle="--" if TENSORS[k].dashed else "-", label=TENSORS[k].label)
               for k in kinds]
    options = {"fontsize": 9, "frameon": False, "handlelength": 1.4} | kwargs
    return ax.legend(handles=handles, **options)


def legend_html(kinds) -> str:
    """The legend as the page shows it above a figure: a swatch in each kind's colour and box
    (its CSS custom property), and the kind's name."""
    items = "".join(
        f'<li><span class="il-swatch-box" data-kind="{k}" style="background: var(--il-{k}); '
        f'border-style: {"dashed" if TENSORS[k].dashed else "solid"}; '
        f'border-radius: {"0" if TENSORS[k].rounding == 0 else "3px"}"></span>{TENSORS[k].label}</li>'
        for k in kinds)
    return f'<ul class="il-key-legend" aria-label="colour key">{items}</ul>'


def _luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of a #rrggbb colour."""
    channels = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ramp(stops: int = RAMP_STOPS) -> list[tuple[str, str]]:
    """The sequential colour map (COLORMAPS) at ``stops`` evenly spaced values from 0 to 1, each
    as (fill, ink): the fill, and white or the text colour, whichever contrasts more with it."""
    import matplotlib
    from matplotlib.colors import to_hex

    cmap = matplotlib.colormaps[COLORMAPS["sequential"]]
    text = _luminance(ROLES["text"])
    out = []
    for i in range(stops):
        fill = to_hex(cmap(i / (stops - 1)))
        lum = _luminance(fill)
        out.append((fill, "#ffffff" if 1.05 / (lum + 0.05) > (lum + 0.05) / (text + 0.05)
                    else ROLES["text"]))
    return out


def css() -> str:
    """The palette as the CSS custom properties of the page's :root (``--il-<name>``; the
    sequential map as ``--il-seq-<i>`` and the ink to write on it as ``--il-seq-ink-<i>``)."""
    lines = [f"  --il-{name}: {t.color};" for name, t in TENSORS.items()]
    lines += [f"  --il-{name}: {color};" for name, color in ROLES.items()
              if name not in ("white", "black")]
    lines += [f"  --il-head-{i}: {color};" for i, color in enumerate(HEAD_COLORS)]
    lines += [f"  --il-seq-{i}: {fill};\n  --il-seq-ink-{i}: {ink};"
              for i, (fill, ink) in enumerate(ramp())]
    return ":root {\n" + "\n".join(lines) + "\n}\n"
