"""The toy corpora shipped with the package, and the coreference metric.

``post``: the post's "je suis étudiant" -> "i am a student" and "merci" -> "thanks", its
target vocabulary led by the post's six words (ids 0-5); ``fr-en``: French -> English from
:mod:`.fr_en_grammar`; ``copy`` / ``reverse``: letter sequences; ``coreference``: English ->
French from :mod:`.coreference_grammar`, like "the animal didn't cross the street because it
was too tired", where "it" must become ``il`` or ``elle``. The files
``corpora/{name}.{train,test}.tsv`` are written by :mod:`.generate`; nothing is downloaded.
Post "Recap Of Training", "Self-Attention at a High Level".
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

from .tokenizer import normalize, tokenize
from .vocab import Vocab

__all__ = ["CORPORA", "SPLITS", "POST_TARGET_TOKENS", "load_corpus", "pronoun_correct"]

#: Names accepted by :func:`load_corpus`.
CORPORA = ("post", "fr-en", "copy", "reverse", "coreference")
SPLITS = ("train", "test")

#: The post's output vocabulary (ids 0-5, as in its figure), then the other special tokens.
POST_TARGET_TOKENS = ("a", "am", "i", "thanks", "student", "<eos>", "<pad>", "<bos>", "<unk>")

_PRONOUNS = ("il", "elle")


@lru_cache(maxsize=None)
def _read(name: str, split: str) -> tuple[tuple[str, str], ...]:
    """The pairs of one shipped corpus file, in NFC; RuntimeError if the package's file is bad."""
    path = resources.files(__package__) / "corpora" / f"{name}.{split}.tsv"
    text = normalize(path.read_text(encoding="utf-8"))
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        source, tab, target = line.partition("\t")
        if not tab or "\t" in target:
            raise RuntimeError(f"{name}.{split}.tsv line {number}: expected 'source<TAB>target'")
        pairs.append((source, target))
    return tuple(pairs)


def load_corpus(name: str, split: str = "train") -> tuple[list[tuple[str, str]], Vocab, Vocab]:
    """Load a toy corpus: its sentence pairs and the source and target vocabularies.

    name: one of :data:`CORPORA`; split: ``"train"`` or ``"test"``.
    Returns (pairs, src_vocab, tgt_vocab): a fresh list of NFC (source, target) pairs the caller
    may shuffle; vocabularies built from both splits (a test sentence never meets ``<unk>``).
    ``<pad>`` is id 0 except in the ``post`` target vocabulary, which follows the post's figure
    (``a, am, i, thanks, student, <eos>`` are ids 0-5, ``<pad>`` is 6).
    Raises ValueError if ``name`` is not in :data:`CORPORA` or ``split`` is not train/test.
    Post "Recap Of Training" (training data and output vocabulary), "The Loss Function".
    """
    if name not in CORPORA:
        raise ValueError(f"name: got {name!r}, expected one of {list(CORPORA)}")
    if split not in SPLITS:
        raise ValueError(f"split: got {split!r}, expected one of {list(SPLITS)}")
    both = _read(name, "train") + _read(name, "test")
    src_vocab = Vocab.build(source for source, _ in both)
    if name == "post":
        tgt_vocab = Vocab(POST_TARGET_TOKENS)
    else:
        tgt_vocab = Vocab.build(target for _, target in both)
    return list(_read(name, split)), src_vocab, tgt_vocab


def _pronouns(sentence: str, name: str) -> list[str]:
    """The ``il``/``elle`` tokens of a sentence, in order (none for a blank one)."""
    return [t for t in tokenize(sentence, name=name) if t in _PRONOUNS] if sentence.strip() else []


def pronoun_correct(prediction: str, target: str) -> bool:
    """Whether a predicted French sentence makes the target's choice between ``il`` and ``elle``.

    The coreference metric: "it" in "... because it was too tired" is ``il`` for ``l'animal`` and
    ``elle`` for ``la rue``. True when the prediction's sequence of il/elle tokens equals the
    target's (so no pronoun, or both, is wrong).
    Raises ValueError if ``prediction`` or ``target`` is not a str or has a special token as a
    word, or ``target`` holds no il/elle. Post "Self-Attention at a High Level" ("what does 'it'
    in this sentence refer to?").
    """
    if not isinstance(prediction, str):
        raise ValueError(
            f"prediction: got {type(prediction).__name__} {prediction!r}, expected a str"
        )
    if not isinstance(target, str):
        raise ValueError(f"target: got {type(target).__name__} {target!r}, expected a str")
    expected = _pronouns(target, "target")
    if not expected:
        raise ValueError(f"target: got {target!r}, expected a French sentence with 'il' or 'elle'")
    return _pronouns(prediction, "prediction") == expected
