"""Chapter 10's training widget with the reader's own pairs and the page's link, in the built
book: 30 pairs pasted are trained to 100 % on their training split, translated in the page as the
downloaded model translates them in Python and on the command line; bad input is answered per
line with nothing lost; a link copied after a run, opened afresh, restores every field and
reproduces the losses."""
from __future__ import annotations

import base64
import subprocess
import sys

import pytest

import illustrated as il
from illustrated.data.pairs_file import split_pairs

from trainer_page import DOWNLOAD, PAGE, WIDGET, _open, _set, _wait

#: 30 pairs of a language the tiny model learns in a few hundred steps (the copy corpus).
PAIRS = il.data.load_corpus("copy", "train")[0][:30]
COPY = {"steps": "400", "lr": "0.01", "warmup": "40", "schedule": "cosine", "nHeads": "2",
        "nLayers": "1"}


def _paste(browser, text):
    browser.execute_script("""
      const box = document.querySelector(arguments[0] + ' [data-control=pairs]');
      box.value = arguments[1]; box.dispatchEvent(new Event('change'));""", WIDGET, text)


def _text(browser, role):
    return browser.find_element("css selector", f"{WIDGET} [data-role={role}]").text


def _train(browser):
    browser.execute_script("document.querySelector(arguments[0] + ' button').click()", WIDGET)


@pytest.mark.parametrize("width", [1280, 390])
def test_pasted_pairs_train_translate_and_load_in_python(browser, server, tmp_path, width):
    browser.set_script_timeout(240)
    _open(browser, server, width)
    _set(browser, "corpus", "pairs")
    for key, value in COPY.items():
        _set(browser, key, value)
    _paste(browser, "\n".join(f"{s}\t{t}" for s, t in PAIRS))
    assert _text(browser, "pairs-summary").startswith("30 pairs")
    _train(browser)
    _wait(browser, "done", 240)
    train, test = split_pairs(PAIRS, seed=0)
    page = browser.execute_async_script("""
      const done = arguments[arguments.length - 1];
      Promise.all(arguments[0].map((s) => window.illustrated.translate("trained", s)))
        .then((rs) => done(rs.map((r) => r.hypotheses[0].tokens.filter((t) => t !== "<eos>").join(" "))),
              (e) => done("error: " + e.message));""", [s for s, _ in train])
    assert page == [t for _, t in train]  # 100 % on the training split
    data = browser.execute_async_script(DOWNLOAD, WIDGET)
    path = tmp_path / "pairs.safetensors"
    path.write_bytes(base64.b64decode(data))
    model, (src_vocab, tgt_vocab), _ = il.load_checkpoint(path)
    assert il.translate(model, [s for s, _ in train], src_vocab, tgt_vocab) == page
    # and the command line reads the same file and translates as the page did
    command = subprocess.run([sys.executable, "-m", "illustrated", "translate", "--model",
                              str(path), *[s for s, _ in train[:3]]],
                             capture_output=True, text=True, check=True)
    said = [line.split("  ->  ")[1].split("  (score")[0] for line in command.stdout.splitlines()
            if "  ->  " in line]
    assert said == page[:3]
    names = browser.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' [data-role=run-row]')]"
        ".map((r) => r.dataset.name)", WIDGET)
    assert names and names[-1].startswith("pairs")


def test_bad_pairs_are_answered_per_line_and_nothing_is_lost(browser, server):
    _open(browser, server)
    _set(browser, "corpus", "pairs")
    bad = "un chat\tthe cat\nno tab here\nle\tchien\tthe dog\nun chien\t \nle <eos>\tx"
    _paste(browser, bad)
    _train(browser)
    _wait(browser, "error", 30)
    problems = [li.text for li in browser.find_elements(
        "css selector", f"{WIDGET} [data-role=pairs-problems] li")]
    assert problems == ["line 2: expected 'source<TAB>target', got no tab in 'no tab here'",
                        "line 3: expected one tab between source and target, got 2 tabs",
                        "line 4: expected a non-empty target, got an empty one",
                        "line 5: expected no special token, got '<eos>'"]
    assert _text(browser, "status").startswith("Not trained: fix your pairs")
    assert browser.execute_script("return document.querySelector(arguments[0] + "
                                  "' [data-control=pairs]').value", WIDGET) == bad
    _paste(browser, "")
    _train(browser)
    assert [li.text for li in browser.find_elements(
        "css selector", f"{WIDGET} [data-role=pairs-problems] li")][0].startswith("The box is empty")
    _paste(browser, "un chat\tthe cat")
    _train(browser)
    assert [li.text for li in browser.find_elements(
        "css selector", f"{WIDGET} [data-role=pairs-problems] li")] == [
        "your pairs: expected at least 2 pairs (some to train on, some to test on), got 1"]


def test_a_link_copied_after_a_run_reproduces_it_afresh(browser, server):
    browser.set_script_timeout(180)
    _open(browser, server)
    _set(browser, "corpus", "post")
    _set(browser, "steps", "30")
    _set(browser, "labelSmoothing", "0.1")
    _set(browser, "normFirst", "pre")
    _train(browser)
    _wait(browser, "done", 180)
    link = browser.find_element("css selector", f"{WIDGET} [data-role=link]").get_attribute("value")
    assert "#corpus=post&steps=30&" in link and "labelSmoothing=0.1" in link and "normFirst=pre" in link
    losses = browser.execute_script("return [...document.querySelectorAll(arguments[0] + "
                                    "' [data-role=final-loss]')].map((e) => e.textContent)", WIDGET)
    browser.get("about:blank")
    browser.delete_all_cookies()
    browser.get(link)
    browser.refresh()  # the same address: a fresh document, nothing of the run kept
    _wait(browser, "ready", 30)
    fields = browser.execute_script("""
      const q = (k) => document.querySelector(arguments[0] + ' [data-control=' + k + ']').value;
      return [q('corpus'), q('steps'), q('labelSmoothing'), q('normFirst')];""", WIDGET)
    assert fields == ["post", "30", "0.1", "pre"]
    assert not browser.find_elements("css selector", f"{WIDGET} [data-role=run-row]")
    _train(browser)
    _wait(browser, "done", 180)
    again = browser.execute_script("return [...document.querySelectorAll(arguments[0] + "
                                   "' [data-role=final-loss]')].map((e) => e.textContent)", WIDGET)
    assert again == losses


def test_a_link_with_an_unknown_field_or_a_refused_value_opens_with_the_defaults(browser, server):
    browser.get(f"{server.base_url}/{PAGE}#steps=99999&colour=red&lr=0.004")
    browser.refresh()
    _wait(browser, "ready", 30)
    assert _text(browser, "link-note") == (
        "From the link, ignored (left at the recipe's value): steps=99999 (expected an integer "
        "in [1, 3000]); unknown field \"colour\".")
    assert browser.execute_script("return document.querySelector(arguments[0] + "
                                  "' [data-control=lr]').value", WIDGET) == "0.004"


def test_tab_types_the_separator_in_the_box_and_esc_then_tab_leaves_it(browser, server):
    """A learner's review: typing a pair, Tab moved the focus on and the line had no tab."""
    from selenium.webdriver.common.keys import Keys
    _open(browser, server)
    _set(browser, "corpus", "pairs")
    box = browser.find_element("css selector", f"{WIDGET} [data-control=pairs]")
    box.click()
    box.send_keys("un chat", Keys.TAB, "the cat")
    assert box.get_attribute("value") == "un chat\tthe cat"
    assert browser.switch_to.active_element == box
    box.send_keys(Keys.ESCAPE, Keys.TAB)
    assert browser.switch_to.active_element != box
    assert box.get_attribute("value") == "un chat\tthe cat"
