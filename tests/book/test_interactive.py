"""One output, two forms: the ipywidget for a kernel and the precomputed frames for the book."""
import html
import json
import re

import matplotlib.pyplot as plt
import pytest

from illustrated.book import interactive as ia
from illustrated.book.kit import DPI


def draw(n, colour="k"):
    fig, ax = plt.subplots(figsize=(2, 1), dpi=DPI)
    ax.bar(range(n), range(1, n + 1), color=colour)
    return fig


def params_of(page: str) -> dict:
    return json.loads(html.unescape(re.search(r'data-params="([^"]*)"', page).group(1)))


def test_every_combination_is_drawn_once_and_the_default_shows():
    figure = ia.interactive(draw, [ia.slider("n", [1, 2, 3], 2),
                                   ia.select("colour", [("red", "r"), ("blue", "b")], "b")],
                            alt="bars", play=True)
    page = figure.html()
    params = params_of(page)
    assert params["frames"].keys() == {f"{i}-{j}" for i in range(3) for j in range(2)}
    assert sorted(set(params["frames"].values())) == list(range(6))
    assert [c["value"] for c in params["controls"]] == [1, 1] and params["play"] is True
    shown = re.findall(r'<img class="il-frame" data-frame="(\d+)"[^>]*alt="([^"]*)"[^>]*src=[^>]*?(hidden)?>',
                       page)
    visible = [(frame, alt) for frame, alt, hidden in shown if not hidden]
    assert visible == [(str(params["frames"]["1-1"]), "bars (n = 2, colour = blue)")]


def test_identical_pictures_are_stored_once():
    figure = ia.interactive(lambda n: draw(2, "k"), [ia.slider("n", [1, 2, 3], 1)], alt="same")
    assert set(params_of(figure.html())["frames"].values()) == {0}
    assert figure.html().count("<img") == 1


def test_the_bundle_has_the_widget_view_for_a_kernel_and_html_for_the_book():
    bundle = ia.interactive(draw, [ia.slider("n", [1, 2], 1)], alt="bars",
                            )._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", ia.WIDGET_VIEW}
    assert bundle["text/plain"] == "bars"
    assert re.fullmatch(r"[0-9a-f]{32}", bundle[ia.WIDGET_VIEW]["model_id"])


def test_a_figure_without_controls_is_one_picture_and_no_widget():
    bundle = ia.interactive(lambda: draw(1, "k"), alt="one")._repr_mimebundle_()
    assert ia.WIDGET_VIEW not in bundle and bundle["text/html"].count("<img") == 1


def test_live_containers_carry_their_kind_and_starting_state():
    page = ia.live("translate", {"corpus": "fr-en", "sentence": "je <suis>"}, alt="live").html()
    assert 'data-il-widget="translate"' in page
    assert params_of(page) == {"corpus": "fr-en", "sentence": "je <suis>"}
    assert "<suis>" not in page  # escaped


def test_bad_controls_are_refused_by_name():
    with pytest.raises(ValueError, match="default of 'n'"):
        ia.slider("n", [1, 2], 3)
    with pytest.raises(ValueError, match="at most 64"):
        ia.interactive(draw, [ia.slider("n", range(9), 1), ia.slider("m", range(9), 1)], alt="x")


def test_the_book_build_makes_no_ipywidget(monkeypatch):
    made = []
    figure = ia.interactive(draw, [ia.slider("n", [1, 2], 1)], alt="bars")
    figure._kernel = lambda: made.append(1)
    monkeypatch.setenv("ILLUSTRATED_BOOK_BUILD", "1")
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"} and not made
