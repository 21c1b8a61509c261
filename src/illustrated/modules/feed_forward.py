"""The position-wise feed-forward network.

References: post "Now We're Encoding!"; paper §3.3, Eq. 2.
"""
from __future__ import annotations

import torch
from torch import nn

__all__ = ["FeedForward"]


class FeedForward(nn.Module):
    """Two linear layers with a ReLU between, applied to every position separately and identically.

    Parameters
    ----------
    d_model : int, input and output width.   d_ff : int, inner width (paper: 2048).
    dropout : float, dropout after the ReLU.

    Attributes
    ----------
    linear1 : nn.Linear(d_model, d_ff).   linear2 : nn.Linear(d_ff, d_model).

    Shapes
    ------
    forward: x (batch, seq, d_model) -> (batch, seq, d_model)

    References
    ----------
    Post "Now We're Encoding!"; paper §3.3, Eq. 2: FFN(x) = max(0, x W_1 + b_1) W_2 + b_2.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))  # (batch, seq, d_model)
