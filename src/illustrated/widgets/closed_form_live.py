"""Live widgets for the static book: HTML that the book's JavaScript brings to life, no kernel.

An ipywidget is dead in the rendered page (its Python callback needs a kernel). Each function
here returns :class:`IPython.display.HTML` holding a container with its parameters as data
attributes and a ``<script type="module">`` that imports ``site/js/closed_form_<kind>.js`` from
the built site (``../_illustrated/js/`` from ``chapters/NAME.html``) and mounts it. Two kinds:

* closed-form widgets (softmax with d_k, positional encoding, add & norm, label smoothing)
  recompute in a few lines of JavaScript the numbers of :mod:`illustrated.reference`;
* :func:`panels_live` embeds a handful of precomputed figures and switches between them, for
  widgets whose pictures come from a model (no recomputation in the browser).

In Jupyter or Colab the script finds no module and the container only shows its fallback line;
the chapter's Python widget next to it is the live version there.

References: DESIGN.md "Widgets in the static book".
"""
from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import math
import numbers
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
from IPython.display import HTML
from PIL import Image

from ..reference import LAYOUTS

__all__ = ["softmax_live", "positional_live", "add_norm_live", "label_smoothing_live",
           "panels_live", "FALLBACK", "MAX_PANELS"]

FALLBACK = "Live version: runs in the online book (here, use the Python widget above)."
"""The line a reader sees where the book's JavaScript does not run (Jupyter, Colab, GitHub)."""

MAX_PANELS = 64
"""Most control combinations :func:`panels_live` will draw."""

_JS = "../_illustrated/js/closed_form_{kind}.js"


def _live(kind: str, params: dict, body: str = "") -> HTML:
    """The container, its fallback line, ``body`` (already escaped) and the mounting script."""
    data = json.dumps(params, sort_keys=True, ensure_ascii=False)
    ident = f"il-live-{kind}-{hashlib.sha1((data + body).encode()).hexdigest()[:10]}"
    script = (f'import {{ mount }} from "{_JS.format(kind=kind)}"; '
              f'mount(document.getElementById("{ident}"));')
    return HTML(f'<div class="il-live il-live-{kind}" id="{ident}" '
                f'data-params="{html.escape(data, quote=True)}">'
                f'<p class="il-live-fallback"><em>{html.escape(FALLBACK)}</em></p>{body}</div>'
                f'<script type="module">{script}</script>')


def _number(name: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{name}: expected a number in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def _integer(name: str, value: object, low: int, high: int, even: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not low <= value <= high or (even and value % 2):
        kind = "an even int" if even else "an int"
        raise ValueError(f"{name}: expected {kind} in [{low}, {high}], got {value!r}")
    return int(value)


def _vector(name: str, value: object) -> list[float]:
    items = list(value) if isinstance(value, Sequence) or hasattr(value, "tolist") else None
    if items is None or not 2 <= len(items) <= 16:
        raise ValueError(f"{name}: expected 2 to 16 numbers, got {value!r}")
    return [_number(f"{name}[{i}]", float(v) if isinstance(v, numbers.Real) else v, -1e6, 1e6)
            for i, v in enumerate(items)]


def softmax_live(score_1: float = 112.0, score_2: float = 96.0, d_k: int = 64) -> HTML:
    """Sliders for q1·k1, q1·k2 and d_k; the page divides by √d_k and softmaxes, live.

    Parameters: the starting scores in [0, 200] (the post's 112 and 96) and d_k in [1, 1024].
    Returns: HTML (container + fallback line + module script). Shapes: two scores.
    Raises: ValueError naming the argument out of its slider's range.
    References: post "Self-Attention in Detail" (steps 2-4); paper §3.2.1, Eq. (1).
    """
    return _live("softmax", {"score_1": _number("score_1", score_1, 0, 200),
                             "score_2": _number("score_2", score_2, 0, 200),
                             "d_k": _integer("d_k", d_k, 1, 1024)})


def positional_live(n_positions: int = 20, d_model: int = 512,
                    layout: str = "concatenated") -> HTML:
    """Sliders for positions and d_model, a layout menu; the page draws the PE table, live.

    Parameters: n_positions in [1, 200], d_model even in [2, 1024], layout one of
    ``il.reference.LAYOUTS``. Returns: HTML. Shapes: the table is (n_positions, d_model).
    Raises: ValueError naming the argument. References: post "Representing The Order of The
    Sequence"; paper §3.5; tensor2tensor ``get_timing_signal_1d`` (concatenated).
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout: expected one of {LAYOUTS}, got {layout!r}")
    return _live("positional", {"n_positions": _integer("n_positions", n_positions, 1, 200),
                                "d_model": _integer("d_model", d_model, 2, 1024, even=True),
                                "layout": layout})


def add_norm_live(x: Sequence[float], z: Sequence[float], eps: float = 1e-5) -> HTML:
    """Text boxes for x and the sub-layer output z; the page shows x + z and its layer norm.

    Parameters: x, z of equal length (2 to 16 finite numbers); eps in (0, 1].
    Returns: HTML. Shapes: x, z (d_model,). Raises: ValueError naming the argument.
    References: post "The Residuals"; paper §3.1; Ba et al. 2016 (layer norm, biased variance).
    """
    x, z = _vector("x", x), _vector("z", z)
    if len(x) != len(z):
        raise ValueError(f"z: expected {len(x)} numbers (as many as x), got {len(z)}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < eps <= 1:
        raise ValueError(f"eps: expected a number in (0, 1], got {eps!r}")
    return _live("add_norm", {"x": x, "z": z, "eps": float(eps)})


def label_smoothing_live(target_ids: Sequence[int], tokens: Sequence[str],
                         epsilon: float = 0.1) -> HTML:
    """Sliders for epsilon and the vocabulary size V; the page shows the smoothed targets.

    Parameters: target_ids (ids into ``tokens``, at least one), tokens (the vocabulary's
    words, 2 to 200), epsilon in [0, 1]. Returns: HTML. Shapes: targets (len(target_ids), V).
    Raises: ValueError naming the argument. References: post "The Loss Function"; paper §5.4;
    ``il.reference.smooth_labels`` (PyTorch's convention: epsilon / V to every word).
    """
    tokens = [str(t) for t in tokens]
    _integer("len(tokens)", len(tokens), 2, 200)
    ids = [_integer(f"target_ids[{i}]", int(t) if isinstance(t, numbers.Integral) else t,
                    0, len(tokens) - 1) for i, t in enumerate(target_ids)]
    if not ids:
        raise ValueError("target_ids: expected at least one id, got none")
    return _live("smoothing", {"target_ids": ids, "tokens": tokens,
                               "epsilon": _number("epsilon", epsilon, 0, 1)})


def _png(fig, dpi: int) -> str:
    """The figure as a base64 PNG of 128 colours (Pillow's quantizer: about 3x smaller)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    buffer.seek(0)
    image = Image.open(buffer).convert("RGB").quantize(colors=128,
                                                       method=Image.Quantize.MEDIANCUT)
    small = io.BytesIO()
    image.save(small, format="png", optimize=True, dpi=(dpi, dpi))  # keeps pHYs
    return base64.b64encode(small.getvalue()).decode("ascii")


def panels_live(draw: Callable[..., object], controls: Sequence[tuple], *, dpi: int = 100,
                alt: str = "figure") -> HTML:
    """Precompute a figure for every combination of the controls; the page switches them.

    Parameters
    ----------
    draw : callable
        ``draw(*values)`` returns a matplotlib Figure for one value of each control.
    controls : sequence of (name, kind, options, default)
        kind ``"slider"`` or ``"select"``; options a list of values or (label, value) pairs;
        default one of the values.
    dpi : int
        Resolution of the embedded PNGs (identical pictures are stored once).
    alt : str
        Text alternative of the pictures.

    Returns: HTML. Raises: ValueError for an unknown kind, an empty option list, a default not
    among the options, or more than :data:`MAX_PANELS` combinations.
    References: DESIGN.md "Widgets in the static book" (selection among precomputed pictures).
    """
    specs = []
    for name, kind, options, default in controls:
        pairs = [o if isinstance(o, tuple) else (str(o), o) for o in options]
        if kind not in ("slider", "select"):
            raise ValueError(f"controls: kind of {name!r}: expected 'slider' or 'select', "
                             f"got {kind!r}")
        values = [v for _, v in pairs]
        if default not in values:
            raise ValueError(f"controls: default of {name!r}: expected one of {values}, "
                             f"got {default!r}")
        specs.append((str(name), kind, pairs, values.index(default)))
    if not specs or math.prod(len(s[2]) for s in specs) > MAX_PANELS:
        raise ValueError(f"controls: expected 1 to {MAX_PANELS} combinations, got "
                         f"{math.prod(len(s[2]) for s in specs) if specs else 0}")
    images: dict[str, int] = {}
    keys: dict[str, int] = {}
    for combo in itertools.product(*(range(len(s[2])) for s in specs)):
        png = _png(draw(*(s[2][i][1] for s, i in zip(specs, combo))), dpi)
        keys["-".join(map(str, combo))] = images.setdefault(png, len(images))
    # data-src, not src: the page's script gives each panel its src (a data: URI in src
    # would read as a fetched resource, and Jupyter shows only the fallback line anyway).
    body = "".join(f'<img hidden class="il-live-panel" data-panel="{i}" alt="{html.escape(alt)}"'
                   f' data-src="data:image/png;base64,{png}">' for png, i in images.items())
    params = {"controls": [{"name": n, "kind": k, "labels": [label for label, _ in p],
                            "value": d} for n, k, p, d in specs], "panels": keys}
    return _live("panels", params, body)
