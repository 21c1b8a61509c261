"""A training objective beside translation: the encoder's output at "it" must name its noun.

The post's figure of "it" attending to "the animal" is a head of the encoder. Trained on
translation alone, our small models resolve the pronoun in the decoder instead (it reads the
noun's gender from its own French prefix), and no encoder head does it
(``benchmarks/coreference_heads.py``). This objective gives the encoder the reason: a linear
read-out of the encoder's output at "it" must name the word "it" refers to (its id in the source
vocabulary; :func:`illustrated.data.coreference_grammar.referent` finds it), and its
cross-entropy, times ``referent_weight``, is added to the translation loss
(``il.train(..., referent_weight=1.0)``). The read-out is not part of the Transformer: it lives
for one run and is dropped, so the trained model has the same weights, files and readers as any
other. Until then a training checkpoint keeps it, with its Adam state, so that a resumed run goes
on with it, and under torchrun its gradients are averaged over the processes as DDP averages the
model's (:mod:`illustrated.files.training_state`, :func:`illustrated.training.distributed.average_gradients`).

References: post "Self-Attention at a High Level" (what does "it" refer to?); auxiliary losses as
in Caruana 1997 ("Multitask learning").
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from ..data.coreference_grammar import referent
from .objective import IGNORE

__all__ = ["labels", "ReferentReadout", "ReferentObjective"]


def labels(sources: Sequence[str], src_ids: Sequence[Sequence[int]]) -> list:
    """Per source sentence, (position of "it", source id of its noun), or None for a sentence
    the coreference grammar does not cover; ``src_ids``: each sentence's ids, as the encoder
    reads them. The page's trainer reads the same labels (web_export, site/js/referent.js)."""
    out = []
    for source, ids in zip(sources, src_ids):
        found = referent(source)
        out.append(None if found is None else (found[0], ids[found[1]]))
    return out


class ReferentReadout(nn.Module):
    """A linear map from the encoder's output at "it" (d_model,) to scores over the source
    vocabulary (src_vocab_size,): which word does "it" refer to?"""

    def __init__(self, d_model: int, src_vocab_size: int) -> None:
        super().__init__()
        self.linear = nn.Linear(d_model, src_vocab_size)

    def forward(self, at_it: torch.Tensor) -> torch.Tensor:
        return self.linear(at_it)  # (n, src_vocab_size)


class ReferentObjective:
    """The objective for one training run: labels per pair, the read-out, the weight.

    ``labels[i]`` is (position of "it", id of its noun) for pair i, or None for a pair the
    coreference grammar does not cover (it then adds nothing). :meth:`targets` gives a batch's
    labels as tensors; :meth:`scores` reads the encoder's output it is handed (memory), as the
    page's engine does. Raises ValueError naming ``referent_weight`` if no pair has a pronoun
    and its referent.
    """

    def __init__(self, model: nn.Module, pairs: Sequence[tuple[str, str]], encoded: list,
                 weight: float, device: torch.device) -> None:
        self.weight = weight
        self.labels = labels([source for source, _ in pairs], [ids for ids, _ in encoded])
        if all(label is None for label in self.labels):
            raise ValueError(f"referent_weight: expected pairs whose source has 'it' and the noun "
                             f"it refers to (the coreference corpus) when > 0, got {weight} and "
                             f"none such among {len(pairs)} pairs")
        self.readout = ReferentReadout(model.cfg.d_model, model.cfg.src_vocab_size).to(device)

    def count(self, rows: Sequence[int]) -> int:
        """How many of the pairs ``rows`` (indices) are labelled."""
        return sum(self.labels[i] is not None for i in rows)

    def targets(self, rows: Sequence[int], device: torch.device | str | None = None,
                size: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(it, noun), int64 (size or len(rows),): each pair's position of "it" and the source id
        of its noun; 0 and ``IGNORE`` for an unlabelled pair or a row past ``rows``."""
        it = torch.zeros(size or len(rows), dtype=torch.int64)
        noun = torch.full((size or len(rows),), IGNORE, dtype=torch.int64)
        for b, i in enumerate(rows):
            if self.labels[i] is not None:
                it[b], noun[b] = self.labels[i]
        return it.to(device), noun.to(device)

    def scores(self, memory: torch.Tensor, it: torch.Tensor) -> torch.Tensor:
        """The read-out of ``memory`` (batch, src_len, d_model) at each sentence's "it" (``it``,
        (batch,) positions): scores over the source vocabulary, (batch, src_vocab_size), float32.
        :func:`~illustrated.training.objective.objective` takes their cross-entropy."""
        at_it = memory[torch.arange(memory.shape[0], device=memory.device), it]  # (batch, d_model)
        return self.readout(at_it).float()  # (batch, src_vocab_size)
