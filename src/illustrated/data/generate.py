"""Deterministic generator of the shipped toy corpora: ``python -m illustrated.data.generate``.

Every corpus comes from a seeded ``random.Random`` and a small grammar, so the files under
``corpora/`` can be rebuilt byte for byte (a test checks it). Nothing is ever downloaded.

References: post "Recap Of Training" (a training set of sentence pairs); paper §5.1.
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Sequence

from . import coreference_grammar as coref
from .corpora import CORPORA
from .fr_en_grammar import fr_en_pairs
from .tokenizer import tokenize

__all__ = ["SEEDS", "SYMBOLS", "generate_corpus", "write_corpora", "main"]

Pair = tuple[str, str]

#: One seed per corpus, so that changing one corpus leaves the others as they are.
SEEDS = {"fr-en": 1, "copy": 2, "reverse": 3, "coreference": 4}

#: The alphabet of the copy and reverse tasks.
SYMBOLS = tuple("abcdefghijkl")

POST_PAIRS = [("je suis étudiant", "i am a student"), ("merci", "thanks")]
SEQUENCE_TRAIN, SEQUENCE_TEST, SEQUENCE_LENGTHS = 3000, 100, (6, 10)
FR_EN_TEST = 100
COREFERENCE_TEST = 80
#: The post's two sentences: (animal, street, tired) and (animal, street, wide), verb "cross".
POST_TRIPLES = (coref.Triple(0, 0, 0), coref.Triple(0, 0, 5))


def _words(pairs: Sequence[Pair]) -> tuple[set[str], set[str]]:
    return ({w for s, _ in pairs for w in tokenize(s)}, {w for _, t in pairs for w in tokenize(t)})


def _sequences(rng: random.Random, reverse: bool) -> tuple[list[Pair], list[Pair]]:
    low, high = SEQUENCE_LENGTHS
    seen: set[str] = set()
    pairs: list[Pair] = []
    while len(pairs) < SEQUENCE_TRAIN + SEQUENCE_TEST:
        symbols = [rng.choice(SYMBOLS) for _ in range(rng.randint(low, high))]
        source = " ".join(symbols)
        if source not in seen:
            seen.add(source)
            pairs.append((source, " ".join(symbols[::-1] if reverse else symbols)))
    return pairs[:SEQUENCE_TRAIN], pairs[SEQUENCE_TRAIN:]


def _fr_en(rng: random.Random) -> tuple[list[Pair], list[Pair]]:
    pairs = fr_en_pairs()
    rng.shuffle(pairs)
    keep = {POST_PAIRS[0][0]}  # the book decodes it: it must be a training sentence
    candidates = [p for p in pairs if p[0] not in keep]
    test = candidates[:FR_EN_TEST]
    train = candidates[FR_EN_TEST:] + [p for p in pairs if p[0] in keep]
    rng.shuffle(train)
    return train, test


def _coreference(rng: random.Random) -> tuple[list[Pair], list[Pair]]:
    candidates = [t for t in coref.triples() if t not in POST_TRIPLES]
    held_out = set(rng.sample(candidates, COREFERENCE_TEST))
    test = [coref.sentence_pair(t, rng.randrange(len(coref.VERBS))) for t in coref.triples()
            if t in held_out]
    train = [coref.sentence_pair(t, v) for t in coref.triples() if t not in held_out
             for v in range(len(coref.VERBS))]
    rng.shuffle(train)
    rng.shuffle(test)
    return train, test


def generate_corpus(name: str) -> tuple[list[Pair], list[Pair]]:
    """(train, test) pairs of one corpus, the same on every call.

    No test source is a training source (except in ``"post"``, whose test split is its training
    split) and every test word occurs in the training split: RuntimeError otherwise (a bug in
    the grammar or the seeds); ValueError for an unknown ``name``.
    """
    if name == "post":
        return list(POST_PAIRS), list(POST_PAIRS)
    if name not in SEEDS:
        raise ValueError(f"name: got {name!r}, expected one of {list(CORPORA)}")
    rng = random.Random(SEEDS[name])
    if name in ("copy", "reverse"):
        train, test = _sequences(rng, reverse=name == "reverse")
    elif name == "fr-en":
        train, test = _fr_en(rng)
    else:
        train, test = _coreference(rng)
    if {s for s, _ in test} & {s for s, _ in train}:
        raise RuntimeError(f"{name}: a test source sentence is also a training one")
    (train_src, train_tgt), (test_src, test_tgt) = _words(train), _words(test)
    if not (test_src <= train_src and test_tgt <= train_tgt):
        unseen = sorted((test_src - train_src) | (test_tgt - train_tgt))
        raise RuntimeError(f"{name}: test words never seen in training: {unseen}")
    return train, test


def write_corpora(directory: str | Path | None = None) -> list[Path]:
    """Write every corpus as ``{name}.{train,test}.tsv`` (UTF-8, ``\\n`` ends) into ``directory``
    (default: the package's ``corpora/``); returns the paths written."""
    folder = Path(directory) if directory is not None else Path(__file__).with_name("corpora")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in CORPORA:
        for split, pairs in zip(("train", "test"), generate_corpus(name)):
            path = folder / f"{name}.{split}.tsv"
            text = "".join(f"{source}\t{target}\n" for source, target in pairs)
            path.write_text(text, encoding="utf-8", newline="\n")
            written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: rewrite the corpus files (``--out DIR`` writes into DIR)."""
    parser = argparse.ArgumentParser(
        prog="python -m illustrated.data.generate", description=__doc__
    )
    parser.add_argument("--out", default=None, help="folder to write into (default: the package's)")
    args = parser.parse_args(argv)
    for path in write_corpora(args.out):
        lines = path.read_text(encoding="utf-8").count("\n")
        print(f"{path}: {lines} pairs")


if __name__ == "__main__":
    main()
