"""illustrated.widgets.closed_form_live: the HTML that the book's JavaScript mounts.

Checks what the page relies on: the parameters survive HTML escaping exactly (read back with
the standard library's HTML parser), the mounting script imports the right module for the
container it names, Jupyter readers see the fallback line, the precomputed panels map every
combination of the controls to an embedded picture, and bad arguments are refused by name.
"""
from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from illustrated.widgets import closed_form_live as live  # noqa: E402


class _Parsed(HTMLParser):
    """The container's attributes, the <img> attributes, the script text, the visible text."""

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.divs, self.images, self.script, self.text = [], [], "", []
        self._in_script = False
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        if tag == "div":
            self.divs.append(dict(attrs))
        elif tag == "img":
            self.images.append(dict(attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.script += data
        else:
            self.text.append(data)


def parse(result) -> tuple[_Parsed, dict]:
    page = _Parsed(result.data)
    assert len(page.divs) == 1
    return page, json.loads(page.divs[0]["data-params"])


def test_softmax_container_params_script_and_fallback():
    page, params = parse(live.softmax_live(112, 96, d_k=64))
    div = page.divs[0]
    assert params == {"score_1": 112.0, "score_2": 96.0, "d_k": 64}
    assert div["class"] == "il-live il-live-softmax"
    assert page.script == ('import { mount } from "../_illustrated/js/closed_form_softmax.js"; '
                           f'mount(document.getElementById("{div["id"]}"));')
    assert live.FALLBACK in "".join(page.text)


def test_ids_differ_with_parameters_and_repeat_without():
    first = parse(live.softmax_live(112, 96))[0].divs[0]["id"]
    assert parse(live.softmax_live(112, 96))[0].divs[0]["id"] == first  # stable outputs
    assert parse(live.softmax_live(112, 97))[0].divs[0]["id"] != first


def test_escaping_keeps_every_character_of_the_tokens():
    tokens = ['<script>alert("x")</script>', "a&b", "it's", "é", '"', "</div>"]
    result = live.label_smoothing_live([0, 5], tokens, epsilon=0.25)
    assert "<script>alert" not in result.data and "</div></div>" not in result.data
    page, params = parse(result)
    assert params == {"target_ids": [0, 5], "tokens": tokens, "epsilon": 0.25}
    assert page.script.count("<") == 0  # the script names the module and the id only


def test_positional_and_add_norm_params():
    assert parse(live.positional_live(7, 6, "interleaved"))[1] == {
        "n_positions": 7, "d_model": 6, "layout": "interleaved"}
    params = parse(live.add_norm_live(np.array([1.0, 2.0, 3.0, 4.0]), [0.5, -0.5, 1, -1]))[1]
    assert params == {"x": [1.0, 2.0, 3.0, 4.0], "z": [0.5, -0.5, 1.0, -1.0], "eps": 1e-5}


@pytest.mark.parametrize(("call", "name"), [
    (lambda: live.softmax_live(201, 96), "score_1"),
    (lambda: live.softmax_live(112, math.nan), "score_2"),
    (lambda: live.softmax_live(d_k=0), "d_k"),
    (lambda: live.softmax_live(d_k=True), "d_k"),
    (lambda: live.softmax_live(d_k=8.0), "d_k"),
    (lambda: live.positional_live(0), "n_positions"),
    (lambda: live.positional_live(20, 511), "d_model"),
    (lambda: live.positional_live(20, 512, "rotary"), "layout"),
    (lambda: live.add_norm_live([1, 2, 3], [1, 2]), "z"),
    (lambda: live.add_norm_live([1], [1]), "x"),
    (lambda: live.add_norm_live([1, math.inf], [1, 2]), "x[1]"),
    (lambda: live.add_norm_live([1, 2], [1, 2], eps=0), "eps"),
    (lambda: live.label_smoothing_live([0, 3], ["a", "b", "c"]), "target_ids[1]"),
    (lambda: live.label_smoothing_live([], ["a", "b"]), "target_ids"),
    (lambda: live.label_smoothing_live([0], ["a", "b"], epsilon=1.5), "epsilon"),
    (lambda: live.label_smoothing_live([0], ["a"]), "len(tokens)"),
])
def test_bad_arguments_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match="^" + re.escape(name) + ": "):
        call()


def _square(value: float):
    fig = plt.figure(figsize=(1, 1))
    fig.patch.set_facecolor((value, 0.2, 0.4))
    return fig


def test_panels_map_every_combination_and_store_equal_pictures_once():
    drawn = []

    def draw(a, b):
        drawn.append((a, b))
        return _square(0.1 if b == "same" else a)

    page, params = parse(live.panels_live(draw, [
        ("a", "slider", [0.3, 0.6, 0.9], 0.6),
        ("b", "select", [("one label", "same"), ("other", "own")], "own")]))
    assert sorted(drawn) == sorted((a, b) for a in (0.3, 0.6, 0.9) for b in ("same", "own"))
    assert params["controls"] == [
        {"name": "a", "kind": "slider", "labels": ["0.3", "0.6", "0.9"], "value": 1},
        {"name": "b", "kind": "select", "labels": ["one label", "other"], "value": 1}]
    panels = params["panels"]
    assert set(panels) == {f"{i}-{j}" for i in range(3) for j in range(2)}
    assert len({panels[f"{i}-0"] for i in range(3)}) == 1  # three equal pictures, stored once
    assert len(set(panels.values())) == len(page.images) == 4
    assert {img["data-panel"] for img in page.images} == {str(v) for v in panels.values()}
    assert all("hidden" in img and "src" not in img
               and img["data-src"].startswith("data:image/png;base64,")
               for img in page.images)


@pytest.mark.parametrize(("controls", "match"), [
    ([("a", "knob", [1, 2], 1)], "kind of 'a'"),
    ([("a", "slider", [1, 2], 3)], "default of 'a'"),
    ([("a", "slider", [], None)], "default of 'a'"),
    ([], "1 to 64 combinations, got 0"),
    ([("a", "slider", range(9), 0), ("b", "slider", range(8), 0)], "got 72"),
])
def test_bad_panel_controls_are_refused(controls, match):
    with pytest.raises(ValueError, match=match):
        live.panels_live(lambda *_: _square(0.5), controls)
