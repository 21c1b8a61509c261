"""One way to make an interactive figure: a draw function and its controls.

``interactive(draw, controls, alt=...)`` is one output that each front-end reads its own way:

* in a kernel (Jupyter, Colab) it is an ipywidget that calls ``draw`` whenever a control moves;
* in the built book it is the same figure drawn here for every combination of the controls,
  switched in the reader's browser by ``site/js/frames.js`` (the build leaves the widget view
  out: ``nb_mime_priority_overrides`` in ``_config.yml``); without JavaScript the default
  picture shows.

``live(kind, params, ...)`` is the same for the few widgets that must run the shipped model on
the reader's own input (a typed sentence, beam settings): in the book ``site/js/<kind>.js``
computes them with the ONNX export of the model; in a kernel ``kernel`` (an ipywidget, if
given) does. Every container is ``<div class="il-widget" data-il-widget=KIND>``, mounted by
``site/js/widgets.js``.
"""
from __future__ import annotations

import base64
import html
import io
import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display
from PIL import Image

from .kit import DPI

__all__ = ["Control", "slider", "select", "interactive", "live", "Interactive", "MAX_FRAMES"]

MAX_FRAMES = 64
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NO_SCRIPT = "Run the book over http (make serve) or open it in Colab for the live version."


@dataclass(frozen=True)
class Control:
    """A control of an interactive figure: its name, its values (with labels), its start."""
    name: str
    values: tuple
    labels: tuple[str, ...]
    default: int  # index into values
    kind: str     # "slider" or "select"


def _control(kind: str, name: str, options: Sequence, default) -> Control:
    pairs = [o if isinstance(o, tuple) and len(o) == 2 else (str(o), o) for o in options]
    values = tuple(v for _, v in pairs)
    if default not in values:
        raise ValueError(f"default of {name!r}: expected one of {list(values)}, got {default!r}")
    return Control(name, values, tuple(str(label) for label, _ in pairs), values.index(default),
                   kind)


def slider(name: str, options: Sequence, default) -> Control:
    """A slider over ``options`` (values, or (label, value) pairs) starting at ``default``."""
    return _control("slider", name, options, default)


def select(name: str, options: Sequence, default) -> Control:
    """A drop-down list over ``options`` (values, or (label, value) pairs)."""
    return _control("select", name, options, default)


def _png(fig) -> tuple[str, tuple[int, int]]:
    """The figure as a base64 PNG of 128 colours (about 3 times smaller than matplotlib's)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    small = io.BytesIO()
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(small, format="png",
                                                                     optimize=True)
    return base64.b64encode(small.getvalue()).decode("ascii"), image.size


def _container(kind: str, params: dict, body: str, label: str) -> str:
    data = html.escape(json.dumps(params, ensure_ascii=False), quote=True)
    return (f'<div class="il-widget" data-il-widget="{kind}" data-params="{data}" role="group" '
            f'aria-label="{html.escape(label, quote=True)}">{body}</div>')


class Interactive:
    """One displayed output: an ipywidget in a kernel, HTML for the built book."""

    def __init__(self, html_text: Callable[[], str], kernel: Callable[[], object] | None,
                 alt: str):
        self._html, self._kernel, self.alt = html_text, kernel, alt

    def html(self) -> str:
        """The book's HTML for this output."""
        return self._html()

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.alt, "text/html": self.html()}
        # The book's build (make book) shows only the HTML, so it makes no ipywidget: no widget
        # messages while jupyter-book executes the chapters (nbclient issue 312: a cell that
        # makes widgets can leave the executing client waiting).
        if self._kernel is not None and not os.environ.get("ILLUSTRATED_BOOK_BUILD"):
            view = self._kernel()
            bundle[WIDGET_VIEW] = {"version_major": 2, "version_minor": 0,
                                   "model_id": view.model_id}
        return bundle


def _kernel_widget(draw: Callable, controls: Sequence[Control], play: bool):
    """The ipywidget: the controls above an Output that ``draw`` redraws."""
    style = {"description_width": "initial"}
    inputs = [(widgets.SelectionSlider if c.kind == "slider" else widgets.Dropdown)(
        options=list(zip(c.labels, range(len(c.values)))), value=c.default, description=c.name,
        style=style, continuous_update=False) for c in controls]
    out = widgets.Output()

    def redraw(_=None):
        with out:
            out.clear_output(wait=True)
            fig = draw(*(c.values[w.value] for c, w in zip(controls, inputs)))
            display(fig)
            plt.close(fig)

    for w in inputs:
        w.observe(redraw, names="value")
    redraw()
    row = list(inputs)
    if play and controls:
        player = widgets.Play(min=0, max=len(controls[0].values) - 1, interval=900,
                              value=controls[0].default, description="play")
        widgets.jslink((player, "value"), (inputs[0], "index"))
        row.insert(0, player)
    return widgets.VBox([widgets.HBox(row, layout={"flex_flow": "row wrap"}), out])


def interactive(draw: Callable[..., object], controls: Sequence[Control] = (), *, alt: str,
                play: bool = False) -> Interactive:
    """An interactive figure: ``draw(*values)`` returns a Figure for one value of each control.

    ``alt`` says what the figure shows (the control values are added to each picture's alt
    text). ``play`` adds a button that steps through the first control's values. In the book
    every combination is drawn in advance (at most MAX_FRAMES); identical pictures are stored once.
    """
    controls = list(controls)
    n = math.prod(len(c.values) for c in controls)
    if n > MAX_FRAMES:
        raise ValueError(f"controls: expected at most {MAX_FRAMES} combinations, got {n}")

    def page() -> str:
        frames: dict[str, int] = {}
        keys: dict[str, int] = {}
        images = []
        default = "-".join(str(c.default) for c in controls)
        for combo in itertools.product(*(range(len(c.values)) for c in controls)):
            png, size = _png(draw(*(c.values[i] for c, i in zip(controls, combo))))
            key = "-".join(map(str, combo))
            if png not in frames:
                frames[png] = len(frames)
                state = ", ".join(f"{c.name} = {c.labels[i]}" for c, i in zip(controls, combo))
                text = f"{alt} ({state})" if state else alt
                images.append(f'<img class="il-frame" data-frame="{frames[png]}" '
                              f'width="{size[0]}" height="{size[1]}" '
                              f'alt="{html.escape(text, quote=True)}" '
                              f'src="data:image/png;base64,{png}"'
                              f'{"" if key == default else " hidden"}>')
            keys[key] = frames[png]
        params = {"controls": [{"name": c.name, "kind": c.kind, "labels": list(c.labels),
                                "value": c.default} for c in controls],
                  "frames": keys, "play": bool(play and controls)}
        return _container("frames", params, f'<div class="il-frames">{"".join(images)}</div>',
                          alt)

    kernel = (lambda: _kernel_widget(draw, controls, play)) if controls else None
    return Interactive(page, kernel, alt)


def live(kind: str, params: dict, *, alt: str, kernel: Callable[[], object] | None = None,
         default: Callable[[], object] | None = None) -> Interactive:
    """A widget the book's JavaScript computes with the shipped model (``site/js/<kind>.js``).

    ``params`` (JSON) are its starting state; ``kernel`` builds its ipywidget twin for Jupyter
    and Colab, where the page's JavaScript does not run; ``default`` draws the starting state
    as a Figure, shown until the widget mounts (and where JavaScript does not run).
    """
    def page() -> str:
        body = f'<p class="il-noscript">{html.escape(NO_SCRIPT)}</p>'
        if default is not None:
            png, size = _png(default())
            body = (f'<img class="il-live-default" width="{size[0]}" height="{size[1]}" '
                    f'alt="{html.escape(alt, quote=True)}" src="data:image/png;base64,{png}">'
                    + body)
        return _container(kind, params, body, alt)

    return Interactive(page, kernel, alt)
