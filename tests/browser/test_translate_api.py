"""window.illustrated in headless Chromium against the package: the shipped models, run by
jax-js in the page (site/js/engine/engine.js), translate 20 test sentences of every corpus to the tokens of
il.greedy_decode (beamSize 1) and il.beam_search, with their scores and attention weights within
1e-4; config(corpus) gives the vocabulary and the source lengths the model was trained on.
Also: the runtime and the models are fetched only when a widget first translates, once, and
then come from the browser's cache; every page loads the API; the files stay within their
budgets; bad input is refused by name. Needs the built book (`make book`).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.modules import Attention, recording_attention
from builtbook import toc_pages
from illustrated.commands.shipped import SHIPPED

SENTENCES = 20
TOL = 1e-4
API = "_illustrated/js/api.js"

#: Runs a list of calls of window.illustrated in the page: [[method, corpus, sentence, options]].
CALLS = """
const calls = arguments[0], done = arguments[arguments.length - 1];
(async () => {
  await window.illustrated.ready;
  const out = [];
  for (const [method, corpus, sentence, options] of calls) {
    try { out.push(await window.illustrated[method](corpus, sentence, options)); }
    catch (error) { out.push({ error: String(error.message) }); }
  }
  return out;
})().then(done, (error) => done([{ error: "ready failed: " + error }]));
"""

RESOURCES = "return performance.getEntriesByType('resource').map(e => [e.name, e.transferSize]);"


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The Python side on one thread: these tiny models run 10x slower on two threads of a
    2-core machine that also runs the browser (measured), and the numbers do not change."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def page(browser, server):
    """The book's first page, freshly loaded, with the API ready."""
    browser.get(f"{server.base_url}/{toc_pages()[0]}.html")
    ready = browser.execute_async_script(
        "const done = arguments[0]; window.illustrated.ready.then("
        "(api) => done(api.corpora), (e) => done('ready failed: ' + e));")
    assert ready == list(SHIPPED), ready
    return browser


def run(driver, calls: list) -> list:
    return driver.execute_async_script(CALLS, calls)


def test_every_page_loads_the_api_as_a_module(site):
    missing = []
    for page in toc_pages():
        html = (site / f"{page}.html").read_text(encoding="utf-8")
        if not re.search(r'<script[^>]*src="[^"]*' + re.escape(API) + r'[^"]*"[^>]*type="module"'
                         r'|<script[^>]*type="module"[^>]*src="[^"]*' + re.escape(API), html):
            missing.append(page)
    assert not missing, f"pages without <script type=module src=...{API}>: {missing}"


def test_files_stay_within_their_budgets(site):
    """Each corpus's files under 5 MB (a page uses one or two); the runtime under 1 MB."""
    index = json.loads((site / "_illustrated" / "models" / "index.json").read_text("utf-8"))
    for corpus in SHIPPED:
        assert sum(index["models"][corpus]["bytes"].values()) < 5e6, corpus
    runtime = sum(f.stat().st_size for f in (site / "_vendor" / "jax-js").iterdir())
    assert runtime < 1e6, runtime


def test_nothing_heavy_is_fetched_before_a_translation(page):
    names = [name for name, _ in page.execute_script(RESOURCES)]
    assert any(name.endswith("/_illustrated/models/index.json") for name in names), names
    heavy = [n for n in names if "/_vendor/jax-js/" in n or n.endswith(".safetensors")]
    assert not heavy, f"fetched on page load: {heavy}"


def _expected(corpus: str, sentences: list[str], beam_size: int, top_beams: int, alpha: float):
    """il.beam_search's hypotheses and the attention of the best, for each sentence."""
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    spell = lambda ids: [tgt_vocab.tokens[i] for i in ids]  # noqa: E731
    out = []
    for sentence in sentences:
        ids = src_vocab.encode(sentence)
        beams = il.beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                               beam_size=beam_size, top_beams=top_beams, alpha=alpha)
        best = beams[0][0]
        tgt_in = torch.tensor([[tgt_vocab.bos_id, *best[:-1]]])  # (1, steps)
        with torch.no_grad(), recording_attention(model) as record:
            model(torch.tensor([ids]), tgt_in)
        attention = Attention.of(record)
        out.append({
            "hypotheses": [(spell(t), s) for t, s in beams],
            "greedy": spell(il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id,
                                             eos_id=tgt_vocab.eos_id)),
            "encoderAttention": torch.stack(attention.encoder)[:, 0].numpy(),
            "crossAttention": torch.stack(attention.decoder_cross)[:, 0].numpy(),
            "decoderAttention": torch.stack(attention.decoder_self)[:, 0].numpy(),
            "sourceTokens": il.data.tokenize(sentence),
        })
    return out


def _compare(corpus, sentences, got, want) -> list[str]:
    problems = []
    for sentence, g, w in zip(sentences, got, want):
        where = f"{corpus} {sentence!r}"
        if "error" in g:
            problems.append(f"{where}: {g['error']}")
            continue
        tokens = [h["tokens"] for h in g["hypotheses"]]
        if tokens != [t for t, _ in w["hypotheses"]]:
            problems.append(f"{where}: tokens {tokens}, Python {[t for t, _ in w['hypotheses']]}")
            continue
        scores = np.array([h["score"] for h in g["hypotheses"]])
        if not np.allclose(scores, [s for _, s in w["hypotheses"]], rtol=0, atol=TOL):
            problems.append(f"{where}: scores {scores}, Python {w['hypotheses']}")
        if g["sourceTokens"] != w["sourceTokens"]:
            problems.append(f"{where}: source tokens {g['sourceTokens']}")
        for name in ("encoderAttention", "crossAttention", "decoderAttention"):
            array = np.array(g[name])
            if array.shape != w[name].shape or np.abs(array - w[name]).max() > TOL:
                problems.append(f"{where}: {name} differs (shape {array.shape}, "
                                f"Python {w[name].shape})")
    return problems


def _test_sentences(corpus: str) -> list[str]:
    """20 test sentences (the post's corpus has 2: then its training sentences too)."""
    sources = []
    for split in ("test", "train"):
        pairs, _, _ = il.data.load_corpus(corpus, split)
        sources += [s for s, _ in pairs if s not in sources]
    return sources[:SENTENCES]


@pytest.mark.parametrize("corpus", SHIPPED)
def test_translate_matches_python(corpus, page):
    """Beam 1 (il.greedy_decode's tokens too) and beam 4 with 2 hypotheses, on 20 test sentences."""
    sentences = _test_sentences(corpus)
    calls = ([["translate", corpus, s, {}] for s in sentences]
             + [["translate", corpus, s, {"beamSize": 4, "topBeams": 2}] for s in sentences])
    got = run(page, calls)
    n = len(sentences)
    greedy_want = _expected(corpus, sentences, 1, 1, 0.0)
    problems = _compare(corpus, sentences, got[:n], greedy_want)
    problems += _compare(corpus, sentences, got[n:], _expected(corpus, sentences, 4, 2, 0.0))
    for sentence, g, w in zip(sentences, got[:n], greedy_want):
        if g.get("hypotheses", [{}])[0].get("tokens") != w["greedy"]:
            problems.append(f"{corpus} {sentence!r}: beamSize 1 gives {g}, greedy_decode {w['greedy']}")
    assert not problems, f"{len(problems)} problems, e.g.\n" + "\n".join(problems[:10])


def test_length_penalty_and_top_beams_match_python(page):
    sentences = _test_sentences("fr-en")[:5]
    options = {"beamSize": 4, "topBeams": 4, "alpha": 0.6, "maxLen": 12}
    got = run(page, [["translate", "fr-en", s, options] for s in sentences])
    model, src_vocab, tgt_vocab = il.pretrained("fr-en")
    problems = []
    for sentence, g in zip(sentences, got):
        want = il.beam_search(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                              eos_id=tgt_vocab.eos_id, beam_size=4, top_beams=4, alpha=0.6,
                              max_len=12)
        want = [([tgt_vocab.tokens[i] for i in t], s) for t, s in want]
        mine = [(h["tokens"], h["score"]) for h in g["hypotheses"]]
        if [t for t, _ in mine] != [t for t, _ in want] or not np.allclose(
                [s for _, s in mine], [s for _, s in want], rtol=0, atol=TOL):
            problems.append(f"{sentence!r}: {mine}, Python {want}")
    assert not problems, problems


def test_beam_steps_match_python(page):
    """returnSteps: the beam as a tree, as beam_search(return_steps=True) gives it."""
    sentence = _test_sentences("post")[0]
    [got] = run(page, [["translate", "post", sentence, {"beamSize": 3, "returnSteps": True}]])
    model, src_vocab, tgt_vocab = il.pretrained("post")
    _, steps = il.beam_search(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                              eos_id=tgt_vocab.eos_id, beam_size=3, return_steps=True)
    spell = lambda ids: [tgt_vocab.tokens[i] for i in ids]  # noqa: E731
    assert [s["step"] for s in got["steps"]] == [s.step for s in steps]
    for mine, want in zip(got["steps"], steps):
        assert [c["tokens"] for c in mine["candidates"]] == [spell(t) for t, _ in want.candidates]
        assert np.allclose([c["logProb"] for c in mine["candidates"]],
                           [p for _, p in want.candidates], rtol=0, atol=TOL)
        assert mine["kept"] == [spell(t) for t in want.kept]
        assert mine["finished"] == [spell(t) for t in want.finished]


def test_runtime_fetched_once_then_cached(page, server):
    """After translations with every corpus: one fetch of the runtime and of each model; on
    the next page the runtime comes from the browser's cache (or a 304), not downloaded."""
    names = [name for name, _ in page.execute_script(RESOURCES)]
    runtime = [n for n in names if n.endswith("/_vendor/jax-js/index.js")]
    assert len(runtime) == 1, runtime
    for corpus in SHIPPED:
        model = re.compile(rf"/{re.escape(corpus)}\.[0-9a-f]{{16}}\.safetensors$")
        assert sum(bool(model.search(n)) for n in names) == 1, corpus
    page.get(f"{server.base_url}/{toc_pages()[-1]}.html")
    [result] = run(page, [["translate", "copy", _test_sentences("copy")[0], {}]])
    assert "hypotheses" in result, result
    entries = dict(page.execute_script(RESOURCES))
    [runtime] = [n for n in entries if n.endswith("/_vendor/jax-js/index.js")]
    assert entries[runtime] < 10_000, f"the runtime was downloaded again ({entries[runtime]} bytes)"


@pytest.mark.parametrize("call, message", [
    (["translate", "post", "je suis professeur , merci", {}],
     'sentence: unknown words "professeur", "," for the "post" model'),
    (["translate", "klingon", "je suis", {}], 'corpus: got "klingon", expected one of post'),
    (["translate", "post", "   ", {}], "sentence: got an empty sentence"),
    (["translate", "post", "je suis", {"beamSize": 2, "topBeams": 3}],
     "topBeams: expected an integer in [1, 2]"),
    (["translate", "post", "je suis", {"beamsize": 2}],
     'options: expected only beamSize, topBeams, alpha, maxLen, returnSteps, topK, got {"beamsize":2}'),
    (["translate", "post", "je suis", {"maxLen": 0}], "maxLen: expected an integer in [1, 64]"),
    (["translate", "post", "je suis", {"alpha": -1}], "alpha: expected a finite number >= 0"),
    (["translate", "post", "je suis", {"topK": -1}], "topK: expected an integer in [0, "),
    (["translate", "post", "je suis", {"topK": 2.5}], "topK: expected an integer in [0, "),
])
def test_bad_input_is_refused_by_name(page, call, message):
    [result] = run(page, [call])
    assert message in result.get("error", ""), result


def test_top_k_per_step_matches_python(page):
    """topK: the most probable next words at each step of the best hypothesis, as the model's
    log_softmax gives them with <bos> and <pad> excluded (beam 2 here, so not only greedy)."""
    sentences = _test_sentences("fr-en")[:4]
    got = run(page, [["translate", "fr-en", s, {"beamSize": 2, "topK": 4}] for s in sentences])
    model, src_vocab, tgt_vocab = il.pretrained("fr-en")
    for sentence, g in zip(sentences, got):
        [(best, _)] = il.beam_search(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                                     eos_id=tgt_vocab.eos_id, beam_size=2)
        tgt_in = torch.tensor([[tgt_vocab.bos_id, *best[:-1]]])  # (1, steps)
        with torch.no_grad():
            log_probs = model(torch.tensor([src_vocab.encode(sentence)]), tgt_in)[0].log_softmax(-1)
        log_probs[:, [tgt_vocab.bos_id, model.cfg.tgt_pad_id]] = float("-inf")  # (steps, vocab)
        assert len(g["topK"]) == len(best), (sentence, g)
        for step, (ranks, row) in enumerate(zip(g["topK"], log_probs.numpy())):
            order = np.argsort(-row, kind="stable")[:4]
            assert [r["token"] for r in ranks] == [tgt_vocab.tokens[i] for i in order], (sentence, step)
            np.testing.assert_allclose([r["logProb"] for r in ranks], row[order], rtol=0, atol=TOL)
            np.testing.assert_allclose([r["prob"] for r in ranks], np.exp(row[order]), rtol=0, atol=TOL)


@pytest.mark.parametrize("corpus", SHIPPED)
def test_config_has_the_vocabulary_and_the_trained_lengths(page, corpus):
    """config(corpus): the model's words and sizes, and train_src_len, the shortest and longest
    training source in tokens, which the widgets state and warn outside of."""
    got = page.execute_async_script(
        "const done = arguments[1];"
        "window.illustrated.config(arguments[0]).then(done, (e) => done(String(e)));",
        corpus)
    model, src_vocab, tgt_vocab = il.pretrained(corpus)
    pairs, _, _ = il.data.load_corpus(corpus, "train")
    lengths = [len(il.data.tokenize(source)) for source, _ in pairs]
    assert got["src_tokens"] == src_vocab.tokens and got["tgt_tokens"] == tgt_vocab.tokens
    assert (got["n_layers"], got["n_heads"]) == (model.cfg.n_layers, model.cfg.n_heads)
    assert got["train_src_len"] == [min(lengths), max(lengths)]
