"""Multi-head attention: several attention heads side by side, concatenated and mixed by W_O.

References: post "The Beast With Many Heads"; paper §3.2.2.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ._checks import check_attention_inputs, check_attention_sizes, check_features
from .batched_attention import attend_keys_first, mask_bias, merge_heads, project_heads
from .self_attention import scaled_dot_product_attention

__all__ = ["MultiHeadAttention"]


class MultiHeadAttention(nn.Module):
    """Project queries, keys and values once per head, attend in each head, concatenate, apply W_O.

    Parameters
    ----------
    d_model : int, model width.
    n_heads : int, number of heads; must divide ``d_model`` (each head has d_k = d_model / n_heads).
    dropout : float, dropout on the attention weights.
    bias : bool, whether the four projections have biases.

    Attributes
    ----------
    w_q, w_k, w_v, w_o : nn.Linear(d_model, d_model). Head h uses output rows
        ``h*d_k:(h+1)*d_k`` of ``w_q``/``w_k``/``w_v`` (the post's W_Q^h, W_K^h, W_V^h stacked).

    Shapes
    ------
    forward(query (batch, seq_q, d_model), key (batch, seq_k, d_model),
            value (batch, seq_k, d_model), mask broadcastable to (batch, n_heads, seq_q, seq_k))
    -> out (batch, seq_q, d_model), and with ``return_attention=True`` also the weights
       (batch, n_heads, seq_q, seq_k).

    Three paths compute the same attention; ``forward`` picks one.

    * ``return_attention=True``: :meth:`attend_step_by_step`, the book's
      :func:`~illustrated.modules.self_attention.scaled_dot_product_attention` step by step
      (scores, -inf where masked, softmax, dropout on the weights, weights times values), which
      hands the weights back.
    * Otherwise, on a CPU: :meth:`attend_batched`, every head and sentence in a few batched
      products laid out for the CPU (:mod:`~illustrated.modules.batched_attention`).
    * Otherwise (CUDA, MPS): :meth:`attend_fused`,
      ``torch.nn.functional.scaled_dot_product_attention`` in one fused kernel.

    The three agree to rounding (tested to 1e-6 in float32 and 1e-12 in float64, gradients
    too). In train mode with dropout > 0 all three drop attention weights at the rate
    ``dropout``, but each draws its own random numbers, so they drop different weights.

    Raises
    ------
    TypeError
        If a size is not an int, ``bias`` not a bool, an input not a float tensor of the
        module's dtype, or the mask not a bool tensor (the error is also a ValueError).
    ValueError
        If a size is not positive, ``n_heads`` does not divide ``d_model``, ``dropout`` is not a
        rate in [0, 1), an input has the wrong shape or device, key and value lengths differ,
        or the mask does not broadcast to (batch, n_heads, seq_q, seq_k) or leaves a query
        with no key.

    References
    ----------
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
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, seq, d_model) -> (batch, n_heads, seq, d_k)."""
        check_features("x", x, self.d_model)
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.n_heads, self.d_k).transpose(1, 2)  # (batch, n_heads, seq, d_k)

    def project_qkv(self, query, key, value):
        """Q = query W_Q, K = key W_K, V = value W_V, each split into heads (batch, n_heads, seq, d_k)."""
        return (self.split_heads(self.w_q(query)), self.split_heads(self.w_k(key)),
                self.split_heads(self.w_v(value)))

    def concat_heads(self, z: torch.Tensor) -> torch.Tensor:
        """(batch, n_heads, seq, d_k) -> (batch, seq, d_model): the heads side by side."""
        batch, _, seq, _ = z.shape
        return z.transpose(1, 2).reshape(batch, seq, self.d_model)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, return_attention: bool = False):
        check_attention_inputs(self, query, key, value, mask)
        if return_attention:
            return self.attend_step_by_step(query, key, value, mask)
        if query.device.type == "cpu":
            return self.attend_batched(query, key, value, mask)
        return self.attend_fused(query, key, value, mask)

    def attend(self, query, key, value, batch, mask=None):
        """The fast path for the device on token rows, without checks (the layers call it after
        theirs): query (batch * seq_q, d_model), key and value (batch * seq_k, d_model)
        -> (batch * seq_q, d_model)."""
        if query.device.type == "cpu":
            return self.attend_rows(query, key, value, batch, mask)
        query, key, value = (t.view(batch, -1, self.d_model) for t in (query, key, value))
        return self.attend_fused(query, key, value, mask).view(-1, self.d_model)

    def attend_step_by_step(self, query, key, value, mask=None):
        """The book's path: -> (out (batch, seq_q, d_model), weights (batch, n_heads, seq_q, seq_k))."""
        q, k, v = self.project_qkv(query, key, value)  # (batch, n_heads, seq, d_k) each
        z, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
        return self.w_o(self.concat_heads(z)), weights  # (batch, seq_q, d_model), weights

    def attend_fused(self, query, key, value, mask=None):
        """``F.scaled_dot_product_attention`` in one call: -> (batch, seq_q, d_model)."""
        q, k, v = self.project_qkv(query, key, value)  # (batch, n_heads, seq, d_k) each
        p = self.dropout.p if self.training else 0.0  # mask already checked: True = may attend
        z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        return self.w_o(self.concat_heads(z))  # (batch, seq_q, d_model)

    def attend_batched(self, query, key, value, mask=None):
        """Every head and sentence at once, laid out for a CPU: -> (batch, seq_q, d_model).

        Self-attention (``query is key is value``) projects Q, K and V in one product, and
        cross-attention K and V in one; see :mod:`~illustrated.modules.batched_attention`.
        """
        batch, seq_q, d_model = query.shape
        q_rows = query.reshape(batch * seq_q, d_model)
        k_rows = q_rows if key is query else key.reshape(-1, d_model)
        v_rows = k_rows if value is key else value.reshape(-1, d_model)
        return self.attend_rows(q_rows, k_rows, v_rows, batch, mask).view(batch, seq_q, d_model)

    def attend_rows(self, query, key, value, batch, mask=None):
        """:meth:`attend_batched` on token rows (batch * seq, d_model): -> (batch * seq_q, d_model)."""
        wq, bq = self.w_q.weight, self.w_q.bias
        wk, bk, wv, bv = self.w_k.weight, self.w_k.bias, self.w_v.weight, self.w_v.bias
        heads = self.n_heads
        if query is key and key is value:
            q, k, v = project_heads(query, [wq, wk, wv], [bq, bk, bv], heads, batch)
        else:
            q, = project_heads(query, [wq], [bq], heads, batch)  # (n_heads * batch, seq_q, d_k)
            if key is value:
                k, v = project_heads(key, [wk, wv], [bk, bv], heads, batch)
            else:
                k, = project_heads(key, [wk], [bk], heads, batch)  # (n_heads * batch, seq_k, d_k)
                v, = project_heads(value, [wv], [bv], heads, batch)
        bias = None if mask is None else mask_bias(mask, heads, q.dtype)
        z = attend_keys_first(q, k, v, bias, self.dropout.p if self.training else 0.0)
        return self.w_o(merge_heads(z, batch))  # (batch * seq_q, d_model)
