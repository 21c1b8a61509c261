"""Token embeddings, scaled by sqrt(d_model).

Post "Bringing The Tensors Into The Picture"; paper §3.4.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_sizes

__all__ = ["Embeddings"]


class Embeddings(nn.Module):
    """Turn each word id into a vector of size ``d_model`` (a learned lookup table).

    ids (batch, seq) int64 -> (batch, seq, d_model), multiplied by sqrt(d_model) (paper §3.4).
    Raises TypeError (also a ValueError) if a size is not an int; ValueError if it is not
    positive. The ids are trusted (the Transformer checks them at its door).
    Post "Bringing The Tensors Into The Picture"; paper §3.4.
    """

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        check_sizes(vocab_size=vocab_size, d_model=d_model)
        self.lut = nn.Embedding(vocab_size, d_model)
        self.d_model = d_model
        self.scale = math.sqrt(d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lut(ids) * self.scale  # (batch, seq, d_model)
