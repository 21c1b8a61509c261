"""The live widgets (site/js/widgets/translate.js, beam.js, selfattention.js) driven in headless Chromium
as a reader drives them, offline, on the built book. Every page that carries one is used: each
kind mounts, computes and shows the package's numbers for every corpus it offers (translate: the
tokens of il.greedy_decode, their log-probability, the encoder-decoder attention of every layer
and head and the most probable next words; beam: il.beam_search's hypotheses, scores and tree;
selfattention: il.trace's encoder self-attention; numbers within 1e-4). And what makes a widget
trustworthy (issue 20): a new input clears the old result and an error takes its place, in its
room (nothing below jumps), the punctuation a model never saw is left out by name, each model
states the sentence lengths it was trained on and warns outside them, selects keep the keyboard
focus, the Tab order holds only the controls, the attention readout works from the keyboard, and
no control is dead.
Needs the built book (`make book`).
"""
from __future__ import annotations

import json
import re
from html import unescape

import numpy as np
import pytest
import torch
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

import illustrated as il
from illustrated.modules import Attention, recording_attention
from builtbook import html_path
from pages import (TIMEOUT, choose, corpora_of, open_page, pages_with, params, sentences_of, settle, start,
                   text_of, type_sentence, wait_shown)

TOL = 1e-4


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def corpus_views(driver, server, kind: str):
    """Every ``kind`` widget of every page, shown with each of its corpora in turn:
    (widget, corpus, the sentence shown)."""
    for page in pages_with(kind):
        for widget in open_page(driver, server, page, kind):
            for corpus in corpora_of(widget):
                yield widget, corpus, start(driver, widget, corpus)


def type_another(driver, widget, corpus: str, sentence: str) -> str:
    """Type another test sentence of ``corpus`` than ``sentence``, wait until it is shown; it."""
    other = next(s for s in sentences_of(corpus, 3) if s != sentence)
    type_sentence(widget, other)
    wait_shown(driver, widget, {"corpus": corpus, "sentence": other})
    return other


# ---------------------------------------------------------------------------------------------
# translate

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
  layers: all('select[data-control=layer] option').map(o => [o.value, o.textContent]),
  heads: all('select[data-control=head] option').map(o => [o.value, o.textContent]),
  dists: all('[data-role=distributions] .il-dist').map(d => all('.il-bar', d).map(b => (
    {token: b.dataset.token, prob: Number(b.dataset.prob), text: text(b.lastElementChild)}))),
};
"""


def python_translation(corpus: str, sentence: str, top_k: int) -> dict:
    """Greedy decoding, its cross attention per layer and head, and the top-k words per step."""
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    ids = src_vocab.encode(sentence)
    out = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    tgt_in = torch.tensor([[tgt_vocab.bos_id, *out[:-1]]])  # (1, steps)
    with torch.no_grad(), recording_attention(model) as record:
        logits = model(torch.tensor([ids]), tgt_in)
    attention = Attention.of(record)
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


def check_translation(driver, widget, corpus: str, sentence: str, layer: int, head) -> list[str]:
    got = driver.execute_script(READ_TRANSLATE, widget)
    want = python_translation(corpus, sentence, params(widget)["topK"])
    where = f"{corpus} {sentence!r} layer {layer} head {head}"
    if got["tokens"] != want["tokens"]:
        return [f"{where}: shows {got['tokens']}, Python {want['tokens']}"]
    problems = []
    if abs(got["score"] - want["score"]) > TOL or not got["scoreText"].endswith(f"{got['score']:.4f}"):
        problems.append(f"{where}: score {got['scoreText']}, Python {want['score']}")
    cross = want["cross"][layer]
    weights = cross.mean(axis=0) if head == "mean" else cross[head]
    shown = np.array(got["weights"])
    which = "mean of heads" if head == "mean" else f"head {head}"
    if got["caption"] != f"encoder-decoder attention, decoder layer {layer}, {which}":
        problems.append(f"{where}: caption {got['caption']!r}")
    if f"the {corpus} model's translation of '{sentence}'" not in widget.get_attribute("aria-label"):
        problems.append(f"{where}: the widget's label says {widget.get_attribute('aria-label')!r}")
    if (got["source"] != want["source"] or got["outputs"] != want["tokens"]
            or shown.shape != weights.shape or np.abs(shown - weights).max() > TOL):
        problems.append(f"{where}: attention {shown.round(3)} over {got['source']}, "
                        f"Python {weights.round(3)}")
    elif np.abs(np.array(got["weightTexts"], dtype=float) - weights).max() > 0.005 + TOL:
        problems.append(f"{where}: attention cells read {got['weightTexts']}")
    for step, (bars, top) in enumerate(zip(got["dists"], want["top"], strict=True)):
        probs = np.array([b["prob"] for b in bars])
        tokens = [b["token"] for b in bars]
        if tokens != [t for t, _ in top] or np.abs(probs - [p for _, p in top]).max() > TOL:
            problems.append(f"{where}: position {step} top words {bars}, Python {top}")
        elif any(b["text"] != f"{b['prob']:.3f}" for b in bars):
            problems.append(f"{where}: position {step} bar labels {[b['text'] for b in bars]}")
    return problems


def test_translate_widgets_match_the_package(browser, server):
    problems = []
    for widget, corpus, sentence in corpus_views(browser, server, "translate"):
        model = il.pretrained(corpus)[0]
        n_layers, n_heads = model.cfg.n_layers, model.cfg.n_heads
        read = browser.execute_script(READ_TRANSLATE, widget)
        assert read["layers"] == [[str(i), f"layer {i}"] for i in range(n_layers)], read["layers"]
        assert read["heads"] == [["mean", "mean of heads"]] + [
            [str(i), f"head {i}"] for i in range(n_heads)], read["heads"]
        views = [(n_layers - 1, "mean")] + [(lay, hd) for lay in range(n_layers)
                                            for hd in range(n_heads)]
        for layer, head in views if corpus == corpora_of(widget)[0] else views[:2]:
            choose(widget, "layer", layer)
            choose(widget, "head", head)
            problems += check_translation(browser, widget, corpus, sentence, layer, head)
        other = type_another(browser, widget, corpus, sentence)  # the layer and head are kept
        problems += check_translation(browser, widget, corpus, other, layer, head)
    assert not problems, "\n".join(problems[:10])


# ---------------------------------------------------------------------------------------------
# beam

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


def check_beam(driver, widget, sentence, beam_size, top_beams, alpha) -> list[str]:
    p = params(widget)
    model, src_vocab, tgt_vocab = il.pretrained(p["corpus"])
    results, steps = il.beam_search(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                                    eos_id=tgt_vocab.eos_id, beam_size=beam_size,
                                    top_beams=min(top_beams, beam_size), alpha=alpha,
                                    max_len=p["maxLen"], return_steps=True)
    spell = lambda ids: [tgt_vocab.tokens[i] for i in ids]  # noqa: E731
    want = [(spell(t), s) for t, s in results]
    got = driver.execute_script(READ_BEAM, widget)
    where = f"{sentence!r} beam_size={beam_size} top_beams={top_beams} alpha={alpha}"
    if [h["tokens"] for h in got["hypotheses"]] != [t for t, _ in want]:
        return [f"{where}: hypotheses {got['hypotheses']}, Python {want}"]
    problems = []
    scores = np.array([h["score"] for h in got["hypotheses"]])
    if np.abs(scores - [s for _, s in want]).max() > TOL:
        problems.append(f"{where}: scores {scores}, Python {want}")
    if any(h["scoreText"] != f"{h['score']:.4f}" for h in got["hypotheses"]):
        problems.append(f"{where}: score cells {[h['scoreText'] for h in got['hypotheses']]}")
    expected = []
    for step in steps:
        kept, finished = [spell(t) for t in step.kept], [spell(t) for t in step.finished]
        for ids, log_prob in step.candidates:
            tokens = spell(ids)
            status = "finished" if tokens in finished else "kept" if tokens in kept else "dropped"
            expected.append((" ".join(tokens), status, log_prob, tokens in [t for t, _ in want]))
    mine = [(n["tokens"], n["status"], n["logProb"], n["returned"]) for n in got["nodes"][1:]]
    if [m[:2] + m[3:] for m in mine] != [e[:2] + e[3:] for e in expected] or (
            np.abs(np.array([m[2] for m in mine]) - [e[2] for e in expected]).max() > TOL):
        problems.append(f"{where}: tree {mine}, Python {expected}")
    caption = text_of(widget, "tree-caption")  # follows the slider, not the page's first value
    if f"beam_size = {2 * beam_size} extensions" not in caption or \
            f"the best {beam_size} of the others" not in caption:
        problems.append(f"{where}: the tree's caption says {caption!r}")
    fates = [e[1] for e in expected]  # a screen reader hears what the tree shows now
    label = widget.find_element(By.CSS_SELECTOR, "[data-role=tree]").get_attribute("aria-label")
    said = (f"{len(steps)} steps, {len(expected)} candidates scored, {fates.count('kept')} kept in "
            f"the beam, {fates.count('finished')} finished, {fates.count('dropped')} dropped; "
            f"returned: {'; '.join(' '.join(t) for t, _ in want)}")
    if not label.endswith(said):
        problems.append(f"{where}: the tree's label says {label!r}, not {said!r}")
    group = widget.get_attribute("aria-label")  # the widget's own name follows its state too
    if f"'{sentence}'" not in group or f"beam_size={beam_size}, top_beams={min(top_beams, beam_size)}, " \
            f"alpha={alpha:g}" not in group:
        problems.append(f"{where}: the widget's label says {group!r}")
    return problems


def move(widget, control: str, steps: int) -> None:
    """The slider moved with the keyboard, as a reader without a mouse moves it."""
    slider = widget.find_element(By.CSS_SELECTOR, f"input[data-control={control}]")
    slider.send_keys(*[Keys.ARROW_RIGHT if steps > 0 else Keys.ARROW_LEFT] * abs(steps))


def test_beam_widgets_match_the_package(browser, server):
    problems = []
    for page in pages_with("beam"):
        for widget in open_page(browser, server, page, "beam"):
            p = params(widget)
            state = {"corpus": p["corpus"], "sentence": p["sentence"], "beamSize": p["beamSize"],
                     "topBeams": p["topBeams"], "alpha": p["alpha"]}
            wait_shown(browser, widget, _shown(state))
            problems += check_beam(browser, widget, **_args(state))
            for control, key, steps, change in [("beam_size", "beamSize", 2, 2),
                                                ("top_beams", "topBeams", 1, 1),
                                                ("alpha", "alpha", 6, 0.6),
                                                ("beam_size", "beamSize", -3, -3)]:
                move(widget, control, steps)
                state[key] = round(state[key] + change, 1) if key == "alpha" else max(1, state[key] + change)
                wait_shown(browser, widget, _shown(state))
                problems += check_beam(browser, widget, **_args(state))
                if state["topBeams"] > state["beamSize"]:
                    assert f"top_beams={state['topBeams']} is capped at" in text_of(widget, "result")
            for sentence in sentences_of(p["corpus"], 2):
                type_sentence(widget, sentence)
                state["sentence"] = sentence
                wait_shown(browser, widget, _shown(state))
                problems += check_beam(browser, widget, **_args(state))
    assert not problems, "\n".join(problems[:10])


def _shown(state: dict) -> dict:
    """data-shown for a beam state: top_beams above beam_size is capped at beam_size."""
    return {**state, "topBeams": min(state["topBeams"], state["beamSize"])}


def _args(state: dict) -> dict:
    return {"sentence": state["sentence"], "beam_size": state["beamSize"],
            "top_beams": state["topBeams"], "alpha": state["alpha"]}


# ---------------------------------------------------------------------------------------------
# selfattention

READ_ATTENTION = """
const w = arguments[0], all = (sel) => Array.from(w.querySelectorAll(sel));
return {
  queries: all('[data-role=attention] text.il-query').map(t => t.textContent),
  lines: all('[data-role=attention] line').map(l => [Number(l.dataset.head), Number(l.dataset.q),
    Number(l.dataset.k), Number(l.dataset.weight), Number(l.getAttribute('stroke-opacity'))]),
  caption: w.querySelector('.il-caption').textContent,
  layers: all('select[data-control=layer] option').map(o => [o.value, o.textContent]),
  heads: all('select[data-control=head] option').map(o => [o.value, o.textContent]),
};
"""


def check_attention(driver, widget, corpus: str, sentence: str, layer: int, head) -> list[str]:
    model, src_vocab, _ = il.pretrained(corpus)
    trace = il.trace(model, sentence, src_vocab=src_vocab)
    weights = trace.encoder_layers[layer].self_attn.weights  # (n_heads, src, src)
    got = driver.execute_script(READ_ATTENTION, widget)
    where = f"{corpus} {sentence!r} layer {layer} head {head}"
    heads = range(len(weights)) if head == "all" else [head]
    which = "every head in its own colour" if head == "all" else f"head {head}"
    problems = []
    if got["queries"] != list(trace.source_tokens):
        problems.append(f"{where}: words {got['queries']}, Python {trace.source_tokens}")
    if got["caption"] != f"Encoder self-attention, layer {layer}, {which}:":
        problems.append(f"{where}: caption {got['caption']!r}")
    if f"the {corpus} model for '{sentence}'" not in widget.get_attribute("aria-label"):
        problems.append(f"{where}: the widget's label says {widget.get_attribute('aria-label')!r}")
    lines = np.array(got["lines"]).reshape(-1, 5)
    lines = lines[np.lexsort(lines[:, 2::-1].T)]  # drawn weakest first: compared in (head, q, k) order
    want = np.array([[h, q, k, weights[h, q, k]] for h in heads
                     for q in range(weights.shape[1]) for k in range(weights.shape[2])])
    if lines.shape[0] != want.shape[0] or (lines[:, :3] != want[:, :3]).any():
        problems.append(f"{where}: {lines.shape[0]} lines, Python {want.shape[0]} (head, query, key)")
    elif (np.abs(lines[:, 3] - want[:, 3]).max() > TOL  # data-weight, and the line's opacity
          or np.abs(lines[:, 4] - want[:, 3]).max() > 0.0005 + TOL):
        problems.append(f"{where}: weights {lines[:, 3].round(3)}, Python {want[:, 3].round(3)}")
    return problems


def test_selfattention_widgets_match_trace(browser, server):
    """Every corpus, every encoder layer and head (and all heads), within 1e-4 of il.trace."""
    problems = []
    for widget, corpus, sentence in corpus_views(browser, server, "selfattention"):
        cfg = il.pretrained(corpus)[0].cfg
        read = browser.execute_script(READ_ATTENTION, widget)
        assert read["layers"] == [[str(i), f"layer {i}"] for i in range(cfg.n_layers)]
        assert read["heads"] == [["all", "all heads"]] + [[str(i), f"head {i}"]
                                                          for i in range(cfg.n_heads)]
        problems += check_attention(browser, widget, corpus, sentence, cfg.n_layers - 1, "all")
        for layer in range(cfg.n_layers):
            for head in ["all", *range(cfg.n_heads)]:
                choose(widget, "layer", layer)
                choose(widget, "head", head)
                problems += check_attention(browser, widget, corpus, sentence, layer, head)
        other = type_another(browser, widget, corpus, sentence)
        problems += check_attention(browser, widget, corpus, other, layer, head)
    assert not problems, "\n".join(problems[:10])


def test_attention_readout_works_from_the_keyboard(browser, server):
    """Tab from the head select reaches the word shown ("it"), Home the first word; the arrow keys
    move along the words; the focused word's weights are read out as text and its lines alone stay
    visible."""
    page = pages_with("selfattention")[0]
    [widget, *_] = open_page(browser, server, page, "selfattention")
    p = params(widget)
    wait_shown(browser, widget, {"corpus": p["corpus"], "sentence": p["sentence"]})
    choose(widget, "head", 0)
    widget.find_element(By.CSS_SELECTOR, "select[data-control=head]").send_keys(Keys.TAB)
    focused = lambda: browser.execute_script(  # noqa: E731
        "const a = document.activeElement; return a.dataset.q === undefined ? null : Number(a.dataset.q);")
    tokens = il.data.tokenize(p["sentence"])
    assert focused() == tokens.index("it"), "Tab from the head select does not reach the word shown"
    ActionChains(browser).send_keys(Keys.HOME).perform()
    assert focused() == 0
    model, src_vocab, _ = il.pretrained(p["corpus"])
    weights = il.trace(model, p["sentence"], src_vocab=src_vocab).encoder_layers[-1].self_attn.weights
    for q in (0, 1):
        readout = text_of(widget, "readout")
        prefix = f'head 0: "{tokens[q]}" attends to '
        assert readout.startswith(prefix), readout
        pairs = [item.rsplit(" ", 1) for item in readout[len(prefix):].split(", ")]
        assert [t for t, _ in pairs] == tokens, readout
        np.testing.assert_allclose([float(w) for _, w in pairs], weights[0, q], rtol=0, atol=0.005 + TOL)
        faded = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('line')).map(l => "
            "[Number(l.dataset.q), l.classList.contains('il-faded')]);", widget)
        assert all(f == (lq != q) for lq, f in faded), f"word {q}: other lines not faded"
        ActionChains(browser).send_keys(Keys.ARROW_DOWN).perform()
        assert focused() == q + 1
    tabbable = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('text.il-query'))"
        ".filter(t => t.tabIndex >= 0).length;",
        widget)
    assert tabbable == 1, f"{tabbable} words in the Tab order (one, the arrow keys move along them)"


def test_selfattention_opens_on_it_and_names_every_heads_colour(browser, server):
    """Chapter 04's live view, for sentences the reader types: it opens on "it", whose readout
    names, for the coreference model's head of chapter 03 (the top layer's head 1), "animal" first
    when the sentence ends "too tired" and "street" first when it ends "too wide"; a legend names
    every head's colour before any hover; and the lines are drawn weakest first, so that no
    head's strong line lies under another head's weak one."""
    page = pages_with("selfattention")[0]
    [widget, *_] = open_page(browser, server, page, "selfattention")
    start(browser, widget, "coreference")
    for adjective, noun in (("sleepy", "animal"), ("narrow", "street")):
        sentence = f"the animal didn't cross the street because it was too {adjective}"
        type_sentence(widget, sentence)
        wait_shown(browser, widget, {"corpus": "coreference", "sentence": sentence})
        legend = widget.find_elements(By.CSS_SELECTOR, "[data-role=legend] [data-head]")
        assert [e.text.split()[-2:] for e in legend] == [["head", str(h)] for h in range(4)]
        readout = text_of(widget, "readout").splitlines()
        assert all(line.startswith(f'head {h}: "it" attends to ') for h, line in enumerate(readout))
        assert readout[1].split(" attends to ")[1].startswith(f"{noun} "), readout
        weights = browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('line')).map(l => Number(l.dataset.weight));",
            widget)
        assert weights == sorted(weights)


# ---------------------------------------------------------------------------------------------
# A widget a reader can trust

def first_widget(driver, server, kind: str):
    page = pages_with(kind)[0]
    [widget, *_] = open_page(driver, server, page, kind)
    settle(driver, widget)
    return widget


@pytest.mark.parametrize("kind", ["translate", "beam", "selfattention"])
def test_a_new_input_clears_the_result_and_errors_take_its_place(browser, server, kind):
    widget = first_widget(browser, server, kind)
    p = params(widget)
    assert settle(browser, widget) == "ready"
    assert not widget.find_elements(By.CSS_SELECTOR, "img.il-live-default"), "the default picture stays"
    drawn = "[data-role=translation], [data-role=hypotheses], [data-role=attention], [data-role=tree]"
    assert widget.find_elements(By.CSS_SELECTOR, drawn)
    height = widget.find_element(By.CSS_SELECTOR, "[data-role=result]").size["height"]
    type_sentence(widget, "zzz", enter=False)  # at once, before anything is computed
    assert not widget.find_elements(By.CSS_SELECTOR, drawn), "the old result stays under a new input"
    assert widget.get_attribute("data-shown") is None
    for typed, message in [("zzz qqq", f'The {p["corpus"]} model does not know "zzz", "qqq"'),
                           ("", "Type a sentence: the box is empty."),
                           (" . ", f"Type a word: the {p['corpus']} model reads no punctuation.")]:
        type_sentence(widget, typed)
        assert settle(browser, widget) == "error"
        assert text_of(widget, "result").startswith(message), text_of(widget, "result")
        assert not widget.find_elements(By.CSS_SELECTOR, drawn), f"{typed!r}: an old result is shown"
        assert widget.get_attribute("data-shown") is None
        # the message takes the result's room: the text below the widget does not jump up
        room = widget.find_element(By.CSS_SELECTOR, "[data-role=result]").size["height"]
        assert room >= height - 1, f"{typed!r}: the result's room fell from {height} to {room} px"


def test_punctuation_the_model_never_saw_is_left_out_by_name(browser, server):
    """"Je suis étudiant." (the post's sentence, with its full stop) on the post model, and
    every translate widget's example with a full stop and a comma."""
    problems = []
    for page in pages_with("translate"):
        for widget in open_page(browser, server, page, "translate"):
            corpora = corpora_of(widget)
            for corpus in ["post"] if "post" in corpora else corpora[:1]:
                start(browser, widget, corpus)
                typed = "Je suis étudiant." if corpus == "post" else params(widget)["sentence"] + " ,."
                type_sentence(widget, typed)
                wait_shown(browser, widget, {"corpus": corpus, "sentence": typed})
                notes = text_of(widget, "notes")
                dropped = '"."' if corpus == "post" else '",", "."'
                if f"Left out {dropped}: the {corpus} model never saw punctuation." not in notes:
                    problems.append(f"{page} {corpus} {typed!r}: notes {notes!r}")
                clean = " ".join(t for t in il.data.tokenize(typed) if t not in ".,")
                layer = il.pretrained(corpus)[0].cfg.n_layers - 1
                problems += check_translation(browser, widget, corpus, clean, layer, "mean")
    assert not problems, "\n".join(problems)


def test_each_model_states_its_trained_lengths_and_warns_outside_them(browser, server):
    problems = []
    for kind in ("translate", "beam", "selfattention"):
        try:
            widget = first_widget(browser, server, kind)
        except pytest.skip.Exception:
            continue
        for corpus in corpora_of(widget):
            sentence = start(browser, widget, corpus)
            settings = _settings(widget)
            pairs, _, _ = il.data.load_corpus(corpus, "train")
            lengths = sorted({len(il.data.tokenize(s)) for s, _ in pairs})
            lo, hi = lengths[0], lengths[-1]
            span = f"{lo}" if lo == hi else f"{lo} to {hi}"
            about = text_of(widget, "about")
            want = (f"The shipped {corpus} model, run in your browser; it was trained on sentences "
                    f"of {span} words.")
            if about != want:
                problems.append(f"{kind} {corpus}: {about!r}")
            words = il.data.tokenize(sentence)
            longer = " ".join((words * (hi // len(words) + 2))[:hi + 1])
            for typed in [longer] + ([words[0]] if lo > 1 else []):
                type_sentence(widget, typed)
                wait_shown(browser, widget, {"corpus": corpus, "sentence": typed, **settings})
                n = len(il.data.tokenize(typed))
                want = (f"Warning: {n} word{'' if n == 1 else 's'}, but the {corpus} model was "
                        f"trained on sentences of {span} words only")  # "1 word" (issue 26)
                if want not in text_of(widget, "notes"):
                    problems.append(f"{kind} {corpus} {typed!r}: notes {text_of(widget, 'notes')!r}")
            type_sentence(widget, sentence)
            wait_shown(browser, widget, {"corpus": corpus, "sentence": sentence, **settings})
            if text_of(widget, "notes"):
                problems.append(f"{kind} {corpus} {sentence!r}: a note on a trained length")
    assert not problems, "\n".join(problems)


def _settings(widget) -> dict:
    shown = widget.get_attribute("data-shown")
    return {k: v for k, v in json.loads(shown).items() if k not in ("corpus", "sentence")} if shown else {}


@pytest.mark.parametrize("kind", ["translate", "selfattention"])
def test_selects_keep_the_keyboard_focus(browser, server, kind):
    widget = first_widget(browser, server, kind)
    for name in ("layer", "head", "corpus"):
        found = widget.find_elements(By.CSS_SELECTOR, f"select[data-control={name}]")
        if not found:
            continue
        [menu] = found
        options = [o.get_attribute("value") for o in Select(menu).options]
        before = Select(menu).first_selected_option.get_attribute("value")
        menu.send_keys(Keys.ARROW_DOWN if options.index(before) < len(options) - 1 else Keys.ARROW_UP)
        settle(browser, widget)
        assert browser.execute_script("return document.activeElement === arguments[0] && "
                                      "arguments[0].isConnected;", menu), f"{name}: the focus left the select"
        assert Select(menu).first_selected_option.get_attribute("value") != before, f"{name}: not changed"


@pytest.mark.parametrize("kind", ["translate", "beam", "selfattention"])
def test_the_tab_order_holds_only_the_controls(browser, server, kind):
    """No suggestion buttons: the words the model knows are a <datalist> of the sentence box."""
    widget = first_widget(browser, server, kind)
    tabbable = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('*')).filter(e => e.tabIndex >= 0 && "
        "!e.disabled && !(e.closest('[data-role=attention]') && e.tagName === 'text'))"
        ".map(e => e.dataset.control || e.tagName);", widget)
    controls = [c.get_attribute("data-control")
                for c in widget.find_elements(By.CSS_SELECTOR, "[data-control]")]
    assert tabbable == controls, f"Tab stops {tabbable}, controls {controls}"
    assert not widget.find_elements(By.CSS_SELECTOR, "button"), "suggestion buttons in the Tab order"
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    assert widget.find_elements(By.CSS_SELECTOR, f"datalist#{box.get_attribute('list')}")


# ---------------------------------------------------------------------------------------------
# No dead control

#: What a live widget shows besides its controls (a control's own value or readout is not a change).
SNAPSHOT = """
return Array.from(arguments[0].querySelectorAll('[data-role=result], [data-role=notes], [data-role=about]'))
  .map(e => e.innerHTML).join('|');
"""


def use_live_control(driver, widget, control) -> None:
    tag, kind, name = control.tag_name, control.get_attribute("type"), control.get_attribute("data-control")
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
        corpus = json.loads(widget.get_attribute("data-shown"))["corpus"]
        current = control.get_attribute("value").strip()
        type_sentence(widget, next(s for s in sentences_of(corpus, 3) if s != current))
    else:
        control.click()


@pytest.mark.parametrize("kind", ["translate", "beam", "selfattention"])
def test_no_dead_control(browser, server, kind):
    dead = []
    for page in pages_with(kind):
        for widget in open_page(browser, server, page, kind):
            assert settle(browser, widget) == "ready"
            for i in range(len(widget.find_elements(By.CSS_SELECTOR, "[data-control]"))):
                control = widget.find_elements(By.CSS_SELECTOR, "[data-control]")[i]
                label = f"{page} {control.tag_name}[data-control={control.get_attribute('data-control')}]"
                if control.tag_name == "select" and len(Select(control).options) < 2:
                    continue  # one layer (the copy model): nothing to choose
                before = browser.execute_script(SNAPSHOT, widget)
                use_live_control(browser, widget, control)
                try:
                    WebDriverWait(browser, TIMEOUT, poll_frequency=0.1).until(
                        lambda d, w=widget, b=before: d.execute_script(SNAPSHOT, w) != b
                        and w.get_attribute("data-state") == "ready")
                except TimeoutException:
                    state = widget.get_attribute("data-state")
                    dead.append(f"{label}: {state} {text_of(widget, 'result')[:200]}")
    assert not dead, f"controls that changed nothing: {dead}"


# ---------------------------------------------------------------------------------------------
# Weight

@pytest.mark.parametrize("kind", ["translate", "beam", "selfattention"])
def test_a_page_with_live_widgets_stays_under_5_mb(site, kind):
    """The page's HTML, the images it links from _images/, and the models of every corpus its
    live widgets can load (jax-js, shared by all pages and then cached, is counted in
    test_translate_api.py)."""
    index = json.loads((site / "_illustrated" / "models" / "index.json").read_text("utf-8"))
    for page in pages_with(kind):
        html = html_path(page).read_text(encoding="utf-8")
        images = set(re.findall(r'src="\.\./(_images/[^"]+)"', html))
        corpora = set()
        for _, data in re.findall(r'data-il-widget="(?:translate|beam|selfattention)" '
                                  r'data-params=(["\'])(.*?)\1', html):
            found = json.loads(unescape(data))
            corpora |= set(found.get("corpora") or [found["corpus"]])
        total = (len(html.encode("utf-8")) + sum((site / i).stat().st_size for i in images)
                 + sum(sum(index["models"][c]["bytes"].values()) for c in corpora))
        assert total < 5e6, f"{page}: {total / 1e6:.2f} MB"


@pytest.mark.parametrize("width", [1280, 390])
def test_a_seven_step_beam_tree_is_drawn_for_the_column(browser, server, width):
    """The test split's longest fr-en sentence at beam_size 4 (seven steps): on a desktop its steps
    run across the column, drawn smaller if they must, the 12 px words no smaller than 9 px; in a
    phone's column the tree is an outline, at full size. Neither is wider than the widget."""
    browser.set_window_size(width, 1000)
    try:
        widget = first_widget(browser, server, "beam")
        pairs, _, _ = il.data.load_corpus(params(widget)["corpus"], "test")
        longest = max((s for s, _ in pairs), key=lambda s: len(s.split()))
        type_sentence(widget, longest)
        move(widget, "beam_size", 4 - params(widget)["beamSize"])
        wait_shown(browser, widget, {"sentence": longest, "beamSize": 4})
        tree = widget.find_element(By.CSS_SELECTOR, "[data-role=tree]")
        drawn = browser.execute_script(
            "const r = arguments[0].getBoundingClientRect(); const v = arguments[0].viewBox.baseVal;"
            "return [r.width, r.height, v.width, arguments[1].clientWidth]", tree, widget)
        width_px, height_px, natural, room = drawn
        assert "7 steps" in tree.get_attribute("aria-label")
        assert width_px <= room + 0.5, drawn
        assert 12 * width_px / natural >= 9 - 1e-6, drawn  # its words no smaller than 9 px
        assert (height_px < width_px) == (width == 1280), drawn  # across on a desktop only
    finally:
        browser.set_window_size(1280, 1000)
