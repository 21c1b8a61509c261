"""Multi-head attention: several attention heads side by side, concatenated and mixed by W_O.

References: post "The Beast With Many Heads"; paper §3.2.2.
"""
from __future__ import annotations

import torch
from torch import nn

from ._checks import check_attention_inputs, check_attention_sizes
from .attend import Attend
from .dropout import Dropout
from .kv_cache import AttentionCache

__all__ = ["MultiHeadAttention"]


class MultiHeadAttention(nn.Module):
    """Project queries, keys and values once per head, attend in each head, concatenate, apply W_O.

    d_model; n_heads, a divisor of d_model (d_k = d_model / n_heads); dropout on the attention
    weights; bias of w_q, w_k, w_v, w_o, each nn.Linear(d_model, d_model): head h uses output
    rows h*d_k:(h+1)*d_k of w_q/w_k/w_v (the post's W_Q^h, W_K^h, W_V^h stacked).
    forward(query (batch, seq_q, d_model), key and value (batch, seq_k, d_model), mask bool
    broadcastable to (batch, n_heads, seq_q, seq_k), True = may attend) -> out (batch, seq_q,
    d_model), and the weights (batch, n_heads, seq_q, seq_k) with ``return_attention=True``.
    ``attend`` (:class:`~illustrated.modules.attend.Attend`) is the kernel; ``cache`` (decoding
    only, :class:`~illustrated.modules.kv_cache.AttentionCache`) keeps earlier steps' keys and
    values, so ``key``/``value`` hold only the new positions. ``standalone=False`` (the layers'
    attentions): forward trusts its inputs, which the model checked at its door.
    Raises TypeError (also a ValueError) for a size that is not an int, ``bias`` not a bool, an
    input not a float tensor of the module's dtype or a mask not bool; ValueError for sizes out
    of range, shapes or devices that do not fit, NaN inputs, or a query with no key allowed.
    Post "The Beast With Many Heads"; paper §3.2.2 (MultiHead(Q, K, V) = Concat(head_i) W_O).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True, *,
                 standalone: bool = True) -> None:
        super().__init__()
        check_attention_sizes(d_model, n_heads, dropout, bias, standalone)
        self.standalone = standalone  # False in a layer: its model checks inputs at its door
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = Dropout(dropout)
        self.attend = Attend()

    def check_inputs(self, query, key, value, mask, cache) -> None:
        """Check the inputs of an attention called on its own (``standalone``); a layer's
        attention skips it: its Transformer checked the model's inputs at its door."""
        if self.standalone:
            check_attention_inputs(self, query, key, value, mask, cache)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, seq, d_model) -> (batch, n_heads, seq, d_k): head h is columns h*d_k:(h+1)*d_k."""
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.n_heads, self.d_k).transpose(1, 2)  # (batch, n_heads, seq, d_k)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, return_attention: bool = False, *,
                cache: AttentionCache | None = None):
        self.check_inputs(query, key, value, mask, cache)  # a layer's attention trusts its model
        batch, seq_q, _ = query.shape
        q = self.split_heads(self.w_q(query))  # (batch, n_heads, seq_q, d_k)
        if cache is None:
            k = self.split_heads(self.w_k(key))  # (batch, n_heads, seq_k, d_k)
            v = self.split_heads(self.w_v(value))  # (batch, n_heads, seq_k, d_k)
        else:  # decoding: the keys and values kept from earlier steps, and the new ones
            k, v = cache.keys_values(self, key, value)  # (batch, n_heads, seq_k, d_k) each
        z, weights = self.attend(q, k, v, mask, self.dropout, return_attention=return_attention)
        concat = z.transpose(1, 2).reshape(batch, seq_q, self.d_model)  # (batch, seq_q, d_model)
        out = self.w_o(concat)  # (batch, seq_q, d_model)
        return (out, weights) if return_attention else out
