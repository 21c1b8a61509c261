"""The live views a reader drives (site/js/widgets/selfattention.js, translate.js, beam.js,
wholemodel.js, frames.js) as issue 47 asks: the attention views change on a click, a tap or the
keyboard's focus, never because the pointer passes over them while the page scrolls; every view
works from the keyboard alone (Tab to it, the arrow keys, Enter or Space) with a visible focus,
and says its result in a line a screen reader announces (aria-live); the views draw with the
page's palette (book/palette.py's colours, read from the --il-* custom properties); chapter 09's
beam figure's caption follows its sliders; chapter 05's, 08's and the deviations page's formulas
fit a phone's column. Needs the built book (`make book`).
"""
from __future__ import annotations

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import illustrated as il
from builtbook import html_path
from illustrated.book import palette
from pages import PHONE, open_on_a_phone, open_page, pages_with, params, settle, text_of, wait_shown

#: How the focused element is outlined, and the readout it announces with.
FOCUS = """
const a = document.activeElement, ring = a.closest('svg') ? a.closest('svg').querySelector(
  `rect.il-target[data-q="${a.dataset.q}"]`) : null;
const style = getComputedStyle(ring || a);
return ring ? {kind: 'ring', width: parseFloat(style.strokeWidth), colour: style.stroke}
            : {kind: 'outline', width: parseFloat(style.outlineWidth), colour: style.outlineColor,
               style: style.outlineStyle};
"""
FOCUS_BLUE = "rgb(31, 78, 153)"  # the book's focus ring, #1f4e99


def rgb(color: str) -> str:
    return "rgb({}, {}, {})".format(*(int(color[i:i + 2], 16) for i in (1, 3, 5)))


def active(driver):
    return driver.switch_to.active_element


def press(driver, *keys) -> None:
    ActionChains(driver).send_keys(*keys).perform()


def assert_focus_visible(driver) -> None:
    focus = driver.execute_script(FOCUS)
    assert focus["width"] >= 2 and focus["colour"] == FOCUS_BLUE, focus
    assert focus.get("style", "solid") != "none", focus


def readout_lines(widget) -> list[str]:
    return text_of(widget, "readout").splitlines()


# ---------------------------------------------------------------------------------------------
# The attention views: a click or the keyboard, not the pointer passing over

@pytest.mark.parametrize("page", ["chapters/04_multi_head_attention", "chapters/10_playground"])
def test_the_attention_view_keeps_its_word_while_the_pointer_passes_over_it(browser, server, page):
    if not html_path(page).exists():
        pytest.skip(f"{page} is not in the built book")
    [widget, *_] = open_page(browser, server, page, "selfattention")
    p = params(widget)
    wait_shown(browser, widget, {"corpus": p["corpus"], "sentence": p["sentence"]})
    tokens = il.data.tokenize(p["sentence"])
    assert all(' "it" attends to ' in line for line in readout_lines(widget))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", widget)
    svg = widget.find_element(By.CSS_SELECTOR, "svg[data-role=attention]")
    targets = svg.find_elements(By.CSS_SELECTOR, "rect.il-target")
    # the pointer rests over the drawing while the wheel scrolls the page under it, crossing words
    for q in (0, 1, 2, len(tokens) - 1):
        ActionChains(browser).move_to_element(targets[q]).perform()
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg), 0, 40).perform()
    ActionChains(browser).move_by_offset(0, 0).perform()
    lines = readout_lines(widget)
    assert lines and all(' "it" attends to ' in line for line in lines), lines
    # a click chooses: the readout is the clicked word's, and stays when the pointer leaves
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", svg)
    ActionChains(browser).move_to_element(targets[1]).click().perform()
    assert all(f' "{tokens[1]}" attends to ' in line for line in readout_lines(widget))
    ActionChains(browser).move_to_element(targets[4]).perform()
    browser.execute_script("window.scrollBy(0, 60)")
    assert all(f' "{tokens[1]}" attends to ' in line for line in readout_lines(widget))


def test_the_attention_view_from_the_keyboard_alone(browser, server):
    """Tab from the head menu lands on the word shown ("it"), ringed; Home, the arrows, Enter and
    Space choose words; the one readout announces each (aria-live) and a new head keeps the word."""
    page = pages_with("selfattention")[0]
    [widget, *_] = open_page(browser, server, page, "selfattention")
    p = params(widget)
    wait_shown(browser, widget, {"corpus": p["corpus"], "sentence": p["sentence"]})
    tokens = il.data.tokenize(p["sentence"])
    readout = widget.find_element(By.CSS_SELECTOR, "[data-role=readout]")
    assert readout.get_attribute("aria-live") == "polite"
    widget.find_element(By.CSS_SELECTOR, "select[data-control=head]").send_keys(Keys.TAB)
    assert active(browser).get_attribute("data-q") == str(tokens.index("it"))
    assert_focus_visible(browser)
    press(browser, Keys.HOME)
    assert active(browser).get_attribute("data-q") == "0"
    assert all(f' "{tokens[0]}" attends to ' in line for line in readout_lines(widget))
    press(browser, Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ENTER)
    assert all(f' "{tokens[2]}" attends to ' in line for line in readout_lines(widget))
    press(browser, Keys.ARROW_UP)
    scrolled = browser.execute_script("return window.scrollY")
    press(browser, Keys.SPACE)
    assert all(f' "{tokens[1]}" attends to ' in line for line in readout_lines(widget))
    assert browser.execute_script("return window.scrollY") == scrolled  # Space chose, not scrolled
    head = widget.find_element(By.CSS_SELECTOR, "select[data-control=head]")
    head.send_keys(Keys.ARROW_DOWN)  # a head: the same readout element, the same word
    WebDriverWait(browser, 5).until(lambda _: readout.is_displayed()
                                    and len(readout_lines(widget)) == 1)
    assert readout_lines(widget)[0].startswith(f'head 0: "{tokens[1]}" attends to ')


# ---------------------------------------------------------------------------------------------
# Every view from the keyboard, its result announced

def tab_through(driver, widget) -> list[str]:
    """From the widget's first control, Tab to each of its controls in turn (each with a
    visible focus); their data-control names."""
    first = widget.find_element(By.CSS_SELECTOR, "[data-control], button")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus()", first)
    names = []
    while driver.execute_script("return arguments[0].contains(document.activeElement)", widget):
        element = active(driver)
        if element.get_attribute("data-control") or element.tag_name == "button":
            assert_focus_visible(driver)
            names.append(element.get_attribute("data-control") or element.text)
        press(driver, Keys.TAB)
    return names


def said(widget) -> str:
    element = widget.find_element(By.CSS_SELECTOR, "[data-role=said]")
    assert element.get_attribute("aria-live") == "polite"
    return element.get_attribute("textContent")


def test_the_translate_view_from_the_keyboard(browser, server):
    [widget, *_] = open_page(browser, server, pages_with("translate")[0], "translate")
    assert settle(browser, widget) == "ready"
    assert tab_through(browser, widget) == ["corpus", "sentence", "layer", "head"]
    best = [s.text for s in widget.find_elements(By.CSS_SELECTOR, "[data-role=translation] span")
            if s.text != "<eos>"]
    assert said(widget).startswith(f"Translation: {' '.join(best)}; the model is ")
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("je suis étudiant", Keys.ENTER)
    wait_shown(browser, widget, {"sentence": "je suis étudiant"})
    assert said(widget).startswith("Translation: i am a student; the model is ")


def test_the_beam_view_from_the_keyboard_and_its_caption_follows_the_sliders(browser, server):
    page = pages_with("beam")[0]
    [widget, *_] = open_page(browser, server, page, "beam")
    assert settle(browser, widget) == "ready"
    assert tab_through(browser, widget) == ["sentence", "beam_size", "top_beams", "alpha"]
    caption = browser.execute_script(
        "return arguments[0].closest('figure').querySelector('figcaption')", widget)
    assert "beam_size = 2" in caption.text
    size = widget.find_element(By.CSS_SELECTOR, "input[data-control=beam_size]")
    size.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)  # 4
    wait_shown(browser, widget, {"beamSize": 4})
    assert "beam_size = 4" in caption.text and "beam_size = 2" not in caption.text, caption.text
    assert said(widget).startswith("beam_size 4: ") and "i am a student" in said(widget)
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("tu es étudiant", Keys.ENTER)
    wait_shown(browser, widget, {"sentence": "tu es étudiant"})
    assert "\u201ctu es étudiant\u201d" in caption.text, caption.text


def open_whole_model(browser, server):
    """Chapter 07's whole-model view, once mounted."""
    browser.get(f"{server.base_url}/{pages_with('wholemodel')[0]}.html")
    return WebDriverWait(browser, 60).until(lambda d: d.find_element(
        By.CSS_SELECTOR, "[data-il-widget=wholemodel] .il-live")).find_element(By.XPATH, "..")


def test_the_whole_model_view_from_the_keyboard(browser, server):
    widget = open_whole_model(browser, server)
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus()", box)
    assert_focus_visible(browser)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("je suis étudiant", Keys.ENTER)
    wait_shown(browser, widget, {"sentence": "je suis étudiant"})
    assert said(widget).startswith('The model writes "i am a student')
    names = tab_through(browser, widget)
    assert names[-2:] == ["▶ play", "step"], names
    step = widget.find_element(By.CSS_SELECTOR, "input[data-control=step]")
    step.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    svg = widget.find_element(By.CSS_SELECTOR, "svg[data-role=whole-model]")
    assert svg.get_attribute("data-step") == "1"
    output = step.find_element(By.XPATH, "ancestor::label//output")
    assert output.get_attribute("aria-live") == "polite" and output.text == "1: am"


def test_a_figure_with_controls_from_the_keyboard(browser, server):
    """The first frames figure with a slider and a play button: Tab reaches both, the arrows move
    the picture and its alt text is announced; Enter on play steps it by itself."""
    for page in pages_with("frames"):
        browser.get(f"{server.base_url}/{page}.html")
        found = browser.find_elements(By.CSS_SELECTOR, "[data-il-widget=frames]:has(.il-play)")
        if found:
            break
    else:
        pytest.skip("no frames figure with a play button")
    widget = found[0]
    names = tab_through(browser, widget)
    control = params(widget)["controls"][0]["name"]
    assert names[:2] == ["▶ play", control], names
    slider = widget.find_element(By.CSS_SELECTOR, f"[data-control='{control}']")
    before = widget.get_attribute("data-shown")
    at_end = slider.get_attribute("value") == slider.get_attribute("max")
    slider.send_keys(Keys.ARROW_LEFT if at_end else Keys.ARROW_RIGHT)
    assert widget.get_attribute("data-shown") != before
    shown = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.il-frame')).find(f => !f.hidden)"
        ".querySelector('img').alt", widget)
    assert said(widget) == shown and shown
    play = widget.find_element(By.CSS_SELECTOR, ".il-play")
    play.send_keys(Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda _: widget.get_attribute("data-shown") != shown
                                    and "pause" in play.text)
    play.send_keys(Keys.SPACE)
    assert "play" in play.text


# ---------------------------------------------------------------------------------------------
# The palette

def test_the_live_views_draw_with_the_palette(browser, server):
    """Computed colours, as the page resolves the --il-* custom properties: the attention view's
    lines in the heads' colours, the attention table's cells on the sequential ramp, the
    probabilities' bars, the beam tree's boxes as chapter 09's figure, the whole model's layers."""
    page = "chapters/10_playground"
    [attention] = open_page(browser, server, page, "selfattention")
    settle(browser, attention)
    strokes = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('line[data-head]')).map(l => "
        "[Number(l.dataset.head), getComputedStyle(l).stroke]);", attention)
    assert strokes and all(c == rgb(palette.HEAD_COLORS[h]) for h, c in strokes)
    swatches = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('[data-role=legend] [data-head]')).map(l => "
        "[Number(l.dataset.head), getComputedStyle(l.querySelector('.il-head-swatch')).backgroundColor]);",
        attention)
    assert swatches and all(c == rgb(palette.HEAD_COLORS[h]) for h, c in swatches)
    [translate] = browser.find_elements(By.CSS_SELECTOR, "[data-il-widget=translate]")
    settle(browser, translate)
    ramp = palette.ramp()
    cells = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('td[data-weight]')).map(c => "
        "[Number(c.dataset.weight), getComputedStyle(c).backgroundColor, getComputedStyle(c).color]);",
        translate)
    assert cells
    for weight, fill, ink in cells:
        expected = ramp[round(weight * (palette.RAMP_STOPS - 1))]
        assert (fill, ink) == (rgb(expected[0]), rgb(expected[1])), (weight, fill, ink)
    bars = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.il-bar:not(.il-chosen) > div')).map(b => "
        "getComputedStyle(b).backgroundColor);", translate)
    assert bars and set(bars) == {rgb(palette.TENSORS["probs"].color)}

    [beam] = open_page(browser, server, pages_with("beam")[0], "beam")
    settle(browser, beam)
    look = {"kept": ("kept", "query"), "finished": ("finished", "finished-edge"),
            "dropped": ("blank", "dropped-edge"), "root": ("off", "text")}
    nodes = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('[data-role=node]')).map(n => {"
        " const r = getComputedStyle(n.querySelector('rect'));"
        " return [n.dataset.status, r.fill, r.stroke]; });", beam)
    assert {status for status, _, _ in nodes} >= {"root", "kept", "dropped"}
    for status, fill, stroke in nodes:
        want = look[status]
        assert (fill, stroke) == (rgb(palette.ROLES[want[0]] if want[0] in palette.ROLES
                                      else palette.TENSORS[want[0]].color),
                                  rgb(palette.ROLES.get(want[1]) or palette.TENSORS[want[1]].color)), status


def test_the_whole_model_view_draws_its_layers_in_the_palette(browser, server):
    widget = open_whole_model(browser, server)
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("je suis étudiant", Keys.ENTER)
    wait_shown(browser, widget, {"sentence": "je suis étudiant"})
    fills = lambda: browser.execute_script(  # noqa: E731
        "return Object.fromEntries(Array.from(arguments[0].querySelectorAll('svg[data-role=whole-model] "
        "rect[rx]')).map(r => [r.nextSibling.textContent, getComputedStyle(r).fill]));", widget)
    encoding = fills()
    assert encoding["encoder 0"] == rgb(palette.ROLES["encoder"])
    assert encoding["decoder 0"] == rgb(palette.ROLES["off"])
    widget.find_element(By.CSS_SELECTOR, "input[data-control=step]").send_keys(Keys.ARROW_RIGHT)
    decoding = fills()
    assert decoding["decoder 0"] == rgb(palette.ROLES["decoder"])
    assert decoding["Linear + softmax"] == rgb(palette.TENSORS["probs"].color)


# ---------------------------------------------------------------------------------------------
# Formulas on a phone

#: Every formula (dropdowns open) wider than its box, scrolling inside it, or past the column.
FORMULAS = """
for (const d of document.querySelectorAll('details')) d.open = true;
const article = document.querySelector('article.bd-article') || document.querySelector('article');
const style = getComputedStyle(article), box = article.getBoundingClientRect();
const right = box.right - parseFloat(style.paddingRight);
const all = Array.from(article.querySelectorAll('mjx-container')).filter(m => m.getClientRects().length);
const bad = all.filter(m => {
  const math = m.querySelector('mjx-math').getBoundingClientRect();
  let scrolled = false;
  for (let e = m; e && e !== article; e = e.parentElement) {
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
    if (scrolls && e.scrollWidth > e.clientWidth + 1) scrolled = true;
  }
  return scrolled || m.getBoundingClientRect().right > right + 1 || math.right > right + 1
    || (m.getAttribute('display') === 'true' && math.width > m.clientWidth + 1);
}).map(m => (m.querySelector('mjx-assistive-mml') || m).textContent.slice(0, 40));
return {count: all.length, display: all.filter(m => m.getAttribute('display') === 'true').length, bad};
"""


@pytest.mark.parametrize("page", ["chapters/05_positional_encoding",
                                  "chapters/08_training_and_loss", "deviations"])
def test_every_formula_fits_a_phones_column(browser, server, page):
    if not html_path(page).exists():
        pytest.skip(f"{page} is not in the built book")
    try:
        open_on_a_phone(browser, server, page)
        found = browser.execute_script(FORMULAS)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert found["count"] > 0 and not found["bad"], (PHONE["width"], found)
