"""Using a trained model: translating sentences, and scoring translations by exact match.

References: post "The Final Linear and Softmax Layer" (a translation word by word) and the end of
"The Loss Function" (greedy decoding and beam search); paper §6.1.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import torch

from .._args import ArgumentTypeError, check_int, check_pairs, describe
from ..data import Vocab, detokenize, tokenize
from ..data.vocab import check_vocab_fits
from .decoding import beam_search, greedy_decode_batch
from ..modules.transformer import check_model
from ..modules.transformer import Transformer

__all__ = ["translate", "exact_match", "expected_translation"]


def translate(model: Transformer, sentences: str | Sequence[str], src_vocab: Vocab,
              tgt_vocab: Vocab, *, beam_size: int = 1, max_len: int | None = None
              ) -> str | list[str]:
    """Translate one sentence, or a list of them, with greedy decoding (``beam_size=1``, batched)
    or beam search.

    Parameters
    ----------
    model : Transformer.   src_vocab, tgt_vocab : its vocabularies.
    sentences : a str (one sentence) or a list of str.
    beam_size : int >= 1 (1 = greedy).   max_len : generated tokens at most, in
        [1, cfg.max_len]; default ``cfg.max_len - 1``.

    Returns
    -------
    The translation (special tokens dropped): a str for a str, a list of str for a list (an
    empty list for an empty list).

    Raises
    ------
    TypeError
        If an argument has the wrong type, e.g. bytes or a number for ``sentences``; the error
        is also a ValueError.
    ValueError
        For an empty sentence or one longer than the model's ``max_len``, vocabularies that do
        not fit the model, or a bad ``beam_size`` or ``max_len`` (see :func:`beam_search`).
    """
    check_model("model", model)
    if isinstance(sentences, str):
        return translate(model, [sentences], src_vocab, tgt_vocab, beam_size=beam_size,
                         max_len=max_len)[0]
    if isinstance(sentences, bytes) or not isinstance(sentences, Iterable):
        raise ArgumentTypeError(f"sentences: expected a str sentence or a list of them, got "
                                f"{type(sentences).__name__} {describe(sentences)}")
    sentences = list(sentences)
    check_vocab_fits("src_vocab", src_vocab, model.cfg.src_vocab_size, model.cfg.pad_id)
    check_vocab_fits("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size, model.cfg.tgt_pad_id)
    check_int("beam_size", beam_size, low=1)
    if max_len is None:  # not `max_len or ...`: max_len=0 is an error, not the default
        max_len = model.cfg.max_len - 1
    check_int("max_len", max_len, low=1, high=model.cfg.max_len,
              what="a number of generated tokens")
    if not sentences:
        return []
    encoded = []
    for i, sentence in enumerate(sentences):
        try:
            encoded.append(src_vocab.encode(sentence))
        except ValueError as error:
            raise ValueError(f"sentences: sentence {i}: {error}") from None
    for sentence, ids in zip(sentences, encoded):
        if len(ids) > model.cfg.max_len:
            raise ValueError(f"sentences: {sentence!r:.60} has {len(ids)} tokens, more than "
                             f"max_len={model.cfg.max_len}")
    if beam_size == 1:
        src = torch.nn.utils.rnn.pad_sequence([torch.tensor(ids) for ids in encoded],
                                              batch_first=True, padding_value=src_vocab.pad_id)
        outputs = greedy_decode_batch(model, src, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                      max_len=max_len)
    else:
        outputs = [beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                               beam_size=beam_size, max_len=max_len)[0][0] for ids in encoded]
    return [tgt_vocab.decode(ids) for ids in outputs]


def exact_match(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                tgt_vocab: Vocab, *, beam_size: int = 1) -> float:
    """Share of pairs whose translation equals the target exactly (token by token), in [0, 1].

    The target is compared as written (:func:`expected_translation`): a word missing from
    ``tgt_vocab`` counts as wrong, it is not dropped from the target.

    Raises
    ------
    TypeError
        If an argument has the wrong type (the error is also a ValueError).
    ValueError
        If ``pairs`` is empty or holds something other than (source, target) sentence pairs,
        or as :func:`translate`.
    """
    pairs = check_pairs(pairs)
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"pairs: expected (source, target) pairs, got {describe(pair)} "
                             f"at position {i}")
    predictions = translate(model, [s for s, _ in pairs], src_vocab, tgt_vocab, beam_size=beam_size)
    targets = [expected_translation(t) for _, t in pairs]
    return sum(p == t for p, t in zip(predictions, targets)) / len(pairs)


def expected_translation(target: str) -> str:
    """A target sentence as a right translation spells it: its words, tokenized and joined.

    Every word of the target stays, also those missing from the target vocabulary: the model
    cannot write them (it writes ``<unk>``, dropped from its output, or another word), so a
    translation of a sentence with such a word never matches, as it is not right.

    Raises
    ------
    ValueError
        If ``target`` is not a str or holds no word.
    """
    return detokenize(tokenize(target))
