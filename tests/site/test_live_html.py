"""illustrated.widgets.live: the containers the book's JavaScript mounts its live widgets on.
Their data- attributes survive any sentence (tokens like <eos>, quotes, ampersands), their
settings are checked, and chapters 07, 09 and 10 hide every kernel-only widget's output and show
a live container in its place. (tests/browser/test_live_widgets.py drives the mounted widgets.)"""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

import illustrated as il
from illustrated.widgets import live

ROOT = Path(__file__).resolve().parents[2]


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text = ""

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text += data


def parse(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser


NASTY = 'je suis <eos> "étudiant" & <script>alert(1)</script> l\'animal'


def test_translate_container_round_trips_any_sentence():
    out = live.live_translate("fr-en", NASTY, corpora=["fr-en", "post"], top_k=3).data
    assert "<eos>" not in out and "<script>" not in out
    parsed = parse(out)
    tags = [tag for tag, _ in parsed.elements]
    assert tags == ["div", "p", "em"], tags  # nothing of the sentence became an element
    attrs = parsed.elements[0][1]
    assert attrs["data-illustrated-live"] == "translate"
    assert attrs["data-sentence"] == NASTY
    assert attrs["data-corpus"] == "fr-en" and attrs["data-corpora"] == "fr-en,post"
    assert attrs["data-top-k"] == "3"
    examples = json.loads(attrs["data-examples"])
    pairs, _, _ = il.data.load_corpus("post", "test")
    assert examples == {"fr-en": NASTY, "post": pairs[0][0]}
    assert parsed.text == live.FALLBACK


def test_beam_container_carries_its_settings():
    out = live.live_beam("post", "je <eos> & suis", beam_size=3, top_beams=2, alpha=0.6,
                         max_len=9).data
    [(_, attrs), *_] = parse(out).elements
    assert attrs == {"class": "illustrated-live", "data-illustrated-live": "beam",
                     "data-corpus": "post", "data-sentence": "je <eos> & suis",
                     "data-beam-size": "3", "data-top-beams": "2", "data-alpha": "0.6",
                     "data-max-beam": "6", "data-max-len": "9"}
    assert "<eos>" not in out and "&amp;" in out


@pytest.mark.parametrize("call, message", [
    (lambda: live.live_translate("klingon"), "corpora: unknown corpus 'klingon'"),
    (lambda: live.live_translate("fr-en", corpora=["post"]), "corpus: 'fr-en' is not among"),
    (lambda: live.live_translate("fr-en", "   "), "sentence: expected a non-empty string"),
    (lambda: live.live_translate("fr-en", top_k=0), "top_k: expected an int in [1, 10]"),
    (lambda: live.live_beam(beam_size=7), "beam_size: expected an int in [1, 6], got 7"),
    (lambda: live.live_beam(top_beams=True), "top_beams: expected an int in [1, 6]"),
    (lambda: live.live_beam(alpha=-0.1), "alpha: expected a number in [0, 2]"),
    (lambda: live.live_beam(max_len=0), "max_len: expected an int >= 1"),
])
def test_bad_settings_are_refused_by_name(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value)
