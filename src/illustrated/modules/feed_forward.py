"""The position-wise feed-forward network.

Post "Now We're Encoding!"; paper §3.3, Eq. 2.
"""
from __future__ import annotations

import torch
from torch import nn

from ._checks import check_sizes
from .dropout import Dropout

__all__ = ["FeedForward"]


class FeedForward(nn.Module):
    """Two linear layers with a ReLU between, applied to every position separately and identically.

    ``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2``: linear1 (d_model -> d_ff), dropout after the ReLU,
    linear2 (d_ff -> d_model). x (batch, seq, d_model) -> (batch, seq, d_model).
    Raises TypeError / ValueError for a size that is not a positive int or a dropout outside
    [0, 1).
    Post "Now We're Encoding!"; paper §3.3, Eq. 2.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        check_sizes(d_model=d_model, d_ff=d_ff, dropout=dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))  # (batch, seq, d_model)
