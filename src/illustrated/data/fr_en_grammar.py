"""A small French grammar with its English translation: the "fr-en" toy corpus.

Four sentence patterns, every one affirmative or negative (``ne ... pas``, ``n'`` before a vowel):

* pronoun + être + adjective: ``elle n'est pas fatiguée`` -> ``she is not tired``
* pronoun + être + profession: ``je suis étudiant`` -> ``i am a student`` (the post's sentence)
* pronoun + avoir + noun phrase: ``nous avons un chat`` -> ``we have a cat``
* noun phrase + être + adjective: ``les voitures rouges sont petites`` ->
  ``the red cars are small``

Articles, nouns and adjectives agree in gender and number; ``le``/``la``/``je``/``ne`` elide
before a vowel; ``petit``/``grand``/``jeune`` go before the noun and colours after it, while
English puts every adjective first (a reordering for attention to learn). ``grand`` is ``tall``
for a person and ``big`` for a thing or an animal. Each French sentence has exactly one English
translation; several French sentences may share one (``tu``/``vous`` -> ``you``).

References: post "A High-Level Look" (a French sentence in, its English translation out).
"""
from __future__ import annotations

from typing import NamedTuple

from .tokenizer import detokenize

__all__ = ["fr_en_pairs"]

VOWELS = tuple("aeiouéèêh")


class _Pronoun(NamedTuple):
    fr: str
    en: str
    etre: tuple[str, str]  # (French, English) forms of "to be"
    avoir: tuple[str, str]  # (French, English) forms of "to have"
    do: str  # English auxiliary for the negated "have"
    genders: str  # "m", "f" or "mf"
    plural: bool


PRONOUNS = (
    _Pronoun("je", "i", ("suis", "am"), ("ai", "have"), "do", "mf", False),
    _Pronoun("tu", "you", ("es", "are"), ("as", "have"), "do", "mf", False),
    _Pronoun("il", "he", ("est", "is"), ("a", "has"), "does", "m", False),
    _Pronoun("elle", "she", ("est", "is"), ("a", "has"), "does", "f", False),
    _Pronoun("nous", "we", ("sommes", "are"), ("avons", "have"), "do", "mf", True),
    _Pronoun("vous", "you", ("êtes", "are"), ("avez", "have"), "do", "mf", True),
    _Pronoun("ils", "they", ("sont", "are"), ("ont", "have"), "do", "m", True),
    _Pronoun("elles", "they", ("sont", "are"), ("ont", "have"), "do", "f", True),
)

# French forms (m sg, f sg, m pl, f pl), English, position before the noun?
ADJECTIVES = {
    "petit": (("petit", "petite", "petits", "petites"), "small", True),
    "grand": (("grand", "grande", "grands", "grandes"), "big", True),  # "tall" for people
    "jeune": (("jeune", "jeune", "jeunes", "jeunes"), "young", True),
    "content": (("content", "contente", "contents", "contentes"), "happy", False),
    "fatigué": (("fatigué", "fatiguée", "fatigués", "fatiguées"), "tired", False),
    "noir": (("noir", "noire", "noirs", "noires"), "black", False),
    "rouge": (("rouge", "rouge", "rouges", "rouges"), "red", False),
}
PERSON_PREDICATES = ("petit", "grand", "jeune", "content", "fatigué")
THING_PREDICATES = ("petit", "grand", "noir", "rouge")
ANIMAL_PREDICATES = ("petit", "grand", "jeune", "content", "fatigué", "noir")
THING_ATTRIBUTES = ("petit", "grand", "noir", "rouge")
ANIMAL_ATTRIBUTES = ("petit", "grand", "jeune", "noir")


class _Noun(NamedTuple):
    fr: tuple[str, str]  # singular, plural
    en: tuple[str, str]
    gender: str
    animal: bool


NOUNS = (
    _Noun(("chat", "chats"), ("cat", "cats"), "m", True),
    _Noun(("chien", "chiens"), ("dog", "dogs"), "m", True),
    _Noun(("livre", "livres"), ("book", "books"), "m", False),
    _Noun(("arbre", "arbres"), ("tree", "trees"), "m", False),
    _Noun(("maison", "maisons"), ("house", "houses"), "f", False),
    _Noun(("voiture", "voitures"), ("car", "cars"), "f", False),
    _Noun(("école", "écoles"), ("school", "schools"), "f", False),
    _Noun(("fleur", "fleurs"), ("flower", "flowers"), "f", False),
)

# French forms (m sg, f sg, m pl, f pl), English singular and plural.
PROFESSIONS = (
    (("étudiant", "étudiante", "étudiants", "étudiantes"), ("student", "students")),
    (("médecin", "médecin", "médecins", "médecins"), ("doctor", "doctors")),
)


def _form(forms: tuple[str, str, str, str], gender: str, plural: bool) -> str:
    return forms[(2 if plural else 0) + (1 if gender == "f" else 0)]


def _elide(tokens: list[str]) -> list[str]:
    """Apply French elision: ``le/la/je/ne`` before a vowel become ``l'/l'/j'/n'``."""
    out = list(tokens)
    for i in range(len(out) - 1):
        if out[i] in ("le", "la", "je", "ne") and out[i + 1].startswith(VOWELS):
            out[i] = out[i][0] + "'"
    return out


def _verb_phrase(subject: list[str], verb: str, negative: bool) -> list[str]:
    return [*subject, "ne", verb, "pas"] if negative else [*subject, verb]


def _noun_phrase(noun: _Noun, plural: bool, definite: bool, adjective: str | None):
    """French and English tokens of a noun phrase such as ``la voiture rouge``/``the red car``."""
    if definite:
        fr_det = "les" if plural else ("le" if noun.gender == "m" else "la")
        en_det = ["the"]
    else:
        fr_det = "des" if plural else ("un" if noun.gender == "m" else "une")
        en_det = [] if plural else ["a"]
    fr_noun, en_noun = noun.fr[plural], noun.en[plural]
    if adjective is None:
        return [fr_det, fr_noun], [*en_det, en_noun]
    forms, en_adj, before = ADJECTIVES[adjective]
    fr_adj = _form(forms, noun.gender, plural)
    fr = [fr_det, fr_adj, fr_noun] if before else [fr_det, fr_noun, fr_adj]
    return fr, [*en_det, en_adj, en_noun]


def _person_sentences():
    for p in PRONOUNS:
        fr_etre, en_etre = p.etre
        for negative in (False, True):
            en_verb = [en_etre, "not"] if negative else [en_etre]
            for gender in p.genders:
                for name in PERSON_PREDICATES:
                    forms, en_adj, _ = ADJECTIVES[name]
                    en_adj = "tall" if name == "grand" else en_adj
                    fr = _verb_phrase([p.fr], fr_etre, negative) + [_form(forms, gender, p.plural)]
                    yield fr, [p.en, *en_verb, en_adj]
                for forms, (en_sg, en_pl) in PROFESSIONS:
                    fr = _verb_phrase([p.fr], fr_etre, negative) + [_form(forms, gender, p.plural)]
                    en_obj = [en_pl] if p.plural else ["a", en_sg]
                    yield fr, [p.en, *en_verb, *en_obj]


def _possession_sentences():
    for p in PRONOUNS:
        fr_avoir, en_have = p.avoir
        for negative in (False, True):
            en_verb = [p.do, "not", "have"] if negative else [en_have]
            for noun in NOUNS:
                attributes = ANIMAL_ATTRIBUTES if noun.animal else THING_ATTRIBUTES
                for plural in (False, True):
                    # the negated indefinite would need "pas de": kept out, definite only
                    for definite in (True,) if negative else (False, True):
                        for adjective in (None, *attributes):
                            fr_np, en_np = _noun_phrase(noun, plural, definite, adjective)
                            fr = _verb_phrase([p.fr], fr_avoir, negative) + fr_np
                            yield fr, [p.en, *en_verb, *en_np]


def _description_sentences():
    for noun in NOUNS:
        attributes = ANIMAL_ATTRIBUTES if noun.animal else THING_ATTRIBUTES
        predicates = ANIMAL_PREDICATES if noun.animal else THING_PREDICATES
        for plural in (False, True):
            fr_verb, en_verb = ("sont", "are") if plural else ("est", "is")
            for negative in (False, True):
                en_verb_phrase = [en_verb, "not"] if negative else [en_verb]
                for adjective in (None, *attributes):
                    fr_np, en_np = _noun_phrase(noun, plural, True, adjective)
                    for predicate in predicates:
                        if predicate == adjective:
                            continue
                        forms, en_adj, _ = ADJECTIVES[predicate]
                        fr = _verb_phrase(fr_np, fr_verb, negative)
                        fr = fr + [_form(forms, noun.gender, plural)]
                        yield fr, [*en_np, *en_verb_phrase, en_adj]


def fr_en_pairs() -> list[tuple[str, str]]:
    """Every (french, english) pair of the grammar, each French sentence once, in a fixed order.

    E.g. ``("je suis étudiant", "i am a student")``; 2 to 8 tokens a side. RuntimeError if the
    grammar gave one French sentence two translations (a bug in the tables above).
    """
    translations: dict[str, str] = {}
    for generator in (_person_sentences, _possession_sentences, _description_sentences):
        for fr_tokens, en_tokens in generator():
            fr, en = detokenize(_elide(fr_tokens)), detokenize(en_tokens)
            if translations.setdefault(fr, en) != en:
                raise RuntimeError(f"{fr!r} translates to both {translations[fr]!r} and {en!r}")
    return list(translations.items())
