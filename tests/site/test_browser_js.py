"""The book's own browser modules (site/js/) outside the browser, with Node: ESLint passes, the
tokenizer turns every corpus sentence and every edge case into the tokens Python makes, the live
widgets read a sentence as the model can (punctuation it never saw left out by name, unknown
words named, lengths outside training warned). (site/js's size is a review aim, stated in
docs/ARCHITECTURE.md, not a test: issue 32.)
(tests/browser/ drives them in Chromium against the package.)"""
from __future__ import annotations

import subprocess
import unicodedata
from pathlib import Path

import pytest

import illustrated as il
from illustrated.commands import web_export
from illustrated.data.tokenizer import tokenize
from node_runner import NODE, requires_node, run_node

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"

pytestmark = requires_node

EDGE_CASES = [
    "L'animal n'a pas traversé la rue parce qu'il était trop fatigué.",
    "QU'IL JUSQU'À LORSQU'ELLE PUISQU'ON", "l' animal", "'l animal", "l'", "l'l'l", "x'y",
    "aujourd'hui", "didn't", "c’est l’arbre", "Hello,world!!", "a.b;c:d?e!f", "...", " . ",
    "tab\tnew\nline\rform\x0cvert\x0b", "nbsp\xa0thin\u2009ideo\u3000sep\u2028para\u2029",
    "info\x1cseps\x1d\x1e\x1fnel\x85", "bom\ufeffzwsp\u200b", "ΣΑΣ ΟΔΟΣ.", "İstanbul", "Straße",
    "ǅemal", "ÉCOLE ÉTÉ", "Ⅻ", "ﬁn", "j'ai", "m'a dit", "s'il", "t'es", "d'eau", "n'est",
    "qu'", "'", "''", "a''b", "l'.", "l',x", "Ａ", "\u0130\u0049", "ﬃ", "ŉ", "\U0001d400",
    "  spaces  around  ",
]
ERROR_CASES = ["", "   ", "\t\n", "\xa0\u3000", "\x1c"]


TOKENIZE = """
import { tokenize } from "./js/engine/tokenizer.js";
import { readFileSync } from "node:fs";
const sentences = JSON.parse(readFileSync(0, "utf8"));
const out = sentences.map((s) => { try { return tokenize(s); } catch (e) { return "Error: " + e.message; } });
console.log(JSON.stringify(out));
"""


def _sentences() -> list[str]:
    sentences = []
    for corpus in il.data.CORPORA:
        for split in ("train", "test"):
            pairs, _, _ = il.data.load_corpus(corpus, split)
            sentences += [s for pair in pairs for s in pair]
    return sorted(set(sentences))


def test_tokenizer_matches_python_on_every_corpus_sentence():
    sentences = _sentences()
    got = run_node(TOKENIZE, sentences)
    wrong = [(s, g, tokenize(s)) for s, g in zip(sentences, got) if g != tokenize(s)]
    assert not wrong, f"{len(wrong)} of {len(sentences)} differ, e.g. {wrong[:3]}"


def test_tokenizer_matches_python_on_edge_cases():
    cases = EDGE_CASES + [s.upper() for s in EDGE_CASES]
    got = run_node(TOKENIZE, cases)
    wrong = [(s, g, tokenize(s)) for s, g in zip(cases, got) if g != tokenize(s)]
    assert not wrong, wrong


DETOKENIZE = """
import { detokenize } from "./js/engine/tokenizer.js";
import { readFileSync } from "node:fs";
console.log(JSON.stringify(JSON.parse(readFileSync(0, "utf8")).map(detokenize)));
"""


def test_detokenize_matches_python_on_every_corpus_sentence():
    """The page writes a translation as the package does: "n' a" as "n'a", "tard ." as "tard.";
    every corpus sentence and edge case tokenized, then joined back by each, the same text."""
    from illustrated.data.tokenizer import detokenize
    token_lists = [["il", "n'", "a", "pas", "dit", "qu'", "elle", "est", "là", "."]] + [
        tokenize(s) for s in _sentences() + EDGE_CASES]
    got = run_node(DETOKENIZE, token_lists)
    assert got[0] == "il n'a pas dit qu'elle est là.", got[0]
    wrong = [(t, g, detokenize(t)) for t, g in zip(token_lists, got) if g != detokenize(t)]
    assert not wrong, f"{len(wrong)} of {len(token_lists)} differ, e.g. {wrong[:3]}"


def test_tokenizer_spaces_are_pythons():
    """Every character Python's tokenizer splits on (str.isspace) and no other, and the same
    lowercase letters: all of U+0000-U+30FF that Python's Unicode database knows (Node's is
    newer: U+1C89, new in Unicode 16, has a lowercase there and none in Python 3.11)."""
    chars = [chr(c) for c in range(0x3100) if unicodedata.category(chr(c)) not in ("Cs", "Cn")]
    got = run_node(TOKENIZE, [f"a{c}b" for c in chars])
    wrong = [(hex(ord(c)), g) for c, g in zip(chars, got) if g != tokenize(f"a{c}b")]
    assert not wrong, wrong[:10]


def test_tokenizer_refuses_blank_sentences():
    got = run_node(TOKENIZE, ERROR_CASES)
    assert all(isinstance(g, str) and g.startswith("Error: sentence:") for g in got), got
    for sentence in ERROR_CASES:
        with pytest.raises(ValueError, match="sentence"):
            tokenize(sentence)


SOURCE_IDS = """
import { sourceIds, Vocab } from "./js/engine/vocab.js";
import { readFileSync } from "node:fs";
const { tokens, sentences } = JSON.parse(readFileSync(0, "utf8"));
const model = { corpus: "post", srcVocab: new Vocab(tokens), config: { max_len: 4 } };
console.log(JSON.stringify(sentences.map((s) => {
  try { return sourceIds(model, s).ids; } catch (e) { return "Error: " + e.message; }
})));
"""


def test_source_ids_match_vocab_encode_and_name_unknown_words():
    _, src_vocab, _ = il.pretrained("post")
    sentences = ["je suis étudiant", "Merci.", "je suis professeur , merci gâteau",
                 "je <eos>", "je je je je je"]
    got = run_node(SOURCE_IDS, {"tokens": src_vocab.tokens, "sentences": sentences})
    assert got[0] == src_vocab.encode(sentences[0])
    assert got[1].startswith("Error: sentence: unknown word \".\"")
    assert got[2].startswith('Error: sentence: unknown words "professeur", ",", "gâteau" for '
                             'the "post" model'), got[2]
    assert got[3].startswith('Error: sentence: unknown word "<eos>"'), got[3]
    assert got[4] == "Error: sentence: 5 tokens, more than the model's max_len=4"


READABLE = """
import { readFileSync } from "node:fs";
globalThis.window = { document: {} };  // dom.js reads window.document when imported
const { readable } = await import("./js/widgets/sentence.js");
const { config, texts } = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(texts.map((t) => {
  try { return readable(t, config); } catch (e) { return "Error: " + e.message; }
})));
"""


def _config(corpus: str, bigrams: bool = False) -> dict:
    """What the widgets read of {corpus}.json (illustrated.commands.web_export), with ``src_bigrams``
    when asked (the tests written before it existed read a config without)."""
    _, src_vocab, _ = il.pretrained(corpus)
    pairs, _, _ = il.data.load_corpus(corpus, "train")
    lengths = [len(tokenize(s)) for s, _ in pairs]
    config = {"corpus": corpus, "src_tokens": src_vocab.tokens,
              "train_src_len": [min(lengths), max(lengths)]}
    if bigrams:
        config["src_bigrams"] = web_export._src_bigrams(corpus)
    return config


def test_widgets_read_the_posts_sentence_with_its_full_stop():
    texts = ["Je suis étudiant.", "je suis étudiant je", "Merci, merci !", "je suis professeur !",
             "", "  ", "?!", "je <eos>"]
    got = run_node(READABLE, {"config": _config("post"), "texts": texts})
    assert got[0] == {"sentence": "je suis étudiant",
                      "notes": ['Left out ".": the post model never saw punctuation.']}
    assert got[1] == {"sentence": "je suis étudiant je", "notes": [
        "Warning: 4 words, but the post model was trained on sentences of 1 to 3 words only: "
        "outside them it often answers nonsense."]}
    assert got[2] == {"sentence": "merci merci",
                      "notes": ['Left out ",", "!": the post model never saw punctuation.']}
    assert got[3] == ('Error: The post model does not know "professeur": it knows only the words '
                      'of its corpus.')
    assert got[4] == got[5] == "Error: Type a sentence: the box is empty."
    assert got[6] == "Error: Type a word: the post model reads no punctuation."
    assert got[7].startswith('Error: The post model does not know "<eos>"'), got[7]


def test_widgets_name_a_near_miss_a_single_word_and_a_sentence_unlike_the_corpus():
    """Issue 26: "etudiant" is met with "étudiant"; "1 word", not "1 words"; a sentence whose
    neighbouring words the corpus never has is said to be unlike it, and the corpus's own
    sentences are not."""
    texts = ["je suis etudiant", "étudiant", "je suis étudiant", "étudiant suis je", "xyz"]
    got = run_node(READABLE, {"config": _config("fr-en", bigrams=True), "texts": texts})
    assert got[0] == ('Error: The fr-en model does not know "etudiant": it knows only the words of '
                      'its corpus. Did you mean "étudiant" for "etudiant"?')
    assert got[1]["notes"] == ["Warning: 1 word, but the fr-en model was trained on sentences of "
                               "3 to 7 words only: outside them it often answers nonsense."]
    assert got[2] == {"sentence": "je suis étudiant", "notes": []}
    assert got[3]["notes"] == ['Note: the fr-en model never saw "étudiant suis", "suis je" in its '
                               'corpus: this sentence is unlike the ones it learned from, so its '
                               'answer may be wrong however sure it is.']
    assert got[4] == ('Error: The fr-en model does not know "xyz": it knows only the words of its '
                      'corpus.')
    street = "the street didn't cross the animal because it was too tired"
    [note] = run_node(READABLE, {"config": _config("coreference", bigrams=True),
                              "texts": [street]})[0]["notes"]
    assert '"street didn\'t", "animal because"' in note
    tired = "the animal didn't cross the street because it was too tired"
    *_, note = run_node(READABLE, {"config": _config("coreference", bigrams=True),
                                "texts": [" ".join([tired] * 3)]})[0]["notes"]
    assert note.count('"tired the"') == 1, note  # a word pair the corpus lacks is named once


@pytest.mark.parametrize("corpus", il.data.CORPORA)
def test_widgets_read_every_test_sentence_as_python_tokenizes_it(corpus):
    """With a full stop added (no corpus has punctuation), the words Python's tokenizer makes,
    and no note: every test sentence is of a trained length."""
    pairs, _, _ = il.data.load_corpus(corpus, "test")
    texts = [s + "." for s, _ in pairs]
    got = run_node(READABLE, {"config": _config(corpus, bigrams=True), "texts": texts})
    for text, g in zip(texts, got):
        assert g == {"sentence": " ".join(tokenize(text)[:-1]),
                     "notes": [f'Left out ".": the {corpus} model never saw punctuation.']}, (text, g)



def test_eslint():
    if not (SITE / "node_modules" / "eslint").exists():
        pytest.skip("eslint (npm) not installed: `make site-assets` installs it")
    result = subprocess.run([NODE, "node_modules/eslint/bin/eslint.js", "js"], cwd=SITE,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
