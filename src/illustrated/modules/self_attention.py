"""Scaled dot-product attention, the core of self-attention, for batched torch tensors.

Post "Self-Attention in Detail", "Matrix Calculation of Self-Attention"; paper §3.2.1, Eq. 1.
"""
from __future__ import annotations

import math

import torch

from ._checks import check_sdpa_inputs

__all__ = ["scaled_dot_product_attention", "attend_step_by_step"]


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None,
                                 dropout: torch.nn.Module | None = None
                                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ / sqrt(d_k)) V: each query scores every key, and the scores weight the values.

    q (..., seq_q, d_k), k (..., seq_k, d_k), v (..., seq_k, d_v); mask: bool, broadcastable to
    (..., seq_q, seq_k), True = may attend (masked scores become -inf before the softmax).
    dropout: on the attention weights; paper §5.4 drops sub-layer outputs, dropping the weights
    is the common practice (torch, tensor2tensor).
    Returns (z (..., seq_q, d_v), weights (..., seq_q, seq_k)), rows of weights summing to 1.
    Raises TypeError / ValueError if q, k, v are not float tensors of one dtype and device with
    shapes that fit (d_k and seq_k at least 1), or the mask is not bool, does not broadcast to
    (..., seq_q, seq_k) or leaves a query with no key.
    Post "Matrix Calculation of Self-Attention"; paper §3.2.1, Eq. 1.
    """
    check_sdpa_inputs(q, k, v, mask)
    return attend_step_by_step(q, k, v, mask, dropout)


def attend_step_by_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                        mask: torch.Tensor | None = None, dropout: torch.nn.Module | None = None
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`scaled_dot_product_attention` for inputs the caller checked (the attention's
    kernel; a value check would also stop ``torch.export``)."""
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., seq_q, seq_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # (..., seq_q, seq_k)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v, weights  # (..., seq_q, d_v), (..., seq_q, seq_k)
