"""One output, two forms: the ipywidget for a kernel and the precomputed frames for the book,
each frame drawn for the desktop column and for a phone's; and the kernel twins' one helper."""
import base64
import html
import io
import json
import re

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest
from PIL import Image

from illustrated.book import interactive as ia
from illustrated.book.kit import DESKTOP_WIDTH_IN, DPI, PHONE_WIDTH_IN

calls = []


def draw(n, colour="k", *, width=DESKTOP_WIDTH_IN):
    calls.append(width)
    fig, ax = plt.subplots(figsize=(width / 2, 1), dpi=DPI)
    ax.bar(range(n), range(1, n + 1), color=colour)
    ax.set_title("bars", fontsize=9 if width < 5 else 12)
    return fig


def params_of(page: str) -> dict:
    return json.loads(html.unescape(re.search(r'data-params="([^"]*)"', page).group(1)))


def frames_of(page: str) -> list[dict]:
    """Each frame: its number, hidden or not, its <source> (phone) and <img> (desktop)."""
    found = []
    for attrs, body in re.findall(r'<(?:a|span) class="il-frame[^"]*"([^>]*)>(.*?)</(?:a|span)>',
                                  page):
        source = re.search(r"<source ([^>]*)>", body)
        found.append({"frame": int(re.search(r'data-frame="(\d+)"', attrs).group(1)),
                      "hidden": " hidden" in attrs, "attrs": attrs,
                      "source": source.group(1) if source else None,
                      "img": re.search(r"<img ([^>]*)>", body).group(1)})
    return found


def attr(tag: str, name: str) -> str:
    return html.unescape(re.search(rf'\b{name}="([^"]*)"', tag).group(1))


def png_width(uri: str) -> int:
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).size[0]


def test_every_combination_is_drawn_once_per_width_and_the_default_shows(monkeypatch):
    monkeypatch.setenv("ILLUSTRATED_BOOK_BUILD", "1")
    figure = ia.interactive(draw, [ia.slider("n", [1, 2, 3], 2),
                                   ia.select("colour", [("red", "r"), ("blue", "b")], "b")],
                            alt="bars", play=True)
    calls.clear()
    page = figure.html()
    assert sorted(calls) == [PHONE_WIDTH_IN] * 6 + [DESKTOP_WIDTH_IN] * 6
    params = params_of(page)
    assert params["frames"].keys() == {f"{i}-{j}" for i in range(3) for j in range(2)}
    assert sorted(set(params["frames"].values())) == list(range(6))
    assert [c["value"] for c in params["controls"]] == [1, 1] and params["play"] is True
    frames = frames_of(page)
    visible = [(f["frame"], attr(f["img"], "alt")) for f in frames if not f["hidden"]]
    assert visible == [(params["frames"]["1-1"], "bars (n = 2, colour = blue)")]
    for f in frames:  # the phone drawing where the column is narrow, the desktop one elsewhere
        assert attr(f["source"], "media") == ia.PHONE_MEDIA
        assert png_width(attr(f["source"], "srcset")) == int(attr(f["source"], "width")) == 180
        assert png_width(attr(f["img"], "src")) == int(attr(f["img"], "width")) == 400
        # the smallest text in pixels of the picture: 9 pt and 12 pt at 100 dpi
        assert float(attr(f["source"], "data-text-px")) == pytest.approx(9 * DPI / 72, abs=0.05)
        assert float(attr(f["img"], "data-text-px")) == pytest.approx(10 * DPI / 72, abs=0.05)
        # tapping a picture opens the desktop drawing full size
        assert attr(f["attrs"], "href") == attr(f["img"], "src")


def test_identical_pictures_are_stored_once():
    figure = ia.interactive(lambda n, width: draw(2, "k", width=width),
                            [ia.slider("n", [1, 2, 3], 1)], alt="same")
    assert set(params_of(figure.html())["frames"].values()) == {0}
    assert figure.html().count("<img") == 1


def test_in_a_kernel_the_widget_shows_and_the_html_is_only_the_starting_picture(monkeypatch):
    monkeypatch.delenv("ILLUSTRATED_BOOK_BUILD", raising=False)
    calls.clear()
    bundle = ia.interactive(draw, [ia.slider("n", [1, 2, 3], 2)], alt="bars")._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", ia.WIDGET_VIEW}
    assert bundle["text/plain"] == "bars"
    assert re.fullmatch(r"[0-9a-f]{32}", bundle[ia.WIDGET_VIEW]["model_id"])
    assert calls == [DESKTOP_WIDTH_IN, DESKTOP_WIDTH_IN]  # the widget's picture and the HTML's
    [frame] = frames_of(bundle["text/html"])
    assert frame["source"] is None and not frame["hidden"] and 'href="' not in frame["attrs"]
    assert params_of(bundle["text/html"])["frames"] == {"1": 0}


def test_a_figure_is_one_picture_for_two_widths_and_no_widget(monkeypatch):
    monkeypatch.setenv("ILLUSTRATED_BOOK_BUILD", "1")
    bundle = ia.figure(lambda width: draw(1, "k", width=width), alt="one")._repr_mimebundle_()
    assert ia.WIDGET_VIEW not in bundle and bundle["text/html"].count("<img") == 1
    assert bundle["text/html"].count("<source") == 1 and 'class="il-frame il-zoom"' in bundle["text/html"]


def test_live_containers_carry_their_kind_and_starting_state():
    page = ia.live("translate", {"corpus": "fr-en", "sentence": "je <suis>"}, alt="live").html()
    assert 'data-il-widget="translate"' in page
    assert params_of(page) == {"corpus": "fr-en", "sentence": "je <suis>"}
    assert "<suis>" not in page  # escaped


def test_a_live_widget_starts_with_its_default_picture_for_both_widths():
    page = ia.live("beam", {}, alt="tree", default=lambda width: draw(2, width=width)).html()
    assert page.count("<source") == 1 and 'class="il-live-default"' in page
    assert "il-zoom" not in page  # the picture the widget replaces is no link


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


def test_the_kernel_twin_redraws_on_every_change_and_prints_bad_input(capsys):
    box, size = widgets.Text(value="a"), widgets.IntSlider(value=1, max=5)
    button = widgets.Button(description="go")
    seen = []

    def show(control):
        seen.append(control)
        if box.value == "bad":
            raise ValueError("sentence: expected words, got 'bad'")
        size.value = 2  # a change show makes itself does not call it again
        return None

    view = ia.twin([box, [size, button]], show)
    assert seen == [None] and isinstance(view.children[1], widgets.HBox)
    assert isinstance(view.children[-1], widgets.Output)
    box.value = "b"
    size.value = 4
    button.click()
    assert seen == [None, box, size, button]
    box.value = "bad"  # (outside a kernel the Output passes what is printed through)
    assert capsys.readouterr().out.endswith("sentence: expected words, got 'bad'\n")


def tabled(*, width=DESKTOP_WIDTH_IN, cell_pt=7.0):
    """Large labels around a table whose cells are smaller than every label."""
    fig, ax = plt.subplots(figsize=(width, 2), dpi=DPI)
    ax.set_title("a table", fontsize=12)
    ax.set_xticks([0, 1], ["left", "right"], fontsize=10)
    table = ax.table([["0.25", "1.5"], ["-3", "4"]], loc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(cell_pt)
    ax.text(0.5, 0.9, "-0.5", fontsize=cell_pt + 0.5, ha="center")  # a value in a cell
    return fig


def test_the_smallest_text_counts_table_cells_and_values_in_cells(legible):
    """data-text-px and legible() read every text the renderer draws: the 7 pt table cells here,
    which are no artist's children (matplotlib's findobj misses them), not the 10 pt labels."""
    page = ia.figure(tabled, alt="a table").html()
    (frame,) = frames_of(page)
    for tag in (frame["source"], frame["img"]):
        assert float(attr(tag, "data-text-px")) == pytest.approx(7 * DPI / 72, abs=0.05)
    with pytest.raises(AssertionError, match=r"below 8.0 pt: \[\(7.0, '-3'\)"):
        legible(tabled(width=PHONE_WIDTH_IN))
    legible(tabled(width=PHONE_WIDTH_IN, cell_pt=8.0))
