"""The training widget for every reader, in the built book: a run's end dispatches
illustrated:run-end (a prediction reads real runs back), the book's run of the same recipe is
drawn faint under a run and named, a coreference run shows both "it" sentences side by side, the
download hint unpacks what il.load_checkpoint returns, a compared menu returns to its value, the
form is a grid (folded on a phone) and the chart is in view while training, the reader's own
pairs' time is estimated before Train (too large said so), and the widget works from the keyboard
with a visible focus and its result announced."""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from trainer_page import PAGE, WIDGET, _open, _set, _wait

LISTEN = """window.__ended = [];
document.addEventListener('illustrated:run-end', (e) => window.__ended.push(
  {runName: e.detail.runName, losses: e.detail.losses, accuracy: e.detail.accuracy,
   target: e.target.dataset.ilWidget}));"""


def _click(browser, text, widget=WIDGET):
    browser.execute_script("""[...document.querySelectorAll(arguments[0] + ' button')]
      .find((b) => b.textContent === arguments[1]).click()""", widget, text)


def test_a_run_dispatches_its_end_with_the_reference_drawn_while_it_trains(browser, server):
    _open(browser, server)
    _set(browser, "corpus", "post")
    browser.execute_script(LISTEN)
    _click(browser, "Train")
    WebDriverWait(browser, 60).until(lambda d: d.execute_script(
        "return document.querySelector(arguments[0] + ' [data-role=curve-line]')", WIDGET))
    name, opacity, label, state = browser.execute_script("""
      const w = document.querySelector(arguments[0]), f = w.querySelector('[data-role=reference-curve]');
      return [f.dataset.name, f.getAttribute('stroke-opacity'),
              w.querySelector('[data-role=reference-label]').textContent, w.dataset.state];""", WIDGET)
    assert name == "post" and float(opacity) < 0.5 and state == "training"
    assert label.startswith("faint: the book's run “post” (PyTorch, when the book was built): ")
    assert label.endswith("after 100 steps")
    _wait(browser, "done", 120)
    ended = browser.execute_script("return window.__ended")
    exact = float(browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=exact-match]")
                  .get_attribute("data-exact-match"))
    assert len(ended) == 1 and ended[0]["runName"] == "post" and ended[0]["target"] == "train"
    assert len(ended[0]["losses"]) == 100 and ended[0]["accuracy"] == exact == 1.0
    hint = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=load-hint]").text
    assert hint.startswith("model, (src_vocab, tgt_vocab), cfg = il.load_checkpoint(\"post-")


def test_a_prediction_reads_back_real_runs_and_the_menu_returns(browser, server):
    """Chapter 06: the compare button trains post-LN then pre-LN (10 steps each here); the
    prediction reads both runs back from their run-end events; the norm menu is post-LN again."""
    browser.set_window_size(1280, 1000)
    browser.get(f"{server.base_url}/chapters/06_residuals.html")
    _wait(browser, "ready", 30)
    quiz = browser.find_element(By.ID, "quiz-ch06-norm")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", quiz)
    quiz.find_elements(By.CSS_SELECTOR, "input[type=radio]")[1].click()
    quiz.find_element(By.CSS_SELECTOR, ".il-quiz-check").click()
    _set(browser, "steps", "10")
    assert browser.execute_script("return document.querySelector(arguments[0] + "
                                  "' [data-control=normFirst]').value", WIDGET) == "post"
    _click(browser, "Train post-LN, then pre-LN")
    result = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-result")
    WebDriverWait(browser, 180).until(lambda _: "Your runs" in result.text)
    assert "Your runs: post-LN: loss " in result.text and "; pre-LN: loss " in result.text
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return document.querySelector(arguments[0] + ' [data-role=compare-note]').textContent",
        WIDGET))
    assert browser.execute_script("return document.querySelector(arguments[0] + "
                                  "' [data-control=normFirst]').value", WIDGET) == "post"
    note = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=compare-note]").text
    assert note.startswith("The norm menu is back on post-LN") or "back on post-LN" in note


def test_a_coreference_run_shows_both_it_sentences(browser, server):
    _open(browser, server)
    _set(browser, "corpus", "coreference")
    _set(browser, "steps", "10")
    _click(browser, "Train")
    _wait(browser, "done", 180)
    figure = WebDriverWait(browser, 30).until(lambda d: d.find_element(
        By.CSS_SELECTOR, f"{WIDGET} [data-role=it-pair]"))
    heads = [th.text for th in figure.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads == ["head", "“…it was too tired”", "“…it was too wide”"]
    rows = figure.find_elements(By.CSS_SELECTOR, "[data-role=it-head]")
    assert len(rows) == 2 * 4  # layers x heads of the coreference recipe
    for row in rows:
        cells = row.find_elements(By.CSS_SELECTOR, "td")
        assert len(cells) == 2 and all("animal 0." in c.text and "street 0." in c.text
                                       for c in cells)
        reads = [c.get_attribute("data-picked") for c in cells] == ["animal", "street"]
        assert row.get_attribute("data-reads") == str(reads).lower()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_form_is_a_grid_and_the_chart_is_in_view_while_training(browser, server, width,
                                                                   screenshots):
    browser.set_window_size(width, 844 if width < 500 else 1000)
    browser.get(f"{server.base_url}/{PAGE}")
    _wait(browser, "ready", 30)
    more = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=more-settings]")
    assert (more.get_attribute("open") is not None) == (width > 700)
    boxes = browser.execute_script("""
      return [...document.querySelectorAll(arguments[0] + ' .il-train-grid')].map((g) =>
        [...g.children].filter((c) => !c.hidden).map((c) => {
          const r = c.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top)]; }));""",
                                   WIDGET)
    for grid in boxes:  # a grid: items share their row's top, and columns' lefts repeat
        tops = sorted({t for _, t in grid})
        lefts = [sorted(left for left, t in grid if t == top) for top in tops]
        assert all(row == lefts[0][:len(row)] for row in lefts), lefts
    _set(browser, "corpus", "post")
    browser.execute_script("document.querySelector(arguments[0]).scrollIntoView()", WIDGET)
    train = browser.find_element(By.XPATH, "//*[@data-il-widget='train']//button[.='Train']")
    form_height = browser.execute_script(
        "return arguments[0].getBoundingClientRect().bottom - document.querySelector("
        "arguments[1]).getBoundingClientRect().top", train, WIDGET)
    assert form_height < (844 if width < 500 else 1000)  # the form and its Train in one screen
    train.click()
    WebDriverWait(browser, 60).until(lambda d: d.execute_script(
        "return document.querySelector(arguments[0] + ' [data-role=curve-line]')", WIDGET))
    chart = browser.execute_script("const r = document.querySelector(arguments[0] + "
                                   "' [data-role=chart]').getBoundingClientRect();"
                                   "return [r.top, r.bottom, innerHeight]", WIDGET)
    assert 0 <= chart[0] and chart[1] <= chart[2], chart
    browser.save_screenshot(str(screenshots / f"trainer-training-{width}.png"))
    _wait(browser, "done", 120)


def test_the_readers_pairs_are_estimated_before_train_and_too_many_said_so(browser, server):
    _open(browser, server)
    _set(browser, "corpus", "pairs")
    paste = """const box = document.querySelector(arguments[0] + ' [data-control=pairs]');
      box.value = arguments[1]; box.dispatchEvent(new Event('change'));"""
    small = "\n".join(f"le mot {i % 7} numéro {i % 5}\tthe word {i % 7} number {i % 5}"
                      for i in range(30))
    browser.execute_script(paste, WIDGET, small)
    warning = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=warning]")
    WebDriverWait(browser, 60).until(lambda _: "pairs to train on" in warning.text)
    assert "27 pairs to train on: 300 steps of 64 show each about 711 times, about " in \
        warning.text and warning.get_attribute("data-too-large") == "false"
    huge = "\n".join(f"w{i % 97} v{i % 89}\tx{i % 97} y{i % 89}" for i in range(220_000))
    browser.execute_script(paste, WIDGET, huge)
    WebDriverWait(browser, 120).until(lambda _: "Too large" in warning.text)
    assert "198,000 pairs to train on, 64 a step, need 3,094 steps for one pass" in warning.text
    assert warning.get_attribute("data-too-large") == "true"
    assert browser.execute_script("return document.querySelector(arguments[0]).dataset.state",
                                  WIDGET) == "ready"  # said before Train


def test_the_trainer_works_from_the_keyboard_and_announces_its_result(browser, server):
    _open(browser, server)
    menu = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} select[data-control=corpus]")
    browser.execute_script("arguments[0].focus()", menu)
    menu.send_keys("post")  # a closed menu takes its option's first letters from the keyboard
    WebDriverWait(browser, 5).until(lambda _: menu.get_attribute("value") == "post")
    steps = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} input[data-control=steps]")
    assert steps.get_attribute("value") == "100"  # the post recipe, filled by the keyboard's choice
    active = browser.switch_to.active_element
    for _ in range(40):  # Tab to Train
        active.send_keys(Keys.TAB)
        active = browser.switch_to.active_element
        if active.text == "Train":
            break
    assert active.text == "Train"
    outline = browser.execute_script("const s = getComputedStyle(arguments[0]);"
                                     "return [s.outlineStyle, parseFloat(s.outlineWidth)]", active)
    assert outline[0] == "solid" and outline[1] >= 2  # a visible focus
    active.send_keys(Keys.ENTER)
    _wait(browser, "training", 30)
    status = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=status]")
    assert status.get_attribute("aria-live") == "off"  # not every step read aloud
    _wait(browser, "done", 120)
    result = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=result]")
    assert result.get_attribute("aria-live") == "polite" and result.text.startswith("Trained after")
    assert status.get_attribute("aria-live") == "polite"
    summary = browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=more-settings] summary")
    browser.execute_script("arguments[0].focus()", summary)
    summary.send_keys(Keys.ENTER)  # folds and unfolds from the keyboard
    assert browser.find_element(By.CSS_SELECTOR, f"{WIDGET} [data-role=more-settings]") \
        .get_attribute("open") is None
