"""Attention for every head and sentence at once, without the weights: the batched kernels.

:func:`attend_keys_first` lays the scores out key-first, so that the softmax over keys runs
along a long stride (fast on a CPU for rows as short as a sentence), with the scaling and the
mask (an additive bias) entering the scores in one operation. :func:`fused_attention` is
``torch.nn.functional.scaled_dot_product_attention``, one fused kernel. Both equal the book's
step-by-step :func:`~illustrated.modules.self_attention.scaled_dot_product_attention` to
rounding, gradients too. Post "Matrix Calculation of Self-Attention"; paper §3.2.1 (Eq. 1).
"""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

__all__ = ["attend_keys_first", "fused_attention", "mask_bias"]


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    mask: torch.Tensor | None = None, dropout_p: float = 0.0) -> torch.Tensor:
    """``F.scaled_dot_product_attention``, taking a mask of any number of dimensions that
    broadcasts to (batch, n_heads, seq_q, seq_k), as :func:`attend_keys_first` does.
    q (batch, n_heads, seq_q, d_k), k and v (batch, n_heads, seq_k, d_k) -> z (batch, n_heads,
    seq_q, d_k). Paper §3.2.1, Eq. 1."""
    if mask is not None and mask.dim() < 2:  # the fused kernel takes (..., seq_q, seq_k)
        mask = mask.view((1,) * (2 - mask.dim()) + tuple(mask.shape))  # (1, 1 or seq_k)
    return F.scaled_dot_product_attention(q, k, v, mask, dropout_p)


def mask_bias(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask as the additive bias of key-first scores.

    mask: bool, broadcastable to (batch, n_heads, seq_q, seq_k); True = may attend.
    Returns the bias (.., seq_k or 1, seq_q or 1), as many dimensions as the mask and at least
    2, of ``dtype``: 0 where the query may attend to the key, -inf where not (exp(-inf) = 0, so
    the softmax gives that key no weight). It holds only the mask's own entries: a padding mask
    (batch, 1, 1, seq_k) is not copied for every head and query.
    """
    mask = mask.view((1,) * (2 - mask.dim()) + tuple(mask.shape))  # (..., seq_q or 1, seq_k or 1)
    key_first = mask.transpose(-2, -1)  # (..., seq_k or 1, seq_q or 1), a view
    bias = torch.full(key_first.shape, float("-inf"), dtype=dtype, device=mask.device)
    return bias.masked_fill_(key_first, 0.0)  # (..., seq_k, seq_q), laid out as the scores


def attend_keys_first(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      mask: torch.Tensor | None = None, dropout_p: float = 0.0) -> torch.Tensor:
    """softmax(Q Kᵀ / sqrt(d_k)) V for every sentence and head, the scores laid out key-first.

    Called as ``torch.nn.functional.scaled_dot_product_attention`` is, with the same result:
    q (batch, n_heads, seq_q, d_k), k and v (batch, n_heads, seq_k, d_k); mask None or bool,
    broadcastable to (batch, n_heads, seq_q, seq_k), True = may attend, no query row all False
    (the caller checked it); dropout_p on the weights (0 outside training).
    Returns z (batch, n_heads, seq_q, d_k). One query a head (a decoding step with a KV
    cache) has no short rows to lay out: :func:`fused_attention` computes it. Paper §3.2.1, Eq. 1.
    """
    batch, n_heads, seq_q, d_k = q.shape
    if seq_q == 1:  # one row of scores over the keys a head
        return fused_attention(q, k, v, mask, dropout_p)  # (batch, n_heads, 1, d_k)
    seq_k = k.shape[2]
    q = q.reshape(batch * n_heads, seq_q, d_k)  # (batch * n_heads, seq_q, d_k), a copy
    k = k.reshape(batch * n_heads, seq_k, d_k)  # (batch * n_heads, seq_k, d_k), a copy
    v = v.reshape(batch * n_heads, seq_k, d_k)  # (batch * n_heads, seq_k, d_k), a copy
    scores = torch.bmm(k, q.transpose(1, 2))  # (batch * n_heads, seq_k, seq_q): key-first
    scores = scores.view(batch, n_heads, seq_k, seq_q)  # (batch, n_heads, seq_k, seq_q)
    if mask is None:
        scores = scores.mul_(1.0 / math.sqrt(d_k))  # in place: the product keeps no copy of it
    else:  # bias + scores / sqrt(d_k) in one pass, the bias broadcast over heads and sentences
        scores = torch.add(mask_bias(mask, scores.dtype), scores, alpha=1.0 / math.sqrt(d_k))
    keys_outermost = scores.movedim(2, 0)  # (seq_k, batch, n_heads, seq_q), a view
    weights = keys_outermost.softmax(dim=0)  # over keys, along a long stride; a contiguous copy
    if dropout_p > 0:
        weights = F.dropout(weights, dropout_p)
    weights = weights.view(seq_k, batch * n_heads, seq_q).permute(1, 2, 0)  # (batch * n_heads, seq_q, seq_k)
    z = torch.bmm(weights, v)  # (batch * n_heads, seq_q, d_k)
    return z.view(batch, n_heads, seq_q, d_k)  # (batch, n_heads, seq_q, d_k)
