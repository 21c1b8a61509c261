"""Token embeddings, scaled by sqrt(d_model).

References: post "Bringing The Tensors Into The Picture"; paper §3.4.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_token_ids

__all__ = ["Embeddings"]


class Embeddings(nn.Module):
    """Turn each word id into a vector of size ``d_model`` (a learned lookup table).

    Parameters
    ----------
    vocab_size : int, number of tokens.
    d_model : int, vector width.

    Shapes
    ------
    forward: ids (batch, seq) int64 -> (batch, seq, d_model)

    Raises
    ------
    ValueError
        If ``ids`` is not a 2-D integer tensor or holds an id outside [0, vocab_size).

    References
    ----------
    Post "Bringing The Tensors Into The Picture"; paper §3.4 (weights multiplied by sqrt(d_model)).
    """

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        self.lut = nn.Embedding(vocab_size, d_model)
        self.d_model = d_model
        self.scale = math.sqrt(d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        check_token_ids("ids", ids, self.lut.num_embeddings)
        return self.lut(ids) * self.scale  # (batch, seq, d_model)
