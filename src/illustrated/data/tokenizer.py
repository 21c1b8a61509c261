"""Word-level tokenizer for the toy corpora: sentence in, list of words out, and back.

The post feeds the model words ("je", "suis", "étudiant"), not sub-words. Our tokenizer does the
same with a few rules so that the French corpora read naturally: elisions such as ``l'animal``
become two words (``l'`` and ``animal``), punctuation becomes its own word, accents are kept.

References: post "Bringing The Tensors Into The Picture" (each input word becomes a vector);
paper §5.1 uses byte-pair encoding instead, a deliberate simplification here.
"""
from __future__ import annotations

import re
from typing import Iterable

__all__ = ["PUNCTUATION", "ELISIONS", "tokenize", "detokenize"]

#: Characters split off as tokens of their own.
PUNCTUATION = ".,!?;:"

#: French words that elide before a vowel; the token keeps the apostrophe (``l'``, ``qu'``).
ELISIONS = ("l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu", "puisqu")

_DELIMITERS = r"\s" + re.escape(PUNCTUATION)
# One pass: a punctuation mark | an elided word at the start of a word, followed by more word |
# a run of anything else that is not a space or punctuation.
_ELIDED = "|".join(sorted(ELISIONS, key=len, reverse=True))
_TOKEN = re.compile(
    f"[{re.escape(PUNCTUATION)}]"
    f"|(?<![^{_DELIMITERS}])(?:{_ELIDED})'(?=[^{_DELIMITERS}])"
    f"|[^{_DELIMITERS}]+"
)


def _check_sentence(sentence: object) -> str:
    if not isinstance(sentence, str):
        raise ValueError(f"sentence: got {type(sentence).__name__} {sentence!r}, expected a str")
    if not sentence.strip():
        raise ValueError(
            f"sentence: got an empty sentence {sentence!r}, expected at least one word"
        )
    return sentence


def tokenize(sentence: str) -> list[str]:
    """Split a sentence into lowercase words, the way the toy corpora are written.

    Rules, in order: the typographic apostrophe ``’`` becomes ``'``; everything is lowercased;
    the sentence is split on whitespace; each of ``.,!?;:`` becomes a token of its own; a French
    elision is split after its apostrophe (``l'animal`` -> ``l'``, ``animal``; ``qu'il`` ->
    ``qu'``, ``il``). English contractions stay whole (``didn't``). Accents are kept.

    Parameters
    ----------
    sentence : str
        A sentence with at least one non-space character.

    Returns
    -------
    list[str]
        The tokens, none of them empty, none containing whitespace.

    Shapes
    ------
    Not applicable (plain strings).

    Raises
    ------
    ValueError
        If ``sentence`` is not a str, or is empty or whitespace only.

    References
    ----------
    Post "Bringing The Tensors Into The Picture"; paper §5.1 (which uses byte-pair encoding).
    """
    text = _check_sentence(sentence).replace("\u2019", "'").lower()
    return _TOKEN.findall(text)


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens back into a sentence: the inverse of :func:`tokenize` on our corpora.

    Tokens are joined by single spaces, except that an elided word (ending in ``'``) is glued to
    the next token and punctuation is glued to the previous one.

    Parameters
    ----------
    tokens : iterable of str
        Tokens as produced by :func:`tokenize`; may be empty (gives ``""``).

    Returns
    -------
    str
        The sentence. ``detokenize(tokenize(s)) == s`` for every sentence of the shipped corpora
        (lowercase, single spaces, no space before punctuation).

    Shapes
    ------
    Not applicable (plain strings).

    Raises
    ------
    ValueError
        If ``tokens`` is a str (a common slip: pass a list of words) or holds a non-str or an
        empty token.

    References
    ----------
    Post "The Final Linear and Softmax Layer" (the output word is looked up, then shown).
    """
    if isinstance(tokens, str):
        raise ValueError(f"tokens: got the str {tokens!r}, expected a list of str tokens")
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
