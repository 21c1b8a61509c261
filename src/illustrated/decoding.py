"""Turning the model's output distributions into a translation: greedy decoding and beam search.

References: post "The Final Linear and Softmax Layer" and the end of "The Loss Function" (greedy
decoding, beam search with ``beam_size`` and ``top_beams``); paper §6.1 (beam size 4, length
penalty α = 0.6); Wu et al. 2016 (GNMT) §7 for the length penalty ((5 + len) / 6) ** α.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import torch

from .modules.transformer import Transformer

__all__ = ["EvalMode", "greedy_decode", "greedy_decode_batch", "beam_search", "length_penalty", "BeamStep",
           "prepare_source"]


def prepare_source(model: Transformer, src_ids: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """Check a 1-D sequence of source ids and return it as a (1, src_len) tensor on the model's device.

    Raises
    ------
    ValueError
        If ``src_ids`` is empty, not 1-D, longer than ``model.cfg.max_len`` or holds an id
        outside the source vocabulary.
    """
    src = torch.as_tensor(src_ids if isinstance(src_ids, torch.Tensor) else list(src_ids),
                          dtype=torch.long)
    if src.dim() != 1 or src.numel() == 0:
        raise ValueError(f"src_ids: expected a non-empty 1-D sequence of token ids, "
                         f"got shape {tuple(src.shape)}")
    if src.numel() > model.cfg.max_len:
        raise ValueError(f"src_ids: the sentence has {src.numel()} tokens, more than "
                         f"max_len={model.cfg.max_len}")
    bad = src[(src < 0) | (src >= model.cfg.src_vocab_size)]
    if bad.numel():
        raise ValueError(f"src_ids: token id {int(bad[0])} is outside the source vocabulary "
                         f"[0, {model.cfg.src_vocab_size})")
    return src[None].to(next(model.parameters()).device)  # (1, src_len)


def _check_decode_args(model: Transformer, bos_id: int, eos_id: int, max_len: int) -> None:
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        if not 0 <= value < model.cfg.tgt_vocab_size:
            raise ValueError(f"{name}: expected an id in [0, {model.cfg.tgt_vocab_size}), got {value}")
    if max_len < 1 or max_len >= model.cfg.max_len:
        raise ValueError(f"max_len: expected 1 <= max_len < model.cfg.max_len={model.cfg.max_len} "
                         f"(<bos> takes one position), got {max_len}")


def _next_log_probs(model: Transformer, tgt_in: torch.Tensor, memory: torch.Tensor,
                    src_mask: torch.Tensor, bos_id: int) -> torch.Tensor:
    """log_softmax of the last position's logits, with <bos> and <pad> made impossible afterwards.

    Shapes: tgt_in (n, t), memory (n, src_len, d_model) -> (n, tgt_vocab_size).
    """
    out = model.decode(tgt_in, memory, src_mask)  # (n, t, d_model)
    log_probs = model.generator(out[:, -1]).log_softmax(dim=-1)  # (n, tgt_vocab_size)
    log_probs[:, [bos_id, model.cfg.tgt_pad_id]] = float("-inf")
    return log_probs


class EvalMode:
    """Context manager: the model in eval mode (no dropout) and no gradients inside the block.

    The model's own mode (train or eval) is restored on the way out, even after an error, so a
    decoding call in the middle of training leaves training as it was.

    Parameters
    ----------
    model : torch.nn.Module

    Example
    -------
    >>> with EvalMode(model):
    ...     logits = model(src, tgt_in)

    Raises
    ------
    Nothing itself; errors inside the block propagate after the mode is restored.

    References
    ----------
    Inference in the paper (§6.1) uses no dropout; post "The Decoder Side".
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
                        max_len: int = 50) -> list[list[int]]:
    """Greedy decoding of a padded batch of sources at once (the fast path of :func:`exact_match`).

    Parameters
    ----------
    src : (batch, src_len) token ids padded with ``model.cfg.pad_id``.

    Returns
    -------
    One list of generated ids per sentence, without <bos>, ending with <eos> when it was produced.
    """
    _check_decode_args(model, bos_id, eos_id, max_len)
    with EvalMode(model):
        src = src.to(next(model.parameters()).device)
        src_mask = (src != model.cfg.pad_id)[:, None, None, :]  # (batch, 1, 1, src_len)
        memory = model.encode(src, src_mask)  # (batch, src_len, d_model)
        tgt = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            next_ids = _next_log_probs(model, tgt, memory, src_mask, bos_id).argmax(dim=-1)  # (batch,)
            tgt = torch.cat([tgt, next_ids[:, None]], dim=1)  # (batch, t + 1)
            done |= next_ids == eos_id
            if bool(done.all()):
                break
    results = []
    for row in tgt[:, 1:].tolist():
        results.append(row[:row.index(eos_id) + 1] if eos_id in row else row)
    return results


def greedy_decode(model: Transformer, src_ids: Sequence[int] | torch.Tensor, *, bos_id: int,
                  eos_id: int, max_len: int = 50) -> list[int]:
    """Pick the most probable word at every step, feeding each choice back in, until <eos>.

    Parameters
    ----------
    model : Transformer.   src_ids : 1-D sequence of source token ids.
    bos_id, eos_id : target vocabulary ids of <bos> and <eos>.
    max_len : int, most tokens generated, <eos> included.

    Returns
    -------
    list[int]: generated ids, without the leading <bos>, ending with <eos> when it was produced.
    <bos> and <pad> are never generated.

    Raises
    ------
    ValueError
        For an empty source, an id outside the vocabulary, a source longer than the model's
        ``max_len`` or a ``max_len`` the model cannot hold.

    References
    ----------
    Post "The Final Linear and Softmax Layer" and "The Loss Function" ("greedy decoding").
    """
    src = prepare_source(model, src_ids)  # (1, src_len)
    return greedy_decode_batch(model, src, bos_id=bos_id, eos_id=eos_id, max_len=max_len)[0]


def length_penalty(length: int, alpha: float) -> float:
    """GNMT length penalty ((5 + length) / 6) ** alpha; 1 when alpha = 0.

    References: Wu et al. 2016, Eq. 14; paper §6.1 uses alpha = 0.6.
    """
    return ((5.0 + length) / 6.0) ** alpha


class BeamStep(NamedTuple):
    """One step of beam search, for drawing the beam as a tree.

    Attributes
    ----------
    step : 1-based step number (number of generated tokens).
    candidates : list of (token_ids, log_prob) for every extension considered, best first;
        token_ids exclude <bos>.
    kept : list of token-id tuples kept alive after this step.
    finished : list of token-id tuples that ended with <eos> at this step.
    """

    step: int
    candidates: list[tuple[tuple[int, ...], float]]
    kept: list[tuple[int, ...]]
    finished: list[tuple[int, ...]]


def beam_search(model: Transformer, src_ids: Sequence[int] | torch.Tensor, *, bos_id: int,
                eos_id: int, beam_size: int = 4, top_beams: int = 1, max_len: int = 50,
                alpha: float = 0.0, return_steps: bool = False):
    """Keep the ``beam_size`` best partial translations at every step; return the ``top_beams`` best.

    At each step every live hypothesis is extended by every word; the candidates are ranked by
    their summed log-probability. Those among the best ``beam_size`` that end with <eos> are
    finished; the best ``beam_size`` that do not end with <eos> stay alive. All live hypotheses
    are decoded together as one batch. Search stops when no live hypothesis can still beat the
    ``top_beams``-th finished one, or after ``max_len`` tokens (unfinished hypotheses are then
    returned as they are).

    Parameters
    ----------
    model : Transformer.   src_ids : 1-D sequence of source ids.   bos_id, eos_id : target ids.
    beam_size : int >= 1, hypotheses kept alive (post: ``beam_size``).
    top_beams : int, 1 <= top_beams <= beam_size, translations returned (post: ``top_beams``).
    max_len : int, most tokens generated, <eos> included.
    alpha : float >= 0, GNMT length penalty exponent; score = sum of log-probs / ((5+len)/6)**alpha.
    return_steps : bool, also return the list of :class:`BeamStep` (the beam as a tree).

    Returns
    -------
    list of ``top_beams`` (token_ids, score), best first, token_ids without <bos>; with
    ``return_steps=True``, (that list, list of BeamStep).

    Raises
    ------
    ValueError
        If ``beam_size < 1``, ``top_beams`` is outside [1, beam_size], ``alpha < 0``, or the
        source is bad (see :func:`greedy_decode`).

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1; Wu et al. 2016 (GNMT) §7.
    """
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(f"beam_size: expected an integer >= 1, got {beam_size!r}")
    if not isinstance(top_beams, int) or not 1 <= top_beams <= beam_size:
        raise ValueError(f"top_beams: expected an integer in [1, beam_size={beam_size}], "
                         f"got {top_beams!r}")
    if alpha < 0:
        raise ValueError(f"alpha: expected a length-penalty exponent >= 0, got {alpha}")
    _check_decode_args(model, bos_id, eos_id, max_len)
    src = prepare_source(model, src_ids)  # (1, src_len)
    steps: list[BeamStep] = []
    finished: list[tuple[tuple[int, ...], float]] = []  # (token ids, length-penalised score)
    with EvalMode(model):
        src_mask = (src != model.cfg.pad_id)[:, None, None, :]  # (1, 1, 1, src_len)
        memory = model.encode(src, src_mask)  # (1, src_len, d_model)
        live: list[tuple[int, ...]] = [()]
        live_scores = torch.zeros(1, device=src.device)  # (n_live,)
        for step in range(1, max_len + 1):
            tgt = torch.tensor([[bos_id, *h] for h in live], device=src.device)  # (n_live, step)
            log_probs = _next_log_probs(model, tgt, memory.expand(len(live), -1, -1),
                                        src_mask, bos_id)  # (n_live, vocab)
            totals = (live_scores[:, None] + log_probs).flatten()  # (n_live * vocab,)
            n_cand = min(2 * beam_size, int(torch.isfinite(totals).sum()))
            top = totals.topk(n_cand)
            vocab = log_probs.shape[-1]
            candidates, kept, kept_scores, ended = [], [], [], []
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
            if step == max_len:  # out of room: unfinished hypotheses are returned as they are
                finished += [(h, s / length_penalty(step, alpha)) for h, s in zip(kept, kept_scores)]
                kept = []
            steps.append(BeamStep(step, candidates, list(kept), ended))
            if not kept:
                break
            live, live_scores = kept, torch.tensor(kept_scores, device=src.device)
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
