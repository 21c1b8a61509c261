"""The live widgets of chapters 07, 09 and 10 driven in headless Chromium as a reader drives them,
offline, on the built book: type a sentence (with the suggestions), pick a corpus, a decoder
layer and head, move beam_size, top_beams and α; what the page then shows (translation, scores,
attention weights, next-word probabilities, the beam's hypotheses and tree) equals the package's
numbers (il.pretrained + il.greedy_decode / il.beam_search; scores, weights and probabilities
within 1e-4). And no dead control: every control in these chapters' outputs changes the page
when used, and no widget that needs a kernel is left in them. Needs the built book (`make book`).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

import illustrated as il

TOL = 1e-4
TIMEOUT = 180  # the first translation of a page compiles onnxruntime-web's WebAssembly
CH07, CH09, CH10 = "chapters/07_decoder", "chapters/09_decoding", "chapters/10_playground"

#: What a translate widget shows, read from the DOM (the data- attributes keep full precision).
READ_TRANSLATE = """
const w = arguments[0], all = (sel, root = w) => Array.from(root.querySelectorAll(sel));
const text = (e) => e.textContent.trim();
return {
  tokens: all('[data-role=translation] span').map(text),
  score: Number(w.querySelector('[data-role=score]').dataset.score),
  scoreText: text(w.querySelector('[data-role=score]')),
  source: all('[data-role=attention] th[data-role=source]').map(text),
  outputs: all('[data-role=attention] th[data-role=output]').map(text),
  weights: all('[data-role=attention] tbody tr').map(r => all('td', r).map(c => Number(c.dataset.weight))),
  weightTexts: all('[data-role=attention] tbody tr').map(r => all('td', r).map(text)),
  caption: text(w.querySelector('[data-role=attention] caption')),
  layers: all('select[data-control=layer] option').map(o => o.value),
  heads: all('select[data-control=head] option').map(o => o.value),
  dists: all('[data-role=distributions] .il-dist').map(d => all('.il-bar', d).map(b => (
    {token: b.dataset.token, prob: Number(b.dataset.prob), text: text(b.lastElementChild)}))),
};
"""

READ_BEAM = """
const w = arguments[0], all = (sel, root = w) => Array.from(root.querySelectorAll(sel));
return {
  hypotheses: all('[data-role=hypothesis]').map(r => ({
    tokens: all('[data-role=tokens] span', r).map(s => s.textContent),
    score: Number(r.querySelector('[data-score]').dataset.score),
    scoreText: r.querySelector('[data-score]').textContent})),
  nodes: all('[data-role=tree] [data-role=node]').map(n => ({tokens: n.dataset.tokens,
    status: n.dataset.status, logProb: n.dataset.logProb === undefined ? null : Number(n.dataset.logProb),
    returned: n.hasAttribute('data-returned')})),
};
"""


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def open_page(driver, server, page: str) -> list:
    """Load a chapter, wait for its live widgets to mount; their containers, in page order."""
    driver.get(f"{server.base_url}/{page}.html")
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(
        "return document.querySelectorAll('[data-illustrated-live] .illustrated-live-widget').length"
        " === document.querySelectorAll('[data-illustrated-live]').length"
        " && document.querySelectorAll('[data-illustrated-live]').length > 0"))
    return driver.find_elements(By.CSS_SELECTOR, "[data-illustrated-live]")


def wait_shown(driver, widget, expected: dict) -> None:
    """Until the widget has drawn the result for ``expected`` (its input, as data-shown holds it)."""
    def done(_):
        state = widget.get_attribute("data-state")
        if state == "error":
            raise AssertionError(widget.find_element(By.CSS_SELECTOR, "[data-role=status]").text)
        shown = widget.get_attribute("data-shown")
        return state == "ready" and shown is not None and json.loads(shown) == expected
    WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(done)


def type_sentence(widget, sentence: str, enter: bool = True) -> None:
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    box.send_keys(sentence + (Keys.ENTER if enter else ""))


# ---------------------------------------------------------------------------------------------
# Python's side

def python_translation(corpus: str, sentence: str, top_k: int) -> dict:
    """Greedy decoding, its cross attention per layer and head, and the top-k words per step."""
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    ids = src_vocab.encode(sentence)
    out = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    tgt_in = torch.tensor([[tgt_vocab.bos_id, *out[:-1]]])  # (1, steps)
    with torch.no_grad():
        logits, attention = model(torch.tensor([ids]), tgt_in, return_attention=True)
    log_probs = logits[0].log_softmax(dim=-1)  # (steps, vocab)
    log_probs[:, [tgt_vocab.bos_id, model.cfg.tgt_pad_id]] = float("-inf")
    tops = []
    for row in log_probs.numpy():
        order = np.argsort(-row, kind="stable")[:top_k]
        tops.append([(tgt_vocab.tokens[i], float(np.exp(row[i]))) for i in order])
    return {"tokens": [tgt_vocab.tokens[i] for i in out],
            "score": float(log_probs[range(len(out)), out].sum()),
            "cross": torch.stack(attention.decoder_cross)[:, 0].numpy(),  # (layer, head, step, src)
            "top": tops, "source": il.data.tokenize(sentence)}


def python_beam(corpus, sentence, beam_size, top_beams, alpha, max_len=12):
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    results, steps = il.beam_search(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                                    eos_id=tgt_vocab.eos_id, beam_size=beam_size,
                                    top_beams=top_beams, alpha=alpha, max_len=max_len,
                                    return_steps=True)
    spell = lambda ids: [tgt_vocab.tokens[i] for i in ids]  # noqa: E731
    return [(spell(t), s) for t, s in results], steps, spell


# ---------------------------------------------------------------------------------------------
# Checks

def check_translation(driver, widget, corpus: str, sentence: str, layer: int, head) -> list[str]:
    got = driver.execute_script(READ_TRANSLATE, widget)
    want = python_translation(corpus, sentence, len(got["dists"][0]) if got["dists"] else 5)
    where = f"{corpus} {sentence!r} layer {layer} head {head}"
    if got["tokens"] != want["tokens"]:
        return [f"{where}: shows {got['tokens']}, Python {want['tokens']}"]
    problems = []
    if abs(got["score"] - want["score"]) > TOL or got["scoreText"] != f"log-probability {got['score']:.4f}":
        problems.append(f"{where}: score {got['scoreText']}, Python {want['score']}")
    cross = want["cross"][layer]
    weights = cross.mean(axis=0) if head == "mean" else cross[head]
    shown = np.array(got["weights"])
    if (got["source"] != want["source"] or got["outputs"] != want["tokens"]
            or shown.shape != weights.shape or np.abs(shown - weights).max() > TOL):
        problems.append(f"{where}: attention {shown.round(3)} over {got['source']}, "
                        f"Python {weights.round(3)}")
    elif np.abs(np.array(got["weightTexts"], dtype=float) - weights).max() > 0.005 + TOL:
        problems.append(f"{where}: attention cells read {got['weightTexts']}")
    for step, (bars, top) in enumerate(zip(got["dists"], want["top"], strict=True), 1):
        tokens = [b["token"] for b in bars]
        probs = np.array([b["prob"] for b in bars])
        if tokens != [t for t, _ in top] or np.abs(probs - [p for _, p in top]).max() > TOL:
            problems.append(f"{where}: step {step} top words {list(zip(tokens, probs))}, Python {top}")
        elif any(b["text"] != f"{b['prob']:.3f}" for b in bars):
            problems.append(f"{where}: step {step} bar labels {[b['text'] for b in bars]}")
    return problems


def choose(widget, control: str, value) -> None:
    menu = widget.find_element(By.CSS_SELECTOR, f"select[data-control={control}]")
    Select(menu).select_by_value(str(value))


def sentences_of(corpus: str, n: int) -> list[str]:
    pairs, _, _ = il.data.load_corpus(corpus, "test")
    return [s for s, _ in pairs[:n]]


# ---------------------------------------------------------------------------------------------
# Chapter 07: type a sentence, pick layer and head

def test_chapter_07_translates_what_the_reader_types(browser, server):
    [widget] = open_page(browser, server, CH07)
    browser.execute_script("arguments[0].scrollIntoView()", widget)
    wait_shown(browser, widget, {"corpus": "fr-en", "sentence": "je suis étudiant"})
    problems = []
    # every decoder layer and head (and their mean) for the default sentence
    n_layers, n_heads = il.pretrained("fr-en")[0].cfg.n_layers, il.pretrained("fr-en")[0].cfg.n_heads
    read = browser.execute_script(READ_TRANSLATE, widget)
    assert read["layers"] == [str(i) for i in range(n_layers)], read["layers"]
    assert read["heads"] == ["mean"] + [str(i) for i in range(n_heads)], read["heads"]
    assert read["layers"] and len(read["dists"][0]) == 5
    for layer in range(n_layers):
        choose(widget, "layer", layer)
        for head in ["mean", *range(n_heads)]:
            choose(widget, "head", head)
            caption = browser.execute_script(READ_TRANSLATE, widget)["caption"]
            which = "mean over heads" if head == "mean" else f"head {head + 1}"
            assert caption.endswith(f"decoder layer {layer + 1}, {which}"), caption
            problems += check_translation(browser, widget, "fr-en", "je suis étudiant", layer, head)
    # sentences typed by the reader, with the layer and head last chosen kept
    for sentence in sentences_of("fr-en", 4):
        type_sentence(widget, sentence)
        wait_shown(browser, widget, {"corpus": "fr-en", "sentence": sentence})
        problems += check_translation(browser, widget, "fr-en", sentence, n_layers - 1, n_heads - 1)
    assert not problems, "\n".join(problems[:10])


def test_unknown_words_are_flagged_before_decoding(browser, server):
    [widget] = open_page(browser, server, CH07)
    browser.execute_script("arguments[0].scrollIntoView()", widget)
    wait_shown(browser, widget, {"corpus": "fr-en", "sentence": "je suis étudiant"})
    type_sentence(widget, "je suis professeur", enter=False)
    flag = widget.find_element(By.CSS_SELECTOR, "[data-role=unknown]")
    WebDriverWait(browser, 5).until(lambda _: '"professeur"' in flag.text)
    assert "fr-en" in flag.text
    type_sentence(widget, "je suis professeur")  # Enter: still nothing decoded
    browser.execute_script("return new Promise(r => setTimeout(r, 800))")
    assert json.loads(widget.get_attribute("data-shown"))["sentence"] == "je suis étudiant"
    assert widget.get_attribute("data-state") == "ready"


def test_suggestions_offer_the_vocabulary_and_complete_the_word(browser, server):
    [widget] = open_page(browser, server, CH07)
    browser.execute_script("arguments[0].scrollIntoView()", widget)
    wait_shown(browser, widget, {"corpus": "fr-en", "sentence": "je suis étudiant"})
    type_sentence(widget, "nous avons la voi", enter=False)
    _, src_vocab, _ = il.pretrained("fr-en")
    words = sorted(w for w in src_vocab.tokens if w.startswith("voi") and w != "voi")
    buttons = widget.find_elements(By.CSS_SELECTOR, "button[data-control=suggestion]")
    assert [b.text for b in buttons] == words[:12]
    options = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('datalist option')).map(o => o.value)", widget)
    assert options == [f"nous avons la {w}" for w in words[:12]]
    buttons[0].click()
    sentence = f"nous avons la {words[0]} "
    wait_shown(browser, widget, {"corpus": "fr-en", "sentence": sentence})
    assert not check_translation(browser, widget, "fr-en", sentence.strip(), 1, "mean")


# ---------------------------------------------------------------------------------------------
# Chapter 10: every corpus

@pytest.mark.parametrize("corpus", ["post", "copy", "reverse", "coreference", "fr-en"])
def test_chapter_10_translates_every_corpus(browser, server, corpus):
    [widget] = open_page(browser, server, CH10)
    browser.execute_script("arguments[0].scrollIntoView()", widget)
    wait_shown(browser, widget, {"corpus": "fr-en", "sentence": "nous avons la voiture rouge"})
    first = sentences_of(corpus, 3)
    if corpus == "fr-en":  # already chosen: the reader types its first test sentence
        type_sentence(widget, first[0])
    else:  # choosing a corpus puts its first test sentence in the box
        choose(widget, "corpus", corpus)
    wait_shown(browser, widget, {"corpus": corpus, "sentence": first[0]})
    model = il.pretrained(corpus)[0]
    problems = check_translation(browser, widget, corpus, first[0], model.cfg.n_layers - 1, "mean")
    for i, sentence in enumerate(first[1:]):
        type_sentence(widget, sentence)
        wait_shown(browser, widget, {"corpus": corpus, "sentence": sentence})
        layer, head = i % model.cfg.n_layers, i % model.cfg.n_heads
        choose(widget, "layer", layer)
        choose(widget, "head", head)
        problems += check_translation(browser, widget, corpus, sentence, layer, head)
    assert not problems, "\n".join(problems[:10])


# ---------------------------------------------------------------------------------------------
# Chapter 09: beam search

def move(widget, control: str, steps: int) -> None:
    """The slider moved with the keyboard, as a reader without a mouse moves it."""
    slider = widget.find_element(By.CSS_SELECTOR, f"input[data-control={control}]")
    key = Keys.ARROW_RIGHT if steps > 0 else Keys.ARROW_LEFT
    slider.send_keys(*[key] * abs(steps))


def check_beam(driver, widget, sentence, beam_size, top_beams, alpha) -> list[str]:
    got = driver.execute_script(READ_BEAM, widget)
    want, steps, spell = python_beam("fr-en", sentence, beam_size, min(top_beams, beam_size), alpha)
    where = f"{sentence!r} beam_size={beam_size} top_beams={top_beams} alpha={alpha}"
    problems = []
    if [h["tokens"] for h in got["hypotheses"]] != [t for t, _ in want]:
        return [f"{where}: hypotheses {got['hypotheses']}, Python {want}"]
    scores = np.array([h["score"] for h in got["hypotheses"]])
    if np.abs(scores - [s for _, s in want]).max() > TOL:
        problems.append(f"{where}: scores {scores}, Python {want}")
    if any(h["scoreText"] != f"{h['score']:.4f}" for h in got["hypotheses"]):
        problems.append(f"{where}: score cells {[h['scoreText'] for h in got['hypotheses']]}")
    nodes = got["nodes"][1:]  # after the <bos> root
    expected = []
    for step in steps:
        kept = [spell(t) for t in step.kept]
        finished = [spell(t) for t in step.finished]
        for ids, log_prob in step.candidates:
            tokens = spell(ids)
            status = "finished" if tokens in finished else "kept" if tokens in kept else "dropped"
            expected.append((" ".join(tokens), status, log_prob, tokens in [t for t, _ in want]))
    mine = [(n["tokens"], n["status"], n["logProb"], n["returned"]) for n in nodes]
    if [m[:2] + m[3:] for m in mine] != [e[:2] + e[3:] for e in expected] or (
            np.abs(np.array([m[2] for m in mine]) - [e[2] for e in expected]).max() > TOL):
        problems.append(f"{where}: tree {mine}, Python {expected}")
    return problems


def test_chapter_09_beam_follows_its_controls(browser, server):
    [widget] = open_page(browser, server, CH09)
    browser.execute_script("arguments[0].scrollIntoView()", widget)
    sentence = "je suis étudiant"
    state = {"beamSize": 2, "topBeams": 2, "alpha": 0.0}
    wait_shown(browser, widget, {"sentence": sentence, **state})
    problems = check_beam(browser, widget, sentence, 2, 2, 0.0)
    for control, key, steps, value in [("beam_size", "beamSize", 2, 4), ("top_beams", "topBeams", 1, 3),
                                       ("alpha", "alpha", 6, 0.6), ("beam_size", "beamSize", -3, 1),
                                       ("beam_size", "beamSize", 5, 6)]:
        move(widget, control, steps)
        state[key] = value
        shown = {**state, "topBeams": min(state["topBeams"], state["beamSize"])}
        wait_shown(browser, widget, {"sentence": sentence, **shown})
        problems += check_beam(browser, widget, sentence, state["beamSize"], state["topBeams"], value
                               if key == "alpha" else state["alpha"])
    for other in sentences_of("fr-en", 3):
        type_sentence(widget, other)
        wait_shown(browser, widget, {"sentence": other, **state,
                                     "topBeams": min(state["topBeams"], state["beamSize"])})
        problems += check_beam(browser, widget, other, state["beamSize"], state["topBeams"], state["alpha"])
    assert not problems, "\n".join(problems[:10])


# ---------------------------------------------------------------------------------------------
# No dead control

#: Every control in a chapter's outputs, with where it lives: a live widget, a player, or neither.
CONTROLS = """
return Array.from(document.querySelectorAll('.cell_output input, .cell_output select, '
    + '.cell_output button, .cell_output textarea, .cell_output [contenteditable]')).map(c => ({
  tag: c.tagName.toLowerCase(), type: c.type || '', name: c.dataset.control || c.title || c.value,
  live: Boolean(c.closest('.illustrated-live-widget')), player: Boolean(c.closest('.animation')),
  copy: c.classList.contains('copybtn'),
}));
"""

#: What a live widget shows besides its controls: its result, the unknown-word flag, the
#: suggestions (a control's own new value or readout does not count as a change).
SNAPSHOT = """
const w = arguments[0];
return Array.from(w.querySelectorAll('[data-role=result], [data-role=unknown], .il-suggestions'))
  .map(e => e.innerHTML).join('|');
"""


def use_live_control(driver, widget, control) -> None:
    tag, kind = control.tag_name, control.get_attribute("type")
    name = control.get_attribute("data-control")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", control)
    if tag == "select":
        menu = Select(control)
        values = [o.get_attribute("value") for o in menu.options]
        current = menu.first_selected_option.get_attribute("value")
        menu.select_by_value(values[(values.index(current) + 1) % len(values)])
    elif kind == "range":
        at_max = control.get_attribute("value") == control.get_attribute("max")
        control.send_keys(Keys.ARROW_LEFT if at_max else Keys.ARROW_RIGHT)
    elif name == "sentence":
        corpus = driver.execute_script(
            "const w = arguments[0]; const s = w.querySelector('select[data-control=corpus]');"
            "return s ? s.value : w.closest('[data-illustrated-live]').dataset.corpus;", widget)
        current = control.get_attribute("value").strip()
        type_sentence(widget, next(s for s in sentences_of(corpus, 3) if s != current))
    else:
        control.click()


def wait_changed(driver, widget, before: str) -> bool:
    try:
        WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(
            lambda d: d.execute_script(SNAPSHOT, widget) != before
            and widget.get_attribute("data-state") != "busy")
        return True
    except TimeoutException:  # the control changed nothing
        return False


def check_live_controls(driver, widgets) -> list[str]:
    dead = []
    for widget in widgets:
        driver.execute_script("arguments[0].scrollIntoView()", widget)
        WebDriverWait(driver, TIMEOUT).until(
            lambda _, w=widget: w.get_attribute("data-state") == "ready")
        count = len(widget.find_elements(By.CSS_SELECTOR, "[data-control]"))
        for i in range(count):
            controls = widget.find_elements(By.CSS_SELECTOR, "[data-control]")
            if i >= len(controls):  # suggestions change with the sentence
                break
            control = controls[i]
            label = f"{control.tag_name}[data-control={control.get_attribute('data-control')}]"
            before = driver.execute_script(SNAPSHOT, widget)
            use_live_control(driver, widget, control)
            if not wait_changed(driver, widget, before):
                dead.append(label)
            if widget.get_attribute("data-state") == "error":
                dead.append(f"{label}: error {widget.text[:200]}")
    return dead


PLAYER_FRAME = """
const p = arguments[0], slider = p.querySelector('input[type=range]');
return [Number(slider.value), p.querySelector('img').src.length, p.querySelector('img').src.slice(-40)];
"""


def _sleep(driver, anim: str, intervals: float) -> None:
    driver.execute_script(f"return new Promise(r => setTimeout(r, {anim}.interval * {intervals}))")


def _check_player(driver, player) -> list[str]:
    dead = []
    anim = player.find_element(By.CSS_SELECTOR, "button").get_attribute("onclick").split(".")[0]
    n = int(player.find_element(By.CSS_SELECTOR, "input[type=range]").get_attribute("max")) + 1
    if n < 2:
        return dead
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", player)

    def frame():
        return driver.execute_script(PLAYER_FRAME, player)

    reset = f"{anim}.pause_animation(); {anim}.set_frame({n // 2});"
    for button in player.find_elements(By.CSS_SELECTOR, "button"):
        title = button.get_attribute("title")
        driver.execute_script(reset)
        before, interval = frame(), driver.execute_script(f"return {anim}.interval")
        button.click()
        if title in ("Play", "Play backwards"):
            _sleep(driver, anim, 1.5)
        if title == "Pause":
            driver.execute_script(f"{anim}.play_animation()")
            _sleep(driver, anim, 1.5)
            button.click()
            paused = frame()
            _sleep(driver, anim, 2.5)
            changed = frame() == paused and paused != before
        elif "speed" in title:
            changed = driver.execute_script(f"return {anim}.interval") != interval
        else:
            changed = frame() != before
        if not changed:
            dead.append(f"player {anim}: {title}")
    for radio in player.find_elements(By.CSS_SELECTOR, "input[type=radio]"):
        if not radio.is_selected():
            driver.execute_script("arguments[0].click()", radio)
            if not radio.is_selected():
                dead.append(f"player {anim}: loop mode {radio.get_attribute('value')}")
    driver.execute_script(reset)
    return dead


def check_copy_buttons(driver) -> list[str]:
    """sphinx-copybutton's buttons on printed outputs: a click copies and says so in its tooltip
    ("Copied!", or "Failed to copy" where the headless browser has no clipboard)."""
    dead = []
    for i, button in enumerate(driver.find_elements(By.CSS_SELECTOR, ".cell_output .copybtn")):
        before = button.get_attribute("data-tooltip")
        driver.execute_script("arguments[0].click()", button)
        try:
            WebDriverWait(driver, 5).until(
                lambda _, b=button, t=before: b.get_attribute("data-tooltip") != t)
        except TimeoutException:
            dead.append(f"copy button {i + 1}")
    return dead


def check_player_controls(driver) -> list[str]:
    """matplotlib's to_jshtml players: each button moves the frame, plays, pauses, or changes the
    playback speed (its `interval`); each loop mode radio button becomes the checked one."""
    return [d for p in driver.find_elements(By.CSS_SELECTOR, ".animation")
            for d in _check_player(driver, p)]


@pytest.mark.parametrize("page", [CH07, CH09, CH10])
def test_no_dead_control(browser, server, page):
    widgets = open_page(browser, server, page)
    assert not browser.find_elements(By.CSS_SELECTOR, ".jupyter-widgets, .widget-subarea"), (
        f"{page}: an ipywidget (it needs a kernel) is shown in the static page")
    controls = browser.execute_script(CONTROLS)
    stray = [c for c in controls if not (c["live"] or c["player"] or c["copy"])]
    assert not stray, f"{page}: controls that are neither a live widget, a player nor a copy button: {stray}"
    dead = check_live_controls(browser, widgets) + check_player_controls(browser)
    dead += check_copy_buttons(browser)
    assert not dead, f"{page}: controls that changed nothing: {dead}"


# ---------------------------------------------------------------------------------------------
# Weight

@pytest.mark.parametrize("page", [CH07, CH09, CH10])
def test_page_with_its_images_and_models_under_5_mb(site, page):
    """The page's HTML (its players' frames inline), the images it links from _images/, and the
    models of every corpus its live widgets can load (onnxruntime-web, shared by all pages and
    then cached, is counted in test_translate_api.py)."""
    html = (site / f"{page}.html").read_text(encoding="utf-8")
    images = set(re.findall(r'src="\.\./(_images/[^"]+)"', html))
    corpora = set()
    for attrs in re.findall(r'<div class="illustrated-live"([^>]*)>', html):
        found = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', attrs))
        corpora |= set(found.get("corpora", found["corpus"]).split(","))
    assert corpora, f"{page}: no live widget"
    index = json.loads((site / "_illustrated" / "models" / "index.json").read_text("utf-8"))
    total = (len(html.encode("utf-8")) + sum((site / i).stat().st_size for i in images)
             + sum(sum(index["models"][c]["bytes"].values()) for c in corpora))
    assert total < 5e6, f"{page}: {total / 1e6:.2f} MB"
