"""Multi-head attention: several attention heads side by side, concatenated and mixed by W_O.

References: post "The Beast With Many Heads"; paper §3.2.2.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ._checks import check_attention_inputs, check_attention_sizes
from .batched_attention import attend_keys_first
from .dropout import Dropout
from .kv_cache import AttentionCache, check_cached_mask
from .self_attention import scaled_dot_product_attention

__all__ = ["MultiHeadAttention", "batched_kernel"]


def batched_kernel(device: torch.device):
    """The attention kernel that ``MultiHeadAttention`` uses on ``device`` when no weights are
    asked for: :func:`~illustrated.modules.batched_attention.attend_keys_first` on a CPU,
    ``torch.nn.functional.scaled_dot_product_attention`` (one fused kernel) elsewhere. Both are
    called as ``kernel(q, k, v, mask, dropout_p)`` and run on any device (tested on the CPU)."""
    return attend_keys_first if device.type == "cpu" else F.scaled_dot_product_attention


def _stacked(*layers: nn.Linear) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The layers' weights one above the other, (n * d_out, d_in), and their biases (n * d_out,)."""
    bias = torch.cat([layer.bias for layer in layers]) if layers[0].bias is not None else None
    return torch.cat([layer.weight for layer in layers]), bias


class MultiHeadAttention(nn.Module):
    """Project queries, keys and values once per head, attend in each head, concatenate, apply W_O.

    d_model; n_heads, a divisor of d_model (each head has d_k = d_model / n_heads); dropout on
    the attention weights; bias of the four projections w_q, w_k, w_v, w_o, each
    nn.Linear(d_model, d_model): head h uses output rows h*d_k:(h+1)*d_k of w_q/w_k/w_v (the
    post's W_Q^h, W_K^h, W_V^h stacked).
    forward(query (batch, seq_q, d_model), key (batch, seq_k, d_model), value (batch, seq_k,
    d_model), mask broadcastable to (batch, n_heads, seq_q, seq_k), True = may attend)
    -> out (batch, seq_q, d_model), plus the weights (batch, n_heads, seq_q, seq_k) with
    ``return_attention=True``. The layers call it without; a forward pre-hook can ask for the
    weights (:func:`~illustrated.modules.recording.recording_attention` does).
    ``cache`` (an :class:`~illustrated.modules.kv_cache.AttentionCache`, decoding only): the keys
    and values of earlier calls, kept in it; ``key``/``value`` then hold only the new positions
    (a self-attention's cache grows by them) or are read once (a cross-attention's cache is
    filled at the first call and reused); seq_k counts every key kept. Paper §3.1, §3.2.3.

    ``forward`` calls w_q, w_k, w_v and w_o as modules, so that their hooks run; inside
    ``torch.compile``, where a hooked model never goes (:mod:`illustrated.training.captured_step`), the
    projections of one input are one product of the stacked weights (fewer, larger kernels; the
    same numbers to rounding). It picks the kernel
    between them, here only: with ``return_attention=True`` the book's step-by-step
    :func:`~illustrated.modules.self_attention.scaled_dot_product_attention`, which hands the
    weights back; otherwise every head and sentence in one batched kernel
    (:func:`batched_kernel`: keys-first on a CPU, ``F.scaled_dot_product_attention``
    elsewhere). They agree to rounding (tested to 1e-6 in float32 and 1e-12 in float64,
    gradients too); in train mode with dropout > 0 each drops weights at the rate ``dropout``
    with its own random numbers. ``check=False`` skips the input checks (a layer passes it).
    Raises TypeError (also a ValueError) if a size is not an int, ``bias`` not a bool, an input
    not a float tensor of the module's dtype or the mask not bool; ValueError if a size is not
    positive, ``n_heads`` does not divide ``d_model``, ``dropout`` is not in [0, 1), an input
    has the wrong shape or device, key and value lengths differ, or the mask does not
    broadcast to (batch, n_heads, seq_q, seq_k) or leaves a query with no key.
    Post "The Beast With Many Heads"; paper §3.2.2 (MultiHead(Q, K, V) = Concat(head_1..h) W_O).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        check_attention_sizes(d_model, n_heads, dropout, bias)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = Dropout(dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, seq, d_model) -> (batch, n_heads, seq, d_k): head h is columns h*d_k:(h+1)*d_k."""
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.n_heads, self.d_k).transpose(1, 2)  # (batch, n_heads, seq, d_k)

    def _stacked_projections(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        """(q, k, v) split into heads, the projections of one input as one matrix product with
        W_Q, W_K, W_V stacked (self-attention) or W_K, W_V (cross-attention): fewer, larger
        kernels, the same numbers to rounding (a compiled training step, where no hook runs)."""
        named = {"q": (query, self.w_q), "k": (key, self.w_k), "v": (value, self.w_v)}
        groups: list[list[str]] = []  # the projections that share an input, in order
        for name, (x, _) in named.items():
            same = next((g for g in groups if named[g[0]][0] is x), None)
            same.append(name) if same is not None else groups.append([name])
        out = {}
        for group in groups:
            weight, bias = _stacked(*(named[name][1] for name in group))
            projected = F.linear(named[group[0]][0], weight, bias)  # (batch, seq, len(group) * d_model)
            for name, part in zip(group, projected.split(self.d_model, dim=-1)):
                out[name] = self.split_heads(part)  # (batch, n_heads, seq, d_k)
        return out["q"], out["k"], out["v"]

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, return_attention: bool = False, *,
                check: bool = True, cache: AttentionCache | None = None):
        if check:
            check_attention_inputs(self, query, key, value, None if cache is not None else mask)
            if cache is not None:
                check_cached_mask(mask, cache, query, key, self.n_heads)
        if cache is None and torch.compiler.is_compiling():  # a compiled training step
            q, k, v = self._stacked_projections(query, key, value)
        else:
            q = self.split_heads(self.w_q(query))  # (batch, n_heads, seq_q, d_k)
            if cache is not None and cache.ready:  # cross-attention: the source's, computed once
                k, v = cache.k, cache.v  # (batch, n_heads, src_len, d_k) each
            else:
                k = self.split_heads(self.w_k(key))  # (batch, n_heads, seq_k, d_k)
                v = self.split_heads(self.w_v(value))  # (batch, n_heads, seq_k, d_k)
                if cache is not None:  # self-attention: after the earlier positions' keys and values
                    k, v = cache.append(k, v)  # (batch, n_heads, past + seq_k, d_k) each
        if return_attention:  # step by step, keeping the weights (batch, n_heads, seq_q, seq_k)
            z, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout, check=False)
        else:  # every head and sentence in one kernel; the mask was checked (True = may attend)
            if mask is not None and mask.dim() < 2:  # the fused kernel takes (..., seq_q, seq_k)
                mask = mask.view((1,) * (2 - mask.dim()) + tuple(mask.shape))  # (1, 1 or seq_k)
            kernel = batched_kernel(q.device)
            z = kernel(q, k, v, mask, self.dropout.p if self.training else 0.0)
        batch, _, seq_q, _ = z.shape
        concat = z.transpose(1, 2).reshape(batch, seq_q, self.d_model)  # (batch, seq_q, d_model)
        out = self.w_o(concat)  # (batch, seq_q, d_model)
        return (out, weights) if return_attention else out
