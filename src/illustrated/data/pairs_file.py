"""A reader's own sentence pairs: a tab-separated file, its vocabularies, a held-out split, BLEU.

The file holds one pair per line, ``source<TAB>target``, in UTF-8. Lines that are blank (no
character but spaces, and no tab) are skipped; every other malformed line is a ValueError
naming the file and the line number.

References: post "Recap Of Training" (the vocabulary is made in preprocessing); paper §6.1
(BLEU on a held-out test set); Post 2018, "A Call for Clarity in Reporting BLEU Scores"
(sacreBLEU).
"""
from __future__ import annotations

import os
import random
import stat
import unicodedata
from collections import Counter
from typing import Iterable, Sequence

from .._args import check_int, check_real
from ..files.bounded import describe_type
from .tokenizer import SPECIALS, normalize, special_token, words
from .vocab import Vocab, tokens_of

__all__ = ["MIN_PAIRS", "MAX_LINE_BYTES", "MAX_FILE_BYTES", "MAX_SENTENCE_TOKENS", "read_pairs",
           "build_vocab", "split_pairs", "bleu", "bleu_order"]

#: Fewest pairs a file must hold: at least one to train on and one to test on.
MIN_PAIRS = 2

#: Longest line read, in bytes (a pair of sentences is a few hundred): a binary file or
#: ``/dev/zero`` stops here instead of filling the memory.
MAX_LINE_BYTES = 10_000

#: Largest file read, in bytes (64 MiB, about a million pairs: more than the toy models can
#: learn from on a CPU).
MAX_FILE_BYTES = 64 << 20

#: Most tokens a sentence of a pairs file may have, on either side: the ``base`` preset's
#: ``max_len``. The model's positions, and its attention's memory (which grows with the square
#: of the length), are sized for the longest sentence: a 10,000-byte line of one-letter words
#: would ask for 5,000 positions and gigabytes per batch, a 1,000-word one makes every step
#: minutes long.
MAX_SENTENCE_TOKENS = 256


def read_pairs(path: str | os.PathLike, *, min_pairs: int = MIN_PAIRS) -> list[tuple[str, str]]:
    """Read ``source<TAB>target`` pairs from a UTF-8 file, one pair per line, a line at a time.

    Parameters
    ----------
    path : str or os.PathLike.   min_pairs : int >= 1, keyword-only, fewest pairs (default 2).

    Returns
    -------
    list of (source, target) str pairs, in file order, each side stripped and in NFC
    (:func:`~illustrated.data.tokenizer.normalize`). Blank lines are skipped; a byte-order mark
    at the start and ``\\r\\n`` line ends are accepted.

    Raises
    ------
    OSError
        If the file cannot be opened (missing, no permission).
    ValueError
        Naming ``path``, for a directory, a device (``/dev/zero``), a FIFO or a socket, refused
        by type before anything is read. In one line naming ``path:line``: a line over
        :data:`MAX_LINE_BYTES` bytes or the file over :data:`MAX_FILE_BYTES` (a huge file stops
        there), a side of more than :data:`MAX_SENTENCE_TOKENS` tokens, a byte that is not
        UTF-8 or is NUL (with its column), no tab or more than one, an empty side, a special
        token as a word (``my.tsv:3: expected no special token, got '<pad>'``); naming the
        file, fewer than ``min_pairs`` pairs.
    """
    check_int("min_pairs", min_pairs, low=1)
    name = os.fspath(path)
    pairs: list[tuple[str, str]] = []
    size = 0
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO: no wait for a writer
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ValueError(f"{name}: expected a file of sentence pairs, got "
                         f"{describe_type(mode)}")
    with os.fdopen(fd, "rb") as handle:
        for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""),
                                      start=1):
            where = f"{name}:{number}"
            size += len(line)
            if size > MAX_FILE_BYTES:
                raise ValueError(f"{where}: expected a file of at most {MAX_FILE_BYTES} bytes, "
                                 f"got more (not a file of sentence pairs?)")
            line = line.removesuffix(b"\n")
            if len(line) > MAX_LINE_BYTES:
                raise ValueError(f"{where}: expected a line of at most {MAX_LINE_BYTES} bytes, "
                                 f"got more (not a file of sentence pairs?)")
            pair = _pair(line, where, first=number == 1)
            if pair is not None:
                pairs.append(pair)
    if len(pairs) < min_pairs:
        raise ValueError(f"{name}: expected at least {min_pairs} pairs "
                         f"(some to train on, some to test on), got {len(pairs)}")
    return pairs


def _pair(line: bytes, where: str, first: bool) -> tuple[str, str] | None:
    """One line's (source, target), None for a blank line; ValueError naming ``where``."""
    nul = line.find(b"\0")
    if nul >= 0:
        raise ValueError(f"{where}: expected text, got the byte 0x00 at column {nul + 1} "
                         f"(a binary file?)")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{where}: expected UTF-8 text, got the byte "
                         f"{line[error.start]:#04x} at column {error.start + 1}") from None
    if first:
        text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    text = text.rstrip("\r")
    if not text.strip() and "\t" not in text:  # a line holding a tab is a pair, maybe empty
        return None
    parts = text.split("\t")
    if len(parts) < 2:
        raise ValueError(f"{where}: expected 'source<TAB>target', got no tab in {text!r:.60}")
    if len(parts) > 2:
        raise ValueError(f"{where}: expected one tab between source and target, got "
                         f"{len(parts) - 1} tabs")
    source, target = (normalize(part.strip()) for part in parts)
    for side, value in (("source", source), ("target", target)):
        tokens = words(value)
        if not tokens:
            raise ValueError(f"{where}: expected a non-empty {side}, got an empty one")
        if not any(unicodedata.category(char)[0] in "LNPS" for char in value):
            shown = " ".join(f"U+{ord(char):04X}" for char in value[:8])
            raise ValueError(f"{where}: expected a {side} with a visible character, got only "
                             f"invisible ones ({shown}: a zero-width or format character, a "
                             f"byte-order mark, a combining mark alone)")
        if len(tokens) > MAX_SENTENCE_TOKENS:
            raise ValueError(f"{where}: expected a {side} of at most {MAX_SENTENCE_TOKENS} "
                             f"tokens, got {len(tokens)} (every batch is sized for the "
                             f"longest sentence: split or drop this line)")
        special = special_token(tokens)
        if special is not None:
            raise ValueError(f"{where}: expected no special token, got {special!r}")
    return source, target


def build_vocab(sentences: Iterable[str], *, min_count: int = 1) -> Vocab:
    """The vocabulary of some sentences, keeping words seen at least ``min_count`` times.

    Rarer words are left out and encode as ``<unk>``. The four special tokens come first
    (``<pad>`` is id 0), then the kept words sorted by decreasing count, ties alphabetically:
    the same sentences in any order give the same vocabulary, of
    ``4 + number of distinct words seen >= min_count times`` tokens. With ``min_count=1`` it
    holds the same tokens as :meth:`Vocab.build` (in another order).

    Raises
    ------
    ValueError
        If ``min_count`` is not an integer >= 1, or a sentence is empty, not a str or has a
        special token as a word (the message gives the sentence's position).
    """
    check_int("min_count", min_count, low=1)
    counts: Counter[str] = Counter()
    for tokens in tokens_of(sentences):
        counts.update(tokens)
    kept = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return Vocab([*SPECIALS, *kept])


def split_pairs(pairs: Sequence[tuple[str, str]], *, test_fraction: float = 0.1,
                seed: int = 0) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(train_pairs, test_pairs): a seeded random share of the pairs held out as a test split.

    The test split has ``round(test_fraction * len(pairs))`` pairs, at least 1 and at most
    ``len(pairs) - 1``; both keep file order; the same pairs and seed give the same split on
    every machine (``random.Random(seed)``, no global state). Raises ValueError if
    ``test_fraction`` is outside (0, 1), ``seed`` is not an integer >= 0, or there are fewer
    than 2 pairs.
    """
    check_real("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True, high_open=True,
               what="a fraction")
    check_int("seed", seed, low=0)
    pairs = list(pairs)
    if len(pairs) < 2:
        raise ValueError(f"pairs: expected at least 2 pairs to split, got {len(pairs)}")
    n_test = min(max(round(test_fraction * len(pairs)), 1), len(pairs) - 1)
    held = set(random.Random(seed).sample(range(len(pairs)), n_test))
    train = [p for i, p in enumerate(pairs) if i not in held]
    test = [p for i, p in enumerate(pairs) if i in held]
    return train, test


def bleu(hypotheses: Sequence[str], references: Sequence[str], *,
         max_order: int = 4) -> float:
    """Corpus BLEU (0-100) of the hypotheses against one reference each, by sacreBLEU.

    sacreBLEU's defaults: 13a tokenization, n-grams up to ``max_order`` (4, the standard),
    case-sensitive, 'exp' smoothing (an n-gram order with no match counts 1/2, then 1/4, ... of
    a match). References shorter than ``max_order`` words hold no n-gram of that order, and
    BLEU is then 0 whatever the hypotheses: :func:`bleu_order` gives the order they allow.
    Raises ValueError if the two lists differ in length or are empty, or ``max_order`` is not
    1 to 4. Papineni et al. 2002; Post 2018 (sacreBLEU); paper §6.1 reports BLEU on newstest2014.
    """
    check_int("max_order", max_order, low=1, high=4)
    hypotheses, references = list(hypotheses), list(references)
    if not hypotheses or len(hypotheses) != len(references):
        raise ValueError(f"references: expected as many as the {len(hypotheses)} hypotheses "
                         f"(at least one), got {len(references)}")
    import sacrebleu
    return float(sacrebleu.BLEU(max_ngram_order=max_order).corpus_score(
        hypotheses, [references]).score)


def bleu_order(references: Sequence[str]) -> int:
    """The highest n-gram order, at most 4, that the references hold: the words (13a
    tokenization, as :func:`bleu` counts them) of the longest reference, at least 1."""
    import sacrebleu
    tokenize = sacrebleu.BLEU().tokenizer  # 13a, as corpus BLEU tokenizes
    return max(1, min(4, max((len(tokenize(r).split()) for r in references), default=1)))
