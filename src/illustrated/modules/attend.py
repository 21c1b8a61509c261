"""The attention kernel of every head at once: softmax(Q Kᵀ / sqrt(d_k)) V, by one of three.

Post "Matrix Calculation of Self-Attention"; paper §3.2.1, Eq. 1.
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from .batched_attention import attend_keys_first, fused_attention
from .self_attention import attend_step_by_step

__all__ = ["Attend", "kernel_for"]

#: A batched kernel: kernel(q, k, v, mask, dropout_p) -> z, as F.scaled_dot_product_attention.
Kernel = Callable[..., torch.Tensor]


def kernel_for(device: torch.device) -> Kernel:
    """The batched kernel for ``device``: keys-first on a CPU (fast for a sentence's short rows
    of scores), the fused one elsewhere. Both run on any device and agree to rounding."""
    return attend_keys_first if device.type == "cpu" else fused_attention


class Attend(nn.Module):
    """softmax(Q Kᵀ / sqrt(d_k)) V for every head and sentence, by one of three kernels.

    forward(q, k, v, mask=None, dropout=None, return_attention=False) -> (z, weights):
    q (batch, n_heads, seq_q, d_k), k and v (batch, n_heads, seq_k, d_k); mask bool,
    broadcastable to (batch, n_heads, seq_q, seq_k), True = may attend, checked by the caller;
    dropout: the attention's Dropout module (its rate, in train mode). z (batch, n_heads,
    seq_q, d_k); weights (batch, n_heads, seq_q, seq_k) with ``return_attention=True`` (the
    book's step-by-step kernel), else None (a batched kernel, which computes none).
    ``kernel``: the batched kernel, as ``F.scaled_dot_product_attention`` is called; None (the
    default) takes :func:`kernel_for` the device of ``q`` at each call. Set it to force one
    (a test runs the fused kernel on a CPU so). Paper §3.2.1, Eq. 1.
    """

    kernel: Kernel | None = None  # by the device of q

    def __init__(self, kernel: Kernel | None = None) -> None:
        super().__init__()
        if kernel is not None:
            self.kernel = kernel

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: torch.Tensor | None = None, dropout: nn.Module | None = None,
                return_attention: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        if return_attention:  # step by step, keeping the weights
            return attend_step_by_step(q, k, v, mask, dropout)
        kernel = self.kernel or kernel_for(q.device)
        p = dropout.p if dropout is not None and dropout.training else 0.0
        return kernel(q, k, v, mask, p), None  # (batch, n_heads, seq_q, d_k)
