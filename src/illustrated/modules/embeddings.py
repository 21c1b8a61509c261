"""Token embeddings, scaled by sqrt(d_model).

Post "Bringing The Tensors Into The Picture"; paper §3.4.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_sizes, check_token_ids

__all__ = ["Embeddings"]


class Embeddings(nn.Module):
    """Turn each word id into a vector of size ``d_model`` (a learned lookup table).

    ids (batch, seq) int64 -> (batch, seq, d_model), multiplied by sqrt(d_model) (paper §3.4).
    Raises TypeError (also a ValueError) if a size is not an int or ``ids`` not an int64/int32
    tensor; ValueError if a size is not positive, or ``ids`` is not (batch, seq) with both >= 1,
    lies on another device than the table, or holds an id outside [0, vocab_size)
    (``check=False`` skips the checks of ``ids``).
    Post "Bringing The Tensors Into The Picture"; paper §3.4.
    """

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        check_sizes(vocab_size=vocab_size, d_model=d_model)
        self.lut = nn.Embedding(vocab_size, d_model)
        self.d_model = d_model
        self.scale = math.sqrt(d_model)

    def forward(self, ids: torch.Tensor, *, check: bool = True) -> torch.Tensor:
        if check:  # the Transformer passes check=False: it checked the ids
            check_token_ids("ids", ids, self.lut.num_embeddings, device=self.lut.weight.device)
        return self.lut(ids) * self.scale  # (batch, seq, d_model)
