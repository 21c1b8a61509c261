"""Turning the model's output distributions into a translation: greedy decoding and beam search.

References: post "The Final Linear and Softmax Layer" and the end of "The Loss Function" (greedy
decoding, beam search with ``beam_size`` and ``top_beams``); paper §6.1 (beam size 4, length
penalty α = 0.6); Wu et al. 2016 (GNMT) §7 for the length penalty ((5 + len) / 6) ** α.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import NamedTuple

import numpy as np
import torch

from .._args import (ArgumentTypeError, check_bool, check_int, check_real,
                    describe)
from .._numpy import to_numpy
from ..modules._checks import check_source_ids
from ..modules.kv_cache import KVCache
from ..modules.transformer import Transformer, check_model

__all__ = ["EvalMode", "greedy_decode", "greedy_decode_batch", "beam_search",
           "length_penalty", "BeamStep", "GreedyStep", "prepare_source", "token_ids"]


def token_ids(value: object, name: str = "src_ids") -> torch.Tensor:
    """A 1-D sequence of token ids as an int64 tensor, no value changed; errors name ``name``.

    Accepts a list, tuple, range or other ordered iterable of integers (Python, NumPy, 0-d
    tensors), or an integer tensor or NumPy array. Refuses (ArgumentTypeError, also a
    ValueError) a str, a set or dict (no order), floats and bools (float ids would be
    truncated); ValueError for anything not 1-D or empty. Ranges are the caller's to check.
    """
    if isinstance(value, (str, bytes)):
        raise ArgumentTypeError(
            f"{name}: expected a 1-D sequence of int token ids, got the str {value!r:.40} "
            f"(turn a sentence into ids first: vocab.encode(sentence))")
    if isinstance(value, (torch.Tensor, np.ndarray)):
        dtype = value.dtype
        if dtype in (torch.bool, np.bool_) or (dtype.is_floating_point or dtype.is_complex
                                               if isinstance(dtype, torch.dtype)
                                               else not np.issubdtype(dtype, np.integer)):
            raise ArgumentTypeError(f"{name}: expected integer token ids, got dtype {dtype} "
                                    f"(float ids would be truncated)")
        ids = torch.as_tensor(value).long()
    else:
        if not isinstance(value, Iterable) or isinstance(value, (Set, Mapping)):
            raise ArgumentTypeError(f"{name}: expected a 1-D sequence of int token ids (a list, "
                                    f"tuple or tensor), got {type(value).__name__} "
                                    f"{describe(value)}")
        values = list(value)
        for i, item in enumerate(values):
            if isinstance(item, torch.Tensor) and item.dim() == 0 \
                    and not item.is_floating_point() and item.dtype != torch.bool:
                item = values[i] = int(item)
            if not isinstance(item, numbers.Integral) or isinstance(item, (bool, np.bool_)):
                raise ArgumentTypeError(f"{name}: expected int token ids, got {describe(item)} at "
                                        f"position {i}" + (" (float ids would be truncated)"
                                                           if isinstance(item, float) else ""))
        ids = torch.tensor([int(v) for v in values], dtype=torch.long)
    if ids.dim() != 1 or ids.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D sequence of token ids, "
                         f"got shape {tuple(ids.shape)}")
    return ids


def prepare_source(model: Transformer, src_ids: Sequence[int] | torch.Tensor, *,
                   name: str = "src_ids") -> torch.Tensor:
    """Check a 1-D sequence of source ids; return it as a (1, src_len) tensor on the model's device.

    Raises (messages naming ``name``) TypeError, also a ValueError, if ``model`` is not a
    Transformer or ``src_ids`` is not a sequence of integers (see :func:`token_ids`);
    ValueError if it is empty, not 1-D, longer than ``model.cfg.max_len``, or holds an id
    outside the source vocabulary or only padding.
    """
    check_model("model", model)
    src = token_ids(src_ids, name)  # (src_len,)
    check_source_ids(name, src, model.cfg, sentence=True)
    return src[None].to(next(model.parameters()).device)  # (1, src_len)


def _check_decode_args(model: Transformer, bos_id: int, eos_id: int, max_len: int) -> None:
    """The arguments every decoder shares, checked; ValueError/TypeError naming each."""
    check_model("model", model)
    size = model.cfg.tgt_vocab_size
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        check_int(name, value, low=0, high=size - 1,
                  what=f"an id of the target vocabulary (tgt_vocab_size={size})")
    if eos_id == bos_id:
        raise ValueError(f"eos_id: expected an id other than bos_id={bos_id} (<bos> is never "
                         f"generated, so <eos> could never end a hypothesis), got {eos_id}")
    if bos_id == model.cfg.tgt_pad_id:
        raise ValueError(f"bos_id: expected an id other than the padding id "
                         f"tgt_pad_id={model.cfg.tgt_pad_id} (the decoder would read <bos> as "
                         f"padding), got {bos_id}")
    if eos_id == model.cfg.tgt_pad_id:
        raise ValueError(f"eos_id: expected an id other than the padding id "
                         f"tgt_pad_id={model.cfg.tgt_pad_id} (<pad> is never generated), "
                         f"got {eos_id}")
    # Generating n tokens feeds the decoder at most n positions (<bos> and the first n - 1
    # tokens; the last one is never fed back), so max_len may equal the model's max_len.
    check_int("max_len", max_len, low=1, high=model.cfg.max_len,
              what="a number of generated tokens")


def _check_beam_args(model: Transformer, bos_id: int, eos_id: int, beam_size: int,
                     top_beams: int, max_len: int, alpha: float, return_steps: bool) -> None:
    """The arguments of :func:`beam_search`, checked; ValueError/TypeError naming each."""
    check_int("beam_size", beam_size, low=1)
    check_int("top_beams", top_beams, low=1, high=beam_size)
    check_real("alpha", alpha, low=0.0, what="a length-penalty exponent")
    check_bool("return_steps", return_steps)
    _check_decode_args(model, bos_id, eos_id, max_len)


class _Decoder:
    """One decoding call's model, encoded source and policy, shared by both paths. The decoding
    function checked the source and the target ids are its own choices, so the model's
    ``encode_unchecked`` and ``decode_unchecked`` run; a KV cache when asked and the model's
    decode is causal (``supports_kv_cache``); no source mask when the source has no padding
    (no key is hidden: the same numbers)."""

    def __init__(self, model: Transformer, src: torch.Tensor, bos_id: int, use_cache: bool,
                 max_len: int) -> None:
        self.model = model
        self.cache = KVCache(model.cfg.n_layers, capacity=max_len) \
            if use_cache and model.supports_kv_cache else None
        src_mask = (src != model.cfg.pad_id)[:, None, None, :]  # (batch, 1, 1, src_len)
        self.memory = model.encode_unchecked(src, src_mask)  # (batch, src_len, d_model)
        self.src_mask = None if bool(src_mask.all()) else src_mask
        self.banned = torch.tensor([bos_id, model.cfg.tgt_pad_id], device=src.device)

    def fed(self, step: int) -> int:
        """The first position step ``step`` (1-based) feeds: the newest with a cache, else 0."""
        return 0 if self.cache is None else step - 1

    def next_log_probs(self, tgt: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        """(n, vocab) log_softmax of the last position's logits, <bos> and <pad> then made
        impossible (the caller refuses NaN rows: :func:`_refuse_nan`). ``tgt`` (n, t - past):
        the positions after those cached (the whole prefix without a cache); memory (n,
        src_len, d_model)."""
        out = self.model.decode_unchecked(tgt, memory, self.src_mask,
                                          self.cache)  # (n, t - past, d_model)
        logits = self.model.generator(out.select(1, -1))  # (n, tgt_vocab_size)
        return logits.log_softmax(dim=-1).index_fill_(1, self.banned, float("-inf"))


def _refuse_nan(best: list[float]) -> None:
    """ValueError unless each row's best log-probability is finite. Log-probabilities are at
    most 0 and never all -inf, so only a NaN fails, and a NaN would win every argmax and top-k:
    a broken model must not look like a translation."""
    if not all(map(math.isfinite, best)):
        raise ValueError("model: its scores for the next token are NaN (non-finite weights, "
                         "or values so large that they overflow); nothing can be decoded")


class EvalMode:
    """Context manager: the model in eval mode (no dropout) and no gradients inside the block.

    The model's own mode (train or eval) is restored on the way out, even after an error, so a
    decoding call in the middle of training leaves training as it was.

    >>> with EvalMode(model):
    ...     logits = model(src, tgt_in)

    References: inference in the paper (§6.1) uses no dropout; post "The Decoder Side".
    """

    def __init__(self, model: torch.nn.Module) -> None:
        self.model, self.was_training = model, model.training
        self.no_grad = torch.no_grad()

    def __enter__(self) -> None:
        self.model.eval()
        self.no_grad.__enter__()

    def __exit__(self, *exc) -> None:
        self.no_grad.__exit__(*exc)
        self.model.train(self.was_training)


def greedy_decode_batch(model: Transformer, src: torch.Tensor, *, bos_id: int, eos_id: int,
                        max_len: int = 50, use_cache: bool = True) -> list[list[int]]:
    """Greedy decoding of a padded batch of sources at once (what :func:`exact_match` uses).

    ``src``: (batch, src_len) ids padded with ``model.cfg.pad_id``. Returns one list of
    generated ids per sentence, without <bos>, ending with <eos> when it was produced. Raises
    as :func:`greedy_decode` (TypeErrors are ValueErrors too), and for a row of padding only.
    ``use_cache``: as in :func:`greedy_decode`.
    """
    _check_decode_args(model, bos_id, eos_id, max_len)
    check_bool("use_cache", use_cache)
    check_source_ids("src", src, model.cfg)
    return _greedy(model, src, bos_id, eos_id, max_len, use_cache=use_cache)[0]


def _greedy(model: Transformer, src: torch.Tensor, bos_id: int, eos_id: int, max_len: int,
            keep_steps: bool = False, use_cache: bool = True
            ) -> tuple[list[list[int]], list[torch.Tensor]]:
    """Greedy decoding of a checked batch; also each step's (batch, vocab) log-probs if asked."""
    step_log_probs: list[torch.Tensor] = []
    with EvalMode(model), torch.inference_mode():
        src = src.to(next(model.parameters()).device)
        decoder = _Decoder(model, src, bos_id, use_cache, max_len)
        # <bos>, then the tokens chosen, written in place: (batch, 1 + max_len)
        tgt = torch.full((src.shape[0], 1 + max_len), bos_id, dtype=torch.long,
                         device=src.device)
        done = [False] * src.shape[0]
        for t in range(1, max_len + 1):
            log_probs = decoder.next_log_probs(tgt[:, decoder.fed(t):t],
                                               decoder.memory)  # (batch, vocab)
            if keep_steps:
                step_log_probs.append(log_probs)
            best, next_ids = log_probs.max(dim=-1)  # (batch,) each: the argmax and its score
            _refuse_nan(best.tolist())
            tgt.select(1, t).copy_(next_ids)
            done = [ended or i == eos_id for ended, i in zip(done, next_ids.tolist())]
            if all(done):
                break
    results = []
    for row in tgt[:, 1:t + 1].tolist():
        results.append(row[:row.index(eos_id) + 1] if eos_id in row else row)
    return results, step_log_probs


class GreedyStep(NamedTuple):
    """One step of greedy decoding, the counterpart of :class:`BeamStep`.

    ``step``: 1-based (tokens generated after it); ``token``: the id chosen, the argmax of
    ``log_probs``; ``log_prob``: ``log_probs[token]``; ``log_probs``: (tgt_vocab_size,)
    float64, the model's log_softmax for this position, <bos> and <pad> set to -inf afterwards.
    """

    step: int
    token: int
    log_prob: float
    log_probs: np.ndarray


def greedy_decode(model: Transformer, src_ids: Sequence[int] | torch.Tensor, *, bos_id: int,
                  eos_id: int, max_len: int = 50, return_steps: bool = False,
                  use_cache: bool = True):
    """Pick the most probable word at every step, feeding each choice back in, until <eos>.

    model: a Transformer; src_ids: 1-D sequence of source ids; bos_id, eos_id: target ids;
    max_len in [1, model.cfg.max_len]: most tokens generated, <eos> included; return_steps:
    also return a :class:`GreedyStep` per token; use_cache: keep each layer's keys and values
    between steps (:class:`~illustrated.modules.KVCache`; the same tokens and scores as
    without, which feeds the whole prefix at every step; ignored for a model whose
    ``supports_kv_cache`` is False).
    Returns the generated ids without <bos>, ending with <eos> when it was produced (<bos> and
    <pad> are never generated); with ``return_steps``, (ids, steps).
    Raises TypeError (also a ValueError) for an argument of the wrong type (a str, set or dict
    as the source, float ids); ValueError for an empty, padding-only, too long or
    out-of-vocabulary source, ``max_len`` out of range, ``bos_id``/``eos_id`` outside the
    target vocabulary or equal to each other or to the padding id, and a model whose scores
    are NaN ("model: its scores for the next token are NaN ...").
    Post "The Final Linear and Softmax Layer", "The Loss Function"; paper §3.1, §3.2.3.
    """
    src = prepare_source(model, src_ids)  # (1, src_len)
    _check_decode_args(model, bos_id, eos_id, max_len)
    check_bool("return_steps", return_steps)
    check_bool("use_cache", use_cache)
    outputs, step_log_probs = _greedy(model, src, bos_id, eos_id, max_len, return_steps,
                                      use_cache)
    if not return_steps:
        return outputs[0]
    steps = []
    for step, (token, log_probs) in enumerate(zip(outputs[0], step_log_probs), start=1):
        row = to_numpy(log_probs[0])  # (vocab,)
        steps.append(GreedyStep(step, token, float(row[token]), row))
    return outputs[0], steps


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's length penalty ``((5 + length) / 6) ** alpha``, a ratio >= 1: beam search divides a
    hypothesis's summed log-probability by it so that longer translations are not ruled out.

    ``length``: int >= 0, tokens generated (<eos> included); ``alpha``: finite float >= 0 (0
    gives 1; the paper uses 0.6). ValueError otherwise (a wrong type is also a TypeError).
    Wu et al. 2016 (GNMT) §7, Eq. 14; paper §6.1.
    """
    length = check_int("length", length, low=0)
    alpha = check_real("alpha", alpha, low=0.0, what="a length-penalty exponent")
    return ((5.0 + length) / 6.0) ** alpha


class BeamStep(NamedTuple):
    """One step of beam search, for drawing the beam as a tree.

    ``step``: 1-based (tokens generated); ``candidates``: every extension considered as
    (token_ids without <bos>, summed log-prob), best first; ``kept``: token-id tuples alive
    after this step; ``finished``: those that ended with <eos> at this step.
    """

    step: int
    candidates: list[tuple[tuple[int, ...], float]]
    kept: list[tuple[int, ...]]
    finished: list[tuple[int, ...]]


def beam_search(model: Transformer, src_ids: Sequence[int] | torch.Tensor, *, bos_id: int,
                eos_id: int, beam_size: int = 4, top_beams: int = 1, max_len: int = 50,
                alpha: float = 0.0, return_steps: bool = False, use_cache: bool = True):
    """Keep the ``beam_size`` best partial translations at every step; return the ``top_beams`` best.

    Every live hypothesis is extended by every word and the candidates ranked by summed
    log-probability: those among the best ``beam_size`` that end with <eos> finish, the best
    ``beam_size`` others stay alive (decoded together as one batch). The search stops when no
    live hypothesis can beat the ``top_beams``-th finished one, or after ``max_len`` tokens.
    beam_size >= 1; top_beams in [1, beam_size]; alpha >= 0, finite: the GNMT length penalty,
    score = sum of log-probs / ((5 + len) / 6) ** alpha; return_steps: also the beam as a tree
    (:class:`BeamStep` list); other arguments as in :func:`greedy_decode` (with the cache,
    each step's rows are reordered to follow the hypotheses kept).
    Returns ``top_beams`` (token_ids without <bos>, score), best first.
    Raises TypeError (also a ValueError) for a wrong type; ValueError for ``beam_size``,
    ``top_beams`` or ``alpha`` out of range, and as :func:`greedy_decode` for the rest.
    Post, end of "The Loss Function"; paper §6.1; Wu et al. 2016 (GNMT) §7.
    """
    _check_beam_args(model, bos_id, eos_id, beam_size, top_beams, max_len, alpha, return_steps)
    check_bool("use_cache", use_cache)
    src = prepare_source(model, src_ids)  # (1, src_len)
    steps: list[BeamStep] = []
    finished: list[tuple[tuple[int, ...], float]] = []  # (token ids, length-penalised score)
    with EvalMode(model), torch.inference_mode():
        decoder = _Decoder(model, src, bos_id, use_cache, max_len)
        cache, memory = decoder.cache, decoder.memory  # memory (1, src_len, d_model)
        live: list[tuple[int, ...]] = [()]
        live_scores = torch.zeros(1, device=src.device)  # (n_live,)
        for step in range(1, max_len + 1):
            # the positions fed: the whole prefix (n_live, step), or the newest (n_live, 1)
            tgt = torch.tensor([[bos_id, *h][decoder.fed(step):] for h in live],
                               device=src.device)
            log_probs = decoder.next_log_probs(tgt, memory.expand(len(live), -1, -1))
            _refuse_nan(log_probs.amax(dim=-1).tolist())
            totals = (live_scores[:, None] + log_probs).flatten()  # (n_live * vocab,)
            n_cand = min(2 * beam_size, int(torch.isfinite(totals).sum()))
            top = totals.topk(n_cand)
            vocab = log_probs.shape[-1]
            candidates, kept, kept_scores, ended, parents = [], [], [], [], []
            for rank, (score, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
                hyp = live[flat // vocab] + (flat % vocab,)
                candidates.append((hyp, score))
                if hyp[-1] == eos_id:
                    if rank < beam_size:
                        ended.append(hyp)
                        finished.append((hyp, score / length_penalty(step, alpha)))
                elif len(kept) < beam_size:
                    kept.append(hyp)
                    kept_scores.append(score)
                    parents.append(flat // vocab)
            if step == max_len:  # out of room: unfinished hypotheses are returned as they are
                finished += [(h, s / length_penalty(step, alpha)) for h, s in zip(kept, kept_scores)]
                kept = []
            steps.append(BeamStep(step, candidates, list(kept), ended))
            if not kept:
                break
            live, live_scores = kept, torch.tensor(kept_scores, device=src.device)
            if cache is not None:  # each kept hypothesis takes its parent's keys and values
                cache.reorder(torch.tensor(parents, device=src.device))
            if len(finished) >= top_beams:
                # log-probs only fall as a hypothesis grows, and the penalty is largest at max_len,
                # so no live hypothesis can end with a score above this bound.
                bound = max(kept_scores) / length_penalty(max_len, alpha)
                kth_best = sorted((s for _, s in finished), reverse=True)[top_beams - 1]
                if bound < kth_best:
                    break
    best = sorted(finished, key=lambda item: item[1], reverse=True)[:top_beams]
    results = [(list(h), s) for h, s in best]
    return (results, steps) if return_steps else results
