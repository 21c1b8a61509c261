"""From sentence pairs to padded tensors for teacher forcing.

The decoder gets ``tgt_in = <bos> + target`` and must predict ``tgt_out = target + <eos>``: at
step ``t`` it sees the true words before ``t`` and predicts word ``t``. Shorter sentences of a
batch are filled with the vocabulary's ``<pad>`` id.
Post "The Decoder Side", "Recap Of Training"; paper §3.1 ("the output embeddings are offset by
one position"), §5.1 (batching).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import torch

from .vocab import Vocab

__all__ = ["Batch", "encode_pairs", "collate", "pair_widths", "token_epoch", "tokens_fit"]

Encoded = tuple[list[int], list[int]]


class Batch(NamedTuple):
    """One padded batch for teacher forcing: three int64 tensors (see :func:`collate`).

    src (batch, src_len), padded with ``src_vocab.pad_id``; tgt_in (batch, tgt_len), ``<bos>`` +
    target ids; tgt_out (batch, tgt_len), target ids + ``<eos>``; both padded with
    ``tgt_vocab.pad_id``; ``tgt_in[:, 1:] == tgt_out[:, :-1]`` where ``tgt_in`` is not padding.
    """

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor


def encode_pairs(
    pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab
) -> list[Encoded]:
    """(source ids, target ids) of each (source, target) sentence pair, words only.

    Returns per pair lists of (n_src_words,) and (n_tgt_words,) ids, no ``<bos>``/``<eos>``/
    ``<pad>``; unknown words become ``unk_id``.
    Raises ValueError if ``pairs`` is not a sequence of 2-tuples of non-empty str without special
    tokens as words (naming the pair's position), or a vocabulary is not a :class:`Vocab`.
    Post "Bringing The Tensors Into The Picture" (words become ids, then embeddings).
    """
    _check_vocabs(src_vocab, tgt_vocab)
    if isinstance(pairs, (str, bytes)):
        raise ValueError(f"pairs: got the str {pairs!r:.60}, expected a list of (source, target)")
    encoded = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(
                f"pairs: got {pair!r} at position {i}, expected a (source, target) pair"
            )
        try:
            encoded.append((src_vocab.encode(pair[0]), tgt_vocab.encode(pair[1])))
        except ValueError as err:
            raise ValueError(f"pairs: pair {i}: {err}") from None
    return encoded


def collate(
    encoded: Sequence[Encoded],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    device: torch.device | str | None = None,
) -> Batch:
    """Pad the pairs of :func:`encode_pairs` into one teacher-forcing :class:`Batch`.

    Returns src (batch, longest source); tgt_in, tgt_out (batch, longest target + 1), on
    ``device``.
    Raises ValueError if ``encoded`` is empty, an item is not a pair of non-empty id lists, or an
    id lies outside its vocabulary.
    Paper §3.1 (outputs shifted right), §5.1 (batches of sentence pairs); post "Recap Of
    Training".
    """
    _check_vocabs(src_vocab, tgt_vocab)
    if isinstance(encoded, (str, bytes)) or not isinstance(encoded, Sequence) or not encoded:
        raise ValueError(
            f"encoded: got {encoded!r:.60}, expected a non-empty list of (src, tgt) id lists"
        )
    for i, item in enumerate(encoded):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(
                f"encoded: got {item!r:.60} at position {i}, expected a (src, tgt) pair"
            )
        for side, ids, vocab in (("source", item[0], src_vocab), ("target", item[1], tgt_vocab)):
            if (
                not isinstance(ids, (list, tuple))
                or len(ids) == 0
                or not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < len(vocab)
                           for t in ids)
            ):
                raise ValueError(
                    f"encoded: got {side} {ids!r:.60} at position {i}, expected a non-empty "
                    f"list of int ids in [0, {len(vocab)})"
                )
    src_len = max(len(s) for s, _ in encoded)
    tgt_len = max(len(t) for _, t in encoded) + 1  # one more for <bos> / <eos>
    pad_src, pad_tgt = src_vocab.pad_id, tgt_vocab.pad_id
    src_rows = [[*s, *[pad_src] * (src_len - len(s))] for s, _ in encoded]
    in_rows = [[tgt_vocab.bos_id, *t, *[pad_tgt] * (tgt_len - len(t) - 1)] for _, t in encoded]
    out_rows = [[*t, tgt_vocab.eos_id, *[pad_tgt] * (tgt_len - len(t) - 1)] for _, t in encoded]
    src = torch.tensor(src_rows, dtype=torch.long, device=device)  # (batch, src_len)
    tgt_in = torch.tensor(in_rows, dtype=torch.long, device=device)  # (batch, tgt_len)
    tgt_out = torch.tensor(out_rows, dtype=torch.long, device=device)  # (batch, tgt_len)
    return Batch(src, tgt_in, tgt_out)


def pair_widths(encoded: Sequence[Encoded]) -> list[tuple[int, int]]:
    """Per pair of :func:`encode_pairs`, the positions it takes in a batch: (source words,
    target words + 1 for ``<bos>``/``<eos>``)."""
    return [(len(s), len(t) + 1) for s, t in encoded]


def tokens_fit(order: Sequence[int], widths: Sequence[tuple[int, int]], tokens_per_batch: int,
               at_least: int = 1) -> int:
    """How many pairs from the front of ``order`` make the next batch by tokens: those of the
    first pair's length (its longer side) that keep the padded batch within ``tokens_per_batch``
    source and as many target positions (pairs x longest source, pairs x longest target), and
    at least ``at_least`` (fewer only if ``order`` is shorter). ``widths``: :func:`pair_widths`.
    Paper §5.1."""
    longest = taken = 0
    for i in order:
        wider = max(longest, *widths[i])
        if taken >= at_least and ((taken + 1) * wider > tokens_per_batch
                                  or max(widths[i]) != max(widths[order[0]])):
            break
        longest, taken = wider, taken + 1
    return taken


def token_epoch(widths: Sequence[tuple[int, int]], tokens_per_batch: int,
                generator: torch.Generator) -> list[int]:
    """One epoch's order of the pairs for batches by tokens (paper §5.1): every pair once,
    sorted by length (pairs of one length in random order), cut into batches of one length and
    about ``tokens_per_batch`` tokens (:func:`tokens_fit`), the batches in random order,
    flattened.

    The batches are then read off the order with :func:`tokens_fit` from its front: a rest of
    the order (a resumed run's) gives the same batches. ``generator`` draws the randomness."""
    ranked = sorted(torch.randperm(len(widths), generator=generator).tolist(),
                    key=lambda i: (max(widths[i]), widths[i]))  # stable: ties stay shuffled
    batches = []
    while ranked:
        taken = tokens_fit(ranked, widths, tokens_per_batch)
        batches.append(ranked[:taken])
        ranked = ranked[taken:]
    return [i for b in torch.randperm(len(batches), generator=generator).tolist()
            for i in batches[b]]


def _check_vocabs(src_vocab: object, tgt_vocab: object) -> None:
    """ValueError naming the argument unless both vocabularies are Vocab."""
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if not isinstance(vocab, Vocab):
            raise ValueError(f"{name}: got {type(vocab).__name__}, expected a Vocab")
