"""Word-level tokenizer for the toy corpora: sentence in, list of words out, and back.

The post feeds the model words ("je", "suis", "étudiant"), not sub-words. Our tokenizer does the
same with a few rules so that the French corpora read naturally: elisions such as ``l'animal``
become two words (``l'`` and ``animal``), punctuation becomes its own word, accents are kept.
Every text the package reads (a typed sentence, a corpus or pairs file, a vocabulary) goes
through :func:`normalize`, so a word typed with a combining accent is the same word as one typed
with the precomposed letter.

References: post "Bringing The Tensors Into The Picture" (each input word becomes a vector);
paper §5.1 uses byte-pair encoding instead, a deliberate simplification here.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable

__all__ = ["PUNCTUATION", "ELISIONS", "SPECIALS", "normalize", "tokenize", "detokenize"]

#: Characters split off as tokens of their own.
PUNCTUATION = ".,!?;:"

#: French words that elide before a vowel; the token keeps the apostrophe (``l'``, ``qu'``).
ELISIONS = ("l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu", "puisqu")

#: The model's own tokens, never a word of a sentence (the order :meth:`Vocab.build` gives them).
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")

_DELIMITERS = r"\s" + re.escape(PUNCTUATION)
# One pass: a punctuation mark | an elided word at the start of a word, followed by more word |
# a run of anything else that is not a space or punctuation.
_ELIDED = "|".join(sorted(ELISIONS, key=len, reverse=True))
_TOKEN = re.compile(
    f"[{re.escape(PUNCTUATION)}]"
    f"|(?<![^{_DELIMITERS}])(?:{_ELIDED})'(?=[^{_DELIMITERS}])"
    f"|[^{_DELIMITERS}]+"
)


def normalize(text: str) -> str:
    """``text`` in Unicode NFC (``e`` + combining acute becomes ``é``): the package's one
    normalisation, applied by :func:`tokenize`, :class:`~illustrated.data.Vocab`,
    :func:`~illustrated.data.load_corpus` and the pairs-file reader. Unicode Annex #15."""
    return unicodedata.normalize("NFC", text)


def tokenize(sentence: str, *, name: str = "sentence") -> list[str]:
    """Split a sentence into lowercase words, the way the toy corpora are written.

    Rules, in order: ``’`` becomes ``'``; everything is lowercased and put in NFC
    (:func:`normalize`); the sentence is split on whitespace; each of ``.,!?;:`` is a token; a
    French elision is split after its apostrophe (``l'animal`` -> ``l'``, ``animal``; ``qu'il``
    -> ``qu'``, ``il``). English contractions stay whole (``didn't``). Accents are kept.

    Parameters
    ----------
    sentence : str, at least one non-space character.
    name : str, keyword-only, the argument's name in error messages.

    Returns
    -------
    list[str], the tokens: none empty, none with whitespace, all NFC.

    Raises
    ------
    ValueError
        If ``sentence`` is not a str, is blank, or has a special token (``<pad> <bos> <eos>
        <unk>``, any case) as a word: ``"sentence: expected no special token, got '<eos>'"``
        (typed into a sentence it would become the model's own token).

    References
    ----------
    Post "Bringing The Tensors Into The Picture"; paper §5.1 (which uses byte-pair encoding).
    """
    if not isinstance(sentence, str):
        raise ValueError(f"{name}: got {type(sentence).__name__} {sentence!r:.60}, expected a str")
    if not sentence.strip():
        raise ValueError(f"{name}: got an empty sentence {sentence!r:.60}, expected at least one "
                         f"word")
    tokens = words(sentence)
    special = special_token(tokens)
    if special is not None:
        raise ValueError(f"{name}: expected no special token, got {special!r}")
    return tokens


def words(text: str) -> list[str]:
    """The tokens of a str by :func:`tokenize`'s rules, unchecked (empty list for blank text)."""
    return _TOKEN.findall(normalize(text.replace("\u2019", "'").lower()))


def special_token(tokens: Iterable[str]) -> str | None:
    """The first of ``tokens`` that is a special token, or None."""
    return next((t for t in tokens if t in SPECIALS), None)


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens back into a sentence: the inverse of :func:`tokenize` on our corpora.

    Single spaces, except that an elided word (ending in ``'``) is glued to the next token and
    punctuation to the previous one; no tokens give ``""``. ``detokenize(tokenize(s)) == s``
    for every sentence of the shipped corpora. Raises ValueError if ``tokens`` is a str (pass a
    list of words) or holds a non-str or empty token. Post "The Final Linear and Softmax Layer".
    """
    if isinstance(tokens, str):
        raise ValueError(f"tokens: got the str {tokens!r:.60}, expected a list of str tokens")
    out: list[str] = []
    glue_next = True  # nothing to separate from at the start
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise ValueError(f"tokens: got {token!r} at position {i}, expected a non-empty str")
        if not (glue_next or (len(token) == 1 and token in PUNCTUATION)):
            out.append(" ")
        out.append(token)
        glue_next = token.endswith("'") and len(token) > 1
    return "".join(out)
