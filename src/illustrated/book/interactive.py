"""One way to make an interactive figure: a draw function and its controls.

``interactive(draw, controls, alt=...)`` is one output that each front-end reads its own way:

* in a kernel (Jupyter, Colab) it is an ipywidget that calls ``draw`` whenever a control moves;
* in the built book it is the same figure drawn here for every combination of the controls,
  switched in the reader's browser by ``site/js/frames.js`` (the build leaves the widget view
  out: ``nb_mime_priority_overrides`` in ``_config.yml``); without JavaScript the default
  picture shows.

``figure(draw, alt=...)`` is an interactive figure without controls: a chapter's static picture.

``live(kind, params, ...)`` is the same for the few widgets that must run the shipped model on
the reader's own input (a typed sentence, beam settings): in the book ``site/js/<kind>.js``
computes them with the ONNX export of the model; in a kernel ``kernel`` (an ipywidget, if
given) does. Every container is ``<div class="il-widget" data-il-widget=KIND>``, mounted by
``site/js/widgets.js``. ``twin(rows, show)`` is the plumbing every kernel twin shares.

Every draw function takes ``width`` (inches, book/kit.py): the book draws each picture for the
desktop column and for a phone's, and the page's ``<picture>`` shows the one that fits its
column, with no script. Tapping a picture opens it full size (the desktop drawing).
"""
from __future__ import annotations

import base64
import functools
import html
import inspect
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
from matplotlib.figure import Figure
from PIL import Image

from .kit import DESKTOP_WIDTH_IN, DPI, PHONE_WIDTH_IN, smallest_text_pt

__all__ = ["Control", "slider", "select", "interactive", "figure", "live", "twin", "Interactive",
           "MAX_FRAMES", "PHONE_MEDIA"]

MAX_FRAMES = 64
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NO_SCRIPT = "Run the book over http (make serve) or open it in Colab for the live version."
#: Where the page shows the phone drawing: a column too narrow for the desktop one's text.
PHONE_MEDIA = "(max-width: 680px)"
ZOOM = "open the picture full size"


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


@dataclass(frozen=True)
class _Png:
    data: str                # base64
    size: tuple[int, int]    # pixels
    text_px: float           # the smallest text, in pixels of the picture


def _png(fig) -> _Png:
    """The figure as a base64 PNG of 128 colours (about 3 times smaller than matplotlib's)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    smallest = smallest_text_pt(fig) or 0.0
    plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    small = io.BytesIO()
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(
        small, format="png", optimize=True, dpi=(DPI, DPI))
    return _Png(base64.b64encode(small.getvalue()).decode("ascii"), image.size,
                round(smallest * DPI / 72, 1))


def _book() -> bool:
    """Whether this runs in the book's build (make book), which shows the HTML only."""
    return bool(os.environ.get("ILLUSTRATED_BOOK_BUILD"))


def _takes_width(draw: Callable[..., object]) -> bool:
    parameters = inspect.signature(draw).parameters.values()
    return any(p.name == "width" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _draw(draw: Callable[..., object], values: Sequence, width: float):
    """``draw(*values, width=width)``; a draw function that takes no width yet is drawn as it
    is (the browser tests then report its text as too small on a phone)."""
    return draw(*values, width=width) if _takes_width(draw) else draw(*values)


def _drawings(draw: Callable[..., object], values: Sequence, phone: bool) -> tuple[_Png, ...]:
    """``draw(*values)`` for the desktop column and, if ``phone``, for a phone's."""
    widths = (DESKTOP_WIDTH_IN, PHONE_WIDTH_IN) if phone and _takes_width(draw) else (
        DESKTOP_WIDTH_IN,)
    return tuple(_png(_draw(draw, values, w)) for w in widths)


def _picture(drawings: tuple[_Png, ...], alt: str, *, frame: str = "", img: str = "") -> str:
    """One picture as the page shows it: the phone drawing where the column is narrow, the
    desktop one elsewhere. ``frame`` (attributes) makes it a frame of an interactive figure,
    which in the book is a link that opens the desktop drawing full size; ``img`` are the
    attributes of its <img>."""
    desktop, *phone = drawings

    def sized(png: _Png) -> str:
        return f'width="{png.size[0]}" height="{png.size[1]}" data-text-px="{png.text_px}"'

    source = "".join(f'<source media="{PHONE_MEDIA}" srcset="data:image/png;base64,{p.data}" '
                     f'{sized(p)}>' for p in phone)
    picture = (f'<picture>{source}<img{img} {sized(desktop)} alt="{html.escape(alt, quote=True)}"'
               f' src="data:image/png;base64,{desktop.data}"></picture>')
    if not frame:
        return picture
    if not _book():
        return f'<span class="il-frame"{frame}>{picture}</span>'
    return (f'<a class="il-frame il-zoom"{frame} href="data:image/png;base64,{desktop.data}" '
            f'target="_blank" title="{ZOOM}">{picture}</a>')


def _container(kind: str, params: dict, body: str, label: str) -> str:
    data = html.escape(json.dumps(params, ensure_ascii=False), quote=True)
    return (f'<div class="il-widget" data-il-widget="{kind}" data-params="{data}" role="group" '
            f'aria-label="{html.escape(label, quote=True)}">{body}</div>')


class Interactive:
    """One displayed output: an ipywidget in a kernel, HTML for the built book."""

    def __init__(self, html_text: Callable[[], str], kernel: Callable[[], object] | None,
                 alt: str, static: Callable[[], str] | None = None):
        self._html, self._kernel, self.alt = html_text, kernel, alt
        self._static = static or html_text

    def html(self) -> str:
        """The book's HTML for this output."""
        return self._html()

    def _repr_mimebundle_(self, include=None, exclude=None):
        # The book's build (make book) shows only the HTML, so it makes no ipywidget: no widget
        # messages while jupyter-book executes the chapters (nbclient issue 312: a cell that
        # makes widgets can leave the executing client waiting). In a kernel the widget is what
        # shows; its HTML is only the starting picture, for viewers without a kernel (GitHub).
        if self._kernel is None or _book():
            return {"text/plain": self.alt, "text/html": self.html()}
        view = self._kernel()
        return {"text/plain": self.alt, "text/html": self._static(),
                WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": view.model_id}}


def twin(rows: Sequence, show: Callable[[object], object], *,
         watch: Sequence | None = None) -> widgets.VBox:
    """The ipywidget twin of a page's widget: ``rows`` of controls (a widget, or a list of widgets
    in one wrapping row) above an Output that ``show(control)`` fills: first with control None,
    then whenever a control of ``watch`` (default: every control of ``rows``) changes or a button
    of it is clicked. ``show`` returns what to display (a Figure is closed once shown) or None;
    a ValueError it raises is printed as its one line; controls it changes do not call it again.
    """
    out, busy = widgets.Output(), []

    def redraw(control=None):
        if busy:
            return
        busy.append(control)
        try:
            with out:
                out.clear_output(wait=True)
                try:
                    shown = show(control)
                except ValueError as error:
                    print(error)
                    return
                if shown is not None:
                    display(shown)
                if isinstance(shown, Figure):
                    plt.close(shown)
        finally:
            busy.clear()

    lines = [[r] if isinstance(r, widgets.Widget) else list(r) for r in rows]
    for control in [w for line in lines for w in line] if watch is None else watch:
        if isinstance(control, widgets.Button):
            control.on_click(redraw)
        elif control.has_trait("value"):
            control.observe(lambda change: redraw(change["owner"]), names="value")
    redraw()
    return widgets.VBox([line[0] if len(line) == 1 else
                         widgets.HBox(line, layout={"flex_flow": "row wrap"}) for line in lines]
                        + [out])


def _kernel_widget(draw: Callable, controls: Sequence[Control], play: bool):
    """The ipywidget: the controls (and a play button) above the figure ``draw`` redraws."""
    style = {"description_width": "initial"}
    inputs = [(widgets.SelectionSlider if c.kind == "slider" else widgets.Dropdown)(
        options=list(zip(c.labels, range(len(c.values)))), value=c.default, description=c.name,
        style=style, continuous_update=False) for c in controls]
    row = list(inputs)
    if play and controls:
        player = widgets.Play(min=0, max=len(controls[0].values) - 1, interval=900,
                              value=controls[0].default, description="play")
        widgets.jslink((player, "value"), (inputs[0], "index"))
        row.insert(0, player)
    return twin([row], lambda _: _draw(draw, [c.values[w.value] for c, w in zip(controls, inputs)],
                                       DESKTOP_WIDTH_IN), watch=inputs)


def interactive(draw: Callable[..., object], controls: Sequence[Control] = (), *, alt: str,
                play: bool = False) -> Interactive:
    """An interactive figure: ``draw(*values, width=...)`` returns a Figure for one value of each
    control, laid out for ``width`` inches (book/kit.py).

    ``alt`` says what the figure shows (the control values are added to each picture's alt
    text). ``play`` adds a button that steps through the first control's values. In the book
    every combination is drawn in advance (at most MAX_FRAMES), for the desktop column and for a
    phone's; identical pictures are stored once. In a kernel the ipywidget draws on demand.
    """
    controls = list(controls)
    n = math.prod(len(c.values) for c in controls)
    if n > MAX_FRAMES:
        raise ValueError(f"controls: expected at most {MAX_FRAMES} combinations, got {n}")
    default = tuple(c.default for c in controls)

    def page(combos=None, phone=True) -> str:
        frames: dict[tuple, int] = {}
        keys: dict[str, int] = {}
        images = []
        for combo in combos or itertools.product(*(range(len(c.values)) for c in controls)):
            drawings = _drawings(draw, [c.values[i] for c, i in zip(controls, combo)], phone)
            found = tuple(d.data for d in drawings)
            if found not in frames:
                frames[found] = len(frames)
                state = ", ".join(f"{c.name} = {c.labels[i]}" for c, i in zip(controls, combo))
                images.append(_picture(drawings, f"{alt} ({state})" if state else alt,
                                       frame=f' data-frame="{frames[found]}"'
                                       + ("" if combo == default else " hidden")))
            keys["-".join(map(str, combo))] = frames[found]
        params = {"controls": [{"name": c.name, "kind": c.kind, "labels": list(c.labels),
                                "value": c.default} for c in controls],
                  "frames": keys, "play": bool(play and controls)}
        return _container("frames", params, f'<div class="il-frames">{"".join(images)}</div>',
                          alt)

    kernel = (lambda: _kernel_widget(draw, controls, play)) if controls else None
    return Interactive(page, kernel, alt, static=lambda: page([default], phone=False))


def figure(draw: Callable[..., object], *args, alt: str, **kwargs) -> Interactive:
    """A figure without controls: ``draw(*args, **kwargs, width=...)`` returns it laid out for
    ``width`` inches; the book shows the desktop or the phone drawing, whichever fits the
    reader's column. ``alt`` says what it shows."""
    return interactive(functools.partial(draw, *args, **kwargs), (), alt=alt)


def live(kind: str, params: dict, *, alt: str, kernel: Callable[[], object] | None = None,
         default: Callable[..., object] | None = None,
         frames: Interactive | None = None) -> Interactive:
    """A widget the book's JavaScript computes with the shipped model (``site/js/<kind>.js``).

    ``params`` (JSON) are its starting state; ``kernel`` builds its ipywidget twin for Jupyter
    and Colab, where the page's JavaScript does not run; ``default(width=...)`` draws the
    starting state as a Figure, shown until the widget mounts (and where JavaScript does not run);
    ``frames``, an interactive figure of the same picture, sits inside the container instead.
    """
    def page() -> str:
        body = f'<p class="il-noscript">{html.escape(NO_SCRIPT)}</p>'
        if default is not None:
            body = _picture(_drawings(default, (), True), alt, img=' class="il-live-default"') + body
        if frames is not None:
            body += frames.html()
        return _container(kind, params, body, alt)

    return Interactive(page, kernel, alt)
