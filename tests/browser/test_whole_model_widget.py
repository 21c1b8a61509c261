"""The live whole-model drawing (site/js/wholemodel.js, chapter 07) for a sentence the reader
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

from test_live_widgets import pages_with, settle, type_sentence
from test_reading import PHONE

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


@pytest.mark.parametrize("phone", [False, True], ids=["1280px", "390px"])
def test_the_live_drawing_keeps_k_v_clear_of_the_boxes_and_words_p_as_the_frames(
        browser, server, phone):
    page = pages_with("wholemodel")[0]
    try:
        if phone:
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
        browser.get(f"{server.base_url}/{page}.html")
        widget = WebDriverWait(browser, 60).until(lambda d: d.find_element(
            By.CSS_SELECTOR, "[data-il-widget=wholemodel]"))
        settle(browser, widget)
        type_sentence(widget, SENTENCE)
        state = settle(browser, widget)
        assert state == "ready", widget.find_element(By.CSS_SELECTOR, "[data-role=result]").text
        WebDriverWait(browser, 180, poll_frequency=0.2).until(lambda d: d.execute_script(
            "return arguments[0].querySelector('svg[data-role=whole-model]');", widget))
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
