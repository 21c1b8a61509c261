"""The interactive figures of the static book (site/js/widgets/frames.js over pictures drawn at build
time by src/illustrated/book/interactive.py) used as a reader uses them, on every page that has
one: each control, moved with the keyboard through all its values, changes the picture shown
(exactly one picture at a time, the one its data-params map the controls' values to), and the
play button steps the first control by itself. Every figure's picture is the drawing made for
the reader's column (the desktop one at 1280 px, the phone one at 390 px) and is a link to the
desktop drawing, full size. Needs the built book (`make book`).
"""
from __future__ import annotations

import json
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from builtbook import html_path, toc_pages

PAGES = [p for p in toc_pages() if html_path(p).exists()
         and 'data-il-widget="frames"' in html_path(p).read_text(encoding="utf-8")]

#: The frame each visible picture is, the controls' values, what the params map them to.
STATE = """
const w = arguments[0], p = JSON.parse(w.dataset.params);
const values = Array.from(w.querySelectorAll('.il-controls [data-control]')).map(c => c.value);
return {visible: Array.from(w.querySelectorAll('.il-frame')).filter(i => !i.hidden
          && i.getBoundingClientRect().width > 0).map(i => Number(i.dataset.frame)),
        values: values, expected: p.frames[values.join('-')]};
"""


def _state(driver, widget) -> dict:
    return driver.execute_script(STATE, widget)


def _step(control, forward: bool) -> None:
    """One value on, with the keyboard: right and left on a slider, down and up on a select."""
    if control.tag_name == "select":
        control.send_keys(Keys.ARROW_DOWN if forward else Keys.ARROW_UP)
    else:
        control.send_keys(Keys.ARROW_RIGHT if forward else Keys.ARROW_LEFT)


@pytest.mark.parametrize("page", PAGES or [pytest.param(None, marks=pytest.mark.skip(
    reason="no page of the built book has a frames widget"))])
def test_every_control_changes_the_picture(browser, server, page):
    browser.get(f"{server.base_url}/{page}.html")
    widgets = browser.find_elements(By.CSS_SELECTOR, "[data-il-widget=frames]")
    problems = []
    for n, widget in enumerate(widgets):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", widget)
        params = json.loads(widget.get_attribute("data-params"))
        for k, spec in enumerate(params["controls"]):
            control = widget.find_elements(By.CSS_SELECTOR, ".il-controls [data-control]")[k]
            where = f"{page} figure {n} control {spec['name']!r}"
            seen = set()
            for forward in (True, False):  # to its end, then back to its start
                for _ in range(len(spec["labels"])):
                    state = _state(browser, widget)
                    if state["visible"] != [state["expected"]]:
                        problems.append(f"{where}: values {state['values']} show {state['visible']}, "
                                        f"expected [{state['expected']}]")
                    seen.add(state["expected"])
                    _step(control, forward)
            if len(spec["labels"]) > 1 and len(seen) < 2:
                problems.append(f"{where}: the picture never changes over {spec['labels']}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES or [pytest.param(None, marks=pytest.mark.skip(
    reason="no page of the built book has a frames widget"))])
def test_play_steps_the_first_control(browser, server, page):
    browser.get(f"{server.base_url}/{page}.html")
    for widget in browser.find_elements(By.CSS_SELECTOR, "[data-il-widget=frames]"):
        buttons = widget.find_elements(By.CSS_SELECTOR, "button.il-play")
        if not buttons:
            continue
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", widget)
        before = _state(browser, widget)
        buttons[0].click()
        time.sleep(2.2)  # two steps of 900 ms
        after = _state(browser, widget)
        buttons[0].click()  # pause
        assert after["values"][0] != before["values"][0], f"{page}: play did not move {before['values']}"
        assert after["visible"] == [after["expected"]], after


#: Every figure's picture of the page: the drawing the browser chose, the phone's and the
#: desktop's, and where the link around it leads.
PICTURES = """
return Array.from(document.querySelectorAll('.il-widget[data-il-widget=frames] picture')).map(p => {
  const img = p.querySelector('img'), source = p.querySelector('source'), link = p.closest('a');
  return {chosen: img.currentSrc, desktop: img.src, alt: img.alt.slice(0, 40),
          phone: source ? new URL(source.getAttribute('srcset'), location.href).href : null,
          link: link ? link.href : null};
});
"""
ALL_FIGURE_PAGES = [p for p in toc_pages() if html_path(p).exists()
                    and 'class="il-frame' in html_path(p).read_text(encoding="utf-8")]


@pytest.mark.parametrize("page", ALL_FIGURE_PAGES or [pytest.param(None, marks=pytest.mark.skip(
    reason="no page of the built book has a figure drawn for two columns"))])
def test_each_column_gets_its_drawing_and_a_tap_opens_it_full_size(browser, server, page):
    problems = []
    for width, mobile in ((1280, False), (390, True)):
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": mobile})
        try:
            browser.get(f"{server.base_url}/{page}.html")
            browser.execute_script("for (const d of document.querySelectorAll('details')) "
                                   "d.open = true; for (const i of document.images) "
                                   "i.loading = 'eager';")
            pictures = browser.execute_script(PICTURES)
        finally:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        for p in pictures:
            wanted = p["desktop"] if width == 1280 or p["phone"] is None else p["phone"]
            if p["chosen"] and p["chosen"] != wanted:
                problems.append(f"{p['alt']!r} at {width} px shows {p['chosen'][-24:]}, "
                                f"not {wanted[-24:]}")
            if p["link"] is not None and p["link"] != p["desktop"]:
                problems.append(f"{p['alt']!r}: the link opens {p['link'][-24:]}, not the "
                                f"desktop drawing {p['desktop'][-24:]}")
        if not any(p["link"] for p in pictures):
            problems.append(f"no picture of {page} opens full size")
    assert not problems, "\n".join(problems)


#: The height of a widget's controls row and where its shown picture starts, below the row.
ROW = """
const w = arguments[0], row = w.querySelector('.il-controls');
const shown = Array.from(w.querySelectorAll('.il-frame')).find(i => !i.hidden);
return {row: row.getBoundingClientRect().height,
        picture: shown.getBoundingClientRect().top - row.getBoundingClientRect().top};
"""


@pytest.mark.parametrize("width", [1280, 390], ids=["1280px", "390px"])
def test_the_controls_row_keeps_its_height_whatever_the_label(browser, server, width):
    problems = []
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
    try:
        for page in PAGES:
            browser.get(f"{server.base_url}/{page}.html")
            browser.execute_script("for (const d of document.querySelectorAll('details')) "
                                   "d.open = true;")
            for n, widget in enumerate(browser.find_elements(By.CSS_SELECTOR,
                                                             "[data-il-widget=frames]")):
                browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", widget)
                for control in widget.find_elements(By.CSS_SELECTOR, ".il-controls input"):
                    first = browser.execute_script(ROW, widget)
                    for _ in range(int(control.get_attribute("max"))):
                        _step(control, True)
                        seen = browser.execute_script(ROW, widget)
                        if seen != first:
                            problems.append(f"{page} figure {n} at {control.get_attribute('value')}"
                                            f": {seen}, at the start {first}")
                            break
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert not problems, f"at {width} px:\n" + "\n".join(problems)
