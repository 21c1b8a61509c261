"""The live whole-model drawing (site/js/widgets/wholemodel.js, chapter 07) for a sentence the reader
types, at 1280 px and on a phone (390 px): at every step its "K, V" labels lie clear of every box,
its text is 9 CSS px or more and, drawn for the reader's column as the build-time frames are, no
smaller than theirs (a phone gets a phone's drawing, not the desktop one shrunk), the controls row
keeps its height whatever the step's label, and the word written is worded as the build-time frames word it
(book/whole_model.py: "am   p = 0.99"). Needs the built book (`make book`).
"""
from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from pages import PHONE, pages_with, settle, type_sentence


SENTENCE = "nous avons des chats noirs"

#: Per step: the "K, V" labels that overlap a box, the smallest text (CSS px), the word's line.
GEOMETRY = """
const [widget, step] = arguments;
const range = widget.querySelector('input[data-control=step]');
range.value = String(step + 1);
range.dispatchEvent(new Event('input'));
const svg = widget.querySelector('svg[data-role=whole-model]');
const texts = Array.from(svg.querySelectorAll('text'));
const boxes = Array.from(svg.querySelectorAll('rect[rx]')).map(r => r.getBoundingClientRect());
const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
const labels = texts.filter(t => /^K, ?V$/.test(t.textContent));
return {
  step: Number(svg.dataset.step),
  labels: labels.length,
  overlaps: labels.filter(t => boxes.some(b => hit(t.getBoundingClientRect(), b))).length,
  smallest: Math.min(...texts.filter(t => t.textContent.trim()).map(
    t => parseFloat(getComputedStyle(t).fontSize) * svg.getBoundingClientRect().width
         / svg.viewBox.baseVal.width)),
  word: texts.filter(t => / p = /.test(t.textContent)).map(t => t.textContent),
  row: widget.querySelector('.il-controls:has(input[data-control=step])').getBoundingClientRect().height,
  // the build-time frame's smallest text as the column would show it (the phone's drawing on a phone)
  frame: (() => {
    const p = widget.querySelector('.il-frame picture'), source = p.querySelector('source');
    const chosen = source && matchMedia(source.media).matches ? source : p.querySelector('img');
    return Number(chosen.dataset.textPx)
      * Math.min(1, svg.getBoundingClientRect().width / Number(chosen.getAttribute('width')));
  })(),
};
"""


def _drawn(browser, server, phone: bool, sentence: str):
    """Chapter 07's live widget, at 390 px if ``phone``, once it has drawn ``sentence``."""
    if phone:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    else:  # a desktop's window, whatever an earlier test left
        browser.set_window_size(1280, 1000)
    browser.get(f"{server.base_url}/{pages_with('wholemodel')[0]}.html")
    widget = WebDriverWait(browser, 60).until(lambda d: d.find_element(
        By.CSS_SELECTOR, "[data-il-widget=wholemodel]"))
    settle(browser, widget)
    type_sentence(widget, sentence)
    state = settle(browser, widget)
    assert state == "ready", widget.find_element(By.CSS_SELECTOR, "[data-role=result]").text
    WebDriverWait(browser, 180, poll_frequency=0.2).until(lambda d: d.execute_script(
        "return arguments[0].querySelector('svg[data-role=whole-model]');", widget))
    return widget


@pytest.mark.parametrize("phone", [False, True], ids=["1280px", "390px"])
def test_the_live_drawing_keeps_k_v_clear_of_the_boxes_and_words_p_as_the_frames(
        browser, server, phone):
    try:
        widget = _drawn(browser, server, phone, SENTENCE)
        label = widget.get_attribute("aria-label")  # what it shows now, not the page's sentence
        assert label.startswith(f"the whole fr-en model translating '{SENTENCE}'"), label
        n_steps = int(widget.find_element(By.CSS_SELECTOR, "input[data-control=step]")
                      .get_attribute("max"))
        rows = set()
        for step in range(n_steps):
            seen = browser.execute_script(GEOMETRY, widget, step)
            rows.add(seen["row"])
            assert len(rows) == 1, f"step {step}: the controls row changed height: {rows}"
            assert seen["step"] == step and seen["labels"] >= 1, seen
            assert seen["overlaps"] == 0, f"step {step}: a 'K, V' label lies on a box: {seen}"
            assert seen["smallest"] >= 9, f"step {step}: text at {seen['smallest']:.1f} px"
            assert seen["smallest"] >= 0.9 * seen["frame"], (
                f"step {step}: text at {seen['smallest']:.1f} px, the frames' at {seen['frame']:.1f}")
            assert len(seen["word"]) == 1 and re.fullmatch(r"\S+\s+p = [01]\.\d\d",
                                                           seen["word"][0]), seen
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


#: The slider moved to ``step`` (-1: the encoder), then the drawing as ``svg`` and its ``box``.
AT_STEP = """
const [widget, step] = arguments;
const range = widget.querySelector('input[data-control=step]');
range.value = String(step + 1);
range.dispatchEvent(new Event('input'));
const svg = widget.querySelector('svg[data-role=whole-model]'), box = svg.getBoundingClientRect();
"""

#: The drawing at ``step``: its height (units), its texts, those not inside it, and the smallest
#: text's size (CSS px).
TEXTS = AT_STEP + """
const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim());
const inside = (r) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1
  && r.bottom <= box.bottom + 1;
return {height: svg.viewBox.baseVal.height, texts: texts.map(t => t.textContent), outside: texts.filter(
          t => !inside(t.getBoundingClientRect())).map(t => t.textContent.slice(0, 30)),
        smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize)
                                          * box.width / svg.viewBox.baseVal.width))};
"""
LONG = " ".join(["nous ne sommes pas des étudiantes fatiguées"] * 5)  # 35 words


@pytest.mark.parametrize("phone", [False, True], ids=["1280px", "390px"])
def test_the_live_drawing_keeps_every_word_of_a_long_sentence_inside(browser, server, phone):
    """A reader's long sentence: every source word is drawn, in order, inside the drawing (rows
    under the encoder where one row is too narrow), and so is every other text, at 9 px or more;
    every step's drawing is as tall (no jump as the slider moves)."""
    try:
        widget = _drawn(browser, server, phone, LONG)
        last = int(widget.find_element(By.CSS_SELECTOR, "input[data-control=step]")
                   .get_attribute("max")) - 1
        heights = set()
        for step in (-1, last):
            seen = browser.execute_script(TEXTS, widget, step)
            heights.add(seen["height"])
            words = LONG.split()
            drawn = seen["texts"]
            start = drawn.index(words[0])
            assert drawn[start:start + len(words)] == words, (step, drawn)
            assert not seen["outside"], (step, seen["outside"])
            assert seen["smallest"] >= 9, (step, seen["smallest"])
        assert len(heights) == 1, heights
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


#: At ``step``: the "fed back in" note (its text, whether it lies inside the drawing) and
#: whether the dashed loop is drawn.
LOOP = AT_STEP + """
const said = [...svg.querySelectorAll('text')].find((t) => t.textContent.startsWith('fed back in'));
const loop = [...svg.querySelectorAll('polyline')].find((p) => p.getAttribute('stroke-dasharray'));
return {said: said ? said.textContent : null, inside: said ? (() => { const r = said.getBoundingClientRect();
          return r.left >= box.left - 1 && r.right <= box.right + 1; })() : null,
        loop: Boolean(loop)};
"""


@pytest.mark.parametrize("phone", [False, True], ids=["1280px", "390px"])
def test_the_word_written_is_drawn_fed_back_in_on_the_desktop(browser, server, phone, screenshots):
    """As the frames: at 1280 px the word each step writes goes round the decoder, dashed, into
    its input line, "fed back in at the next step" beside it, inside the drawing; not after
    <eos>, and not on a phone, where the column has no room (the phone's frames leave it out)."""
    try:
        widget = _drawn(browser, server, phone, SENTENCE)
        last = int(widget.find_element(By.CSS_SELECTOR, "input[data-control=step]")
                   .get_attribute("max")) - 1
        first = browser.execute_script(LOOP, widget, 0)
        browser.execute_script("arguments[0].scrollIntoView()", widget)
        browser.save_screenshot(str(screenshots / f"whole-model-fed-back-{390 if phone else 1280}.png"))
        end = browser.execute_script(LOOP, widget, last)  # the step that writes <eos>
        if phone:
            assert first == {"said": None, "inside": None, "loop": False}, first
        else:
            assert first == {"said": "fed back in at the next step", "inside": True, "loop": True}, first
        assert end["said"] is None and not end["loop"], end
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
