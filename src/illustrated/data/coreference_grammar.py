"""Sentences like the post's "The animal didn't cross the street because it was too tired".

English -> French. The English "it" becomes ``il`` or ``elle`` depending on what it refers to,
and only the adjective tells: an animal is tired, scared, lazy, slow or sleepy; a place is wide,
long, busy, dangerous or narrow. French gender then decides the pronoun and the adjective's
ending: ``l'animal`` (masculine) ... ``qu'il était trop fatigué``, ``la rue`` (feminine) ...
``qu'elle était trop large``; with a feminine animal (``la vache``) or a masculine place
(``le pont``) the choice flips, so neither the adjective alone nor the position gives it away.

References: post "Self-Attention at a High Level" (what does "it" refer to?) and
"The Beast With Many Heads" (one head attends to "the animal", another to "tired").
"""
from __future__ import annotations

from typing import NamedTuple

from .tokenizer import detokenize, tokenize

__all__ = ["Triple", "ANIMALS", "PLACES", "ADJECTIVES", "VERBS", "triples", "sentence_pair",
           "referent"]


class _Noun(NamedTuple):
    en: str
    fr: str
    gender: str  # "m" or "f"


class _Adjective(NamedTuple):
    en: str
    fr: tuple[str, str]  # masculine, feminine
    refers_to: str  # "animal" or "place"


#: Masculine animals first (the post's "animal"), then feminine ones: (English, French, gender).
ANIMALS = tuple(_Noun(*entry) for entry in (
    ("animal", "animal", "m"), ("dog", "chien", "m"), ("cat", "chat", "m"),
    ("horse", "cheval", "m"), ("lion", "lion", "m"), ("bird", "oiseau", "m"),
    ("elephant", "éléphant", "m"), ("wolf", "loup", "m"),
    ("cow", "vache", "f"), ("mouse", "souris", "f"), ("goat", "chèvre", "f"), ("hen", "poule", "f"),
))

#: Feminine places first (the post's "street"), then masculine ones.
PLACES = tuple(_Noun(*entry) for entry in (
    ("street", "rue", "f"), ("road", "route", "f"), ("river", "rivière", "f"),
    ("square", "place", "f"), ("highway", "autoroute", "f"), ("forest", "forêt", "f"),
    ("bridge", "pont", "m"), ("path", "chemin", "m"), ("park", "parc", "m"),
    ("canal", "canal", "m"),
))

#: (English, French masculine and feminine, what it can describe).
ADJECTIVES = tuple(_Adjective(en, tuple(fr.split("/")), refers_to) for en, fr, refers_to in (
    ("tired", "fatigué/fatiguée", "animal"), ("scared", "effrayé/effrayée", "animal"),
    ("lazy", "paresseux/paresseuse", "animal"), ("slow", "lent/lente", "animal"),
    ("sleepy", "endormi/endormie", "animal"),
    ("wide", "large/large", "place"), ("long", "long/longue", "place"),
    ("busy", "animé/animée", "place"), ("dangerous", "dangereux/dangereuse", "place"),
    ("narrow", "étroit/étroite", "place"),
))

#: (English infinitive, French past participle): "didn't cross" -> "n'a pas traversé".
VERBS = (("cross", "traversé"), ("reach", "atteint"), ("leave", "quitté"))


class Triple(NamedTuple):
    """Indices into ANIMALS, PLACES and ADJECTIVES: the three words that decide "it"."""

    animal: int
    place: int
    adjective: int


def triples() -> list[Triple]:
    """Every (animal, place, adjective) index combination, in a fixed order."""
    return [
        Triple(a, p, j)
        for a in range(len(ANIMALS))
        for p in range(len(PLACES))
        for j in range(len(ADJECTIVES))
    ]


def _the(noun: _Noun) -> list[str]:
    if noun.fr.startswith(tuple("aeiouéèêh")):
        return ["l'", noun.fr]
    return ["le" if noun.gender == "m" else "la", noun.fr]


def sentence_pair(triple: Triple, verb: int) -> tuple[str, str]:
    """(english, french) for one combination and verb index, e.g. ("the animal didn't cross
    the street because it was too tired", "l'animal n'a pas traversé la rue parce qu'il était
    trop fatigué")."""
    animal, place = ANIMALS[triple.animal], PLACES[triple.place]
    adjective = ADJECTIVES[triple.adjective]
    en_verb, fr_verb = VERBS[verb]
    referent = animal if adjective.refers_to == "animal" else place
    pronoun = "il" if referent.gender == "m" else "elle"
    fr_adjective = adjective.fr[referent.gender == "f"]
    english = ["the", animal.en, "didn't", en_verb, "the", place.en, "because", "it", "was", "too",
               adjective.en]
    french = [*_the(animal), "n'", "a", "pas", fr_verb, *_the(place), "parce", "qu'", pronoun,
              "était", "trop", fr_adjective]
    return detokenize(english), detokenize(french)


def referent(sentence: str) -> tuple[int, int] | None:
    """(position of "it", position of the noun it refers to) among the words of an English
    sentence of this grammar, e.g. (7, 1) for "the animal didn't cross the street because it was
    too tired" and (7, 5) when it ends "too wide"; None for a sentence of another shape.

    Positions count the words as the encoder reads them (``tokenize``), from 0. The adjective
    decides, as in :func:`sentence_pair`: an animal's adjective names the animal, a place's the
    place. The training objective of :mod:`illustrated.training.referent` asks the encoder's output at
    "it" to name that noun.
    """
    words = tokenize(sentence)
    refers_to = {a.en: a.refers_to for a in ADJECTIVES}
    animals, places = {n.en for n in ANIMALS}, {n.en for n in PLACES}
    if "it" not in words or not words or words[-1] not in refers_to:
        return None
    nouns = [i for i, w in enumerate(words) if w in (animals if refers_to[words[-1]] == "animal"
                                                     else places)]
    return (words.index("it"), nouns[0]) if len(nouns) == 1 else None
