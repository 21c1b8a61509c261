"""Every reader (issue 47): axe-core finds no WCAG 2.1 A/AA violation on any page; the questions
and predictions of book/quiz.py work from the keyboard alone and announce their verdict; the page
declares book/palette.py's colours and its colour keys use them. Needs the built book and
site/node_modules/axe-core (npm ci in site/)."""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from builtbook import ROOT, html_path, require, toc_pages
from illustrated.book import palette

AXE = ROOT / "site" / "node_modules" / "axe-core" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def built(page: str) -> str:
    if not html_path(page).exists():
        require(f"{page} is not in the built book: run make book")
    return page


def open_page(driver, server, page: str) -> None:
    driver.get(f"{server.base_url}/{built(page)}.html")
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && "
        "Array.from(document.querySelectorAll('[data-il-quiz]')).every(q => 'mounted' in q.dataset)"))


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("page", toc_pages())
def test_axe_finds_no_wcag_violation(browser, server, page, width):
    if not AXE.exists():
        require("axe-core is not installed: npm ci in site/")
    browser.set_window_size(width, 1000)
    open_page(browser, server, page)
    browser.execute_script(AXE.read_text(encoding="utf-8"))
    result = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})"
        ".then(r => done(r.violations.map(v => [v.id, v.help,"
        " v.nodes.slice(0, 3).map(n => n.target.join(' '))])))"
        ".catch(e => done([['axe failed', String(e), []]]));", WCAG)
    assert result == [], result


def _tab_to(driver, css: str, limit: int = 400):
    """Press Tab until the focused element matches ``css``; the element."""
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    for _ in range(limit):
        if driver.execute_script(f"return document.activeElement.matches({css!r})"):
            return driver.switch_to.active_element
        driver.switch_to.active_element.send_keys(Keys.TAB)
    raise AssertionError(f"Tab never reached {css}")


def test_a_choice_question_works_from_the_keyboard_and_announces_its_verdict(browser, server):
    open_page(browser, server, "chapters/05_positional_encoding")
    quiz = browser.find_element(By.ID, "quiz-ch05-learned")
    result = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-result")
    assert result.get_attribute("aria-live") == "polite"
    first = _tab_to(browser, "#quiz-ch05-learned input[type=radio]")
    outline = browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", first)
    assert outline not in ("", "none")  # a visible focus
    first.send_keys(Keys.SPACE)  # "trained with the model": wrong
    browser.switch_to.active_element.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.ENTER)  # the Check button
    WebDriverWait(browser, 5).until(lambda _: "Not quite" in result.text)
    first.send_keys(Keys.ARROW_DOWN)  # the next choice: the formula
    browser.switch_to.active_element.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda _: result.text.startswith("Right"))
    assert quiz.get_attribute("data-verdict") == "right"
    summary = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-solution summary")
    summary.send_keys(Keys.ENTER)  # the solution, one key away
    assert quiz.find_element(By.CSS_SELECTOR, ".il-quiz-solution").get_attribute("open") is not None


def test_a_number_question_checks_the_typed_number(browser, server):
    open_page(browser, server, "chapters/04_multi_head_attention")
    quiz = browser.find_element(By.ID, "quiz-ch04-dk")
    field = quiz.find_element(By.CSS_SELECTOR, "input[type=text]")
    result = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-result")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", quiz)
    field.send_keys("512", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda _: "Not quite" in result.text)
    field.clear()
    field.send_keys("64", Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda _: result.text.startswith("Right"))


@pytest.mark.parametrize("page, name", [("chapters/03_self_attention", "ch03-scale"),
                                        ("chapters/09_decoding", "ch09-beam")])
def test_a_prediction_is_read_back_against_the_result(browser, server, page, name):
    open_page(browser, server, page)
    quiz = browser.find_element(By.ID, f"quiz-{name}")
    result = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-result")
    compare = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-compare")
    assert not compare.is_enabled()  # first a prediction
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", quiz)
    quiz.find_elements(By.CSS_SELECTOR, "input[type=radio]")[0].click()
    quiz.find_element(By.CSS_SELECTOR, ".il-quiz-check").click()
    WebDriverWait(browser, 5).until(lambda _: "Your prediction" in result.text)
    compare.click()
    WebDriverWait(browser, 5).until(lambda _: "You predicted" in result.text)
    answer = int(quiz.get_attribute("data-answer"))
    assert quiz.get_attribute("data-verdict") == ("right" if answer == 0 else "wrong")
    assert quiz.find_element(By.CSS_SELECTOR, ".il-quiz-solution").get_attribute("open") is not None


@pytest.mark.parametrize("page, name, runs", [
    ("chapters/06_residuals", "ch06-norm", ["reverse, post-LN", "reverse, pre-LN"]),
    ("chapters/08_training_and_loss", "ch08-smooth-runs",
     ["fr-en, label smoothing 0", "fr-en, label smoothing 0.1"])])
def test_a_trainer_prediction_reads_back_the_runs_when_they_end(browser, server, page, name, runs):
    """The trainer's run-end event (detail: runName, losses, accuracy) as it dispatches it."""
    open_page(browser, server, page)
    quiz = browser.find_element(By.ID, f"quiz-{name}")
    result = quiz.find_element(By.CSS_SELECTOR, ".il-quiz-result")
    answer = int(quiz.get_attribute("data-answer"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", quiz)
    quiz.find_elements(By.CSS_SELECTOR, "input[type=radio]")[answer].click()
    quiz.find_element(By.CSS_SELECTOR, ".il-quiz-check").click()
    for i, run in enumerate(runs):
        assert "Your runs" not in result.text  # not before every run has ended
        browser.execute_script(
            "document.querySelector('[data-il-widget=train]').dispatchEvent(new CustomEvent("
            "'illustrated:run-end', {bubbles: true, detail: {runName: arguments[0],"
            " losses: [2.5, arguments[1]], accuracy: 0.5}}))", run, 0.25 + i)
    WebDriverWait(browser, 5).until(lambda _: "Your runs" in result.text)
    assert "loss 0.250" in result.text and "loss 1.250" in result.text
    assert "the result bears it out" in result.text


def test_the_page_declares_the_palette_and_the_keys_use_it(browser, server):
    open_page(browser, server, "chapters/03_self_attention")
    for name, tensor in palette.TENSORS.items():
        declared = browser.execute_script(
            "return getComputedStyle(document.documentElement).getPropertyValue(arguments[0])",
            f"--il-{name}")
        assert declared.strip() == tensor.color
    swatches = browser.find_elements(By.CSS_SELECTOR, ".il-key-legend .il-swatch-box")
    kinds = {s.get_attribute("data-kind") for s in swatches}
    assert {"input", "query", "key", "value", "weights", "z"} <= kinds
    for swatch in swatches:
        rgb = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor",
                                     swatch)
        color = palette.TENSORS[swatch.get_attribute("data-kind")].color
        assert rgb == "rgb({}, {}, {})".format(*(int(color[i:i + 2], 16) for i in (1, 3, 5)))


@pytest.mark.parametrize("page, absent, present", [
    ("chapters/07_decoder", "recomputes everything", "KV cache"),
    ("chapters/06_residuals", "In the shipped model the vectors", "fr-en"),
    ("chapters/08_training_and_loss", "The sliders", "trained when the book was built, for")])
def test_the_pages_say_what_the_book_does(browser, server, page, absent, present):
    open_page(browser, server, page)
    text = browser.execute_script("return document.querySelector('article').textContent")
    assert absent not in text and present in text
