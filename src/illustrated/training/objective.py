"""The training objective, once for the eager step and the compiled one: teacher-forced
cross-entropy per target token (label smoothing, padding ignored), the token accuracy, and the
optional "it" term (:mod:`illustrated.training.referent`), which reads the encoder's output.

Post "Recap Of Training" and "The Loss Function"; paper §5.4 (label smoothing).
"""
from __future__ import annotations

import contextlib
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F

__all__ = ["Objective", "objective", "IGNORE"]

#: The noun of a sentence the "it" term does not read (no pronoun, or a padded row).
IGNORE = -100


class Objective(NamedTuple):
    """One forward pass's terms: ``loss`` the mean cross-entropy per target token (nats, label
    smoothing included), ``correct`` the target tokens whose argmax is right (no gradient),
    ``it`` the weighted mean cross-entropy of the "it" read-out over the labelled sentences (0
    without the objective or a labelled sentence)."""

    loss: torch.Tensor
    correct: torch.Tensor
    it: torch.Tensor


def objective(forward: Callable, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor,
              *, pad_id: int, label_smoothing: float = 0.0, bf16: bool = False,
              referent=None, it: torch.Tensor | None = None,
              noun: torch.Tensor | None = None) -> Objective:
    """The terms of one (micro-)batch.

    forward(src, tgt_in) -> (logits (batch, tgt_len, tgt_vocab_size), memory (batch, src_len,
    d_model)); src (batch, src_len), tgt_in and tgt_out (batch, tgt_len) ids, ``pad_id`` the
    target padding (ignored); ``bf16``: the forward pass and the loss under bfloat16 autocast.
    referent (a :class:`~illustrated.training.referent.ReferentObjective`, or None), it and
    noun (batch,) int64: each sentence's position of "it" and the source id of its noun,
    ``IGNORE`` where it has none. Paper §5.4; post "The Loss Function".
    """
    precision = torch.autocast(src.device.type, dtype=torch.bfloat16) if bf16 \
        else contextlib.nullcontext()
    with precision:
        logits, memory = forward(src, tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_id,
                               label_smoothing=label_smoothing)
    with torch.no_grad():
        correct = ((logits.argmax(-1) == tgt_out) & (tgt_out != pad_id)).sum()
    if referent is None:
        return Objective(loss, correct, loss.new_zeros(()))
    scores = referent.scores(memory, it)  # (batch, src_vocab_size): which noun does "it" name?
    total = F.cross_entropy(scores, noun, ignore_index=IGNORE, reduction="sum")
    labelled = (noun != IGNORE).sum().clamp(min=1)  # the mean over labelled sentences only
    return Objective(loss, correct, referent.weight * total / labelled)
