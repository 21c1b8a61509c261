"""Sinusoidal positional encoding, added to the embeddings.

Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .._args import check_int, check_size_limit
from ._checks import check_layout, check_positional_sizes, check_size
from .dropout import Dropout

__all__ = ["PositionalEncoding", "sinusoid_table"]


def sinusoid_table(n_positions: int, d_model: int, layout: str = "interleaved") -> torch.Tensor:
    """The table of positional vectors, one row per position: float32 (n_positions, d_model).

    layout: "interleaved" (paper §3.5: sin on even, cos on odd dimensions) or "concatenated"
    (tensor2tensor ``get_timing_signal_1d``, the post's figures: all sines, then all cosines,
    timescales geometric from 1 to 10^4 over d_model/2 - 1 steps).
    Raises TypeError (also a ValueError) if a size is not an int; ValueError if ``n_positions``
    is negative, ``d_model`` is not a positive even integer, or ``layout`` is unknown.
    Paper §3.5; tensor2tensor ``common_attention.get_timing_signal_1d``.
    """
    check_int("n_positions", n_positions, low=0)
    check_size("d_model", d_model, even=True)
    check_size_limit("n_positions", max(n_positions, 1) * d_model, "n_positions x d_model")
    check_layout(layout)
    half = d_model // 2
    position = torch.arange(n_positions, dtype=torch.float64)[:, None]  # (n_positions, 1)
    if layout == "interleaved":
        inv_freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2,
                                                                dtype=torch.float64) / d_model)
        angles = position * inv_freq  # (n_positions, half)
        table = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (n_positions, half, 2)
        table = table.reshape(n_positions, d_model)  # (n_positions, d_model)
    else:  # "concatenated" (checked above)
        increment = math.log(10000.0) / max(half - 1, 1)
        inv_timescales = torch.exp(-increment * torch.arange(half, dtype=torch.float64))
        angles = position * inv_timescales  # (n_positions, half)
        table = torch.cat([angles.sin(), angles.cos()], dim=-1)  # (n_positions, d_model)
    return table.float()


class PositionalEncoding(nn.Module):
    """Add to each position's vector a fixed pattern of sines and cosines that encodes the position.

    x (batch, seq, d_model) -> (batch, seq, d_model); d_model even; max_len: rows of the table;
    layout: see :func:`sinusoid_table`; dropout: on the sum (paper §5.4).
    ``start``: the position of ``x``'s first row (a decoding step with a KV cache feeds only
    the new positions); start + seq <= max_len, checked by the caller (the Transformer).
    Raises TypeError (also a ValueError) if a size is not an int; ValueError if ``d_model`` is
    not a positive even integer, ``max_len`` not positive, ``layout`` unknown or ``dropout``
    not in [0, 1).
    Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
    """

    def __init__(self, d_model: int, max_len: int, layout: str = "interleaved",
                 dropout: float = 0.0) -> None:
        super().__init__()
        check_positional_sizes(d_model, max_len, layout, dropout)
        self.d_model, self.max_len, self.layout = d_model, max_len, layout
        # Not persistent: the table is a function of the sizes, so checkpoints need not carry it.
        self.register_buffer("pe", sinusoid_table(max_len, d_model, layout), persistent=False)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor, *, start: int = 0) -> torch.Tensor:
        seq = x.shape[1]
        return self.dropout(x + self.pe[start:start + seq].to(x.dtype))  # (batch, seq, d_model)
