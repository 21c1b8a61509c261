"""Multi-head attention for every head and sentence at once, laid out for speed on a CPU.

The book's :func:`~illustrated.modules.self_attention.scaled_dot_product_attention` computes
softmax(Q Kᵀ / sqrt(d_k)) V step by step, as the post draws it. Training and inference do not
need the weights afterwards, and on a CPU three things cost more than the arithmetic for the
book's short sentences (measured in ``benchmarks/throughput.py``; issues 14 and 21):

* PyTorch's softmax over rows as short as a sentence is slow on AVX-512 machines (a
  (256, 10, 10) block: 324 µs along the last dimension against 24 µs along a dimension with a
  long stride), and its fused ``scaled_dot_product_attention`` kernel is as slow (420 µs);
* splitting Q, K and V into heads is a transpose, and every transpose is a copy;
* three small matrix products cost more than one of the three stacked, and every extra small
  operation (scaling a weight, building a full-size mask) costs a pass and a node of autograd.

So here the projections that share an input are stacked into one matrix product whose output
is split into heads with one copy, the scores are laid out key-first so that the softmax runs
over keys along a long stride, and the 1/sqrt(d_k) scaling and the mask (an additive bias: 0
where a query may attend, -inf where not) enter the scores in one operation that broadcasts the
mask instead of copying it for every head. The math is the book's;
``tests/modules/test_fast_path.py`` checks that the result and its gradients equal the
step-by-step path (1e-12 in float64).

References: post "Matrix Calculation of Self-Attention" and "The Beast With Many Heads";
paper §3.2.1 (Eq. 1) and §3.2.2.
"""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

__all__ = ["attend_keys_first", "mask_bias", "merge_heads", "project_heads"]


def project_heads(x: torch.Tensor, weights: list[torch.Tensor], biases: list[torch.Tensor | None],
                  n_heads: int, batch: int) -> tuple[torch.Tensor, ...]:
    """Apply several projections of one input in one matrix product and split them into heads.

    Parameters
    ----------
    x : (batch * seq, d_model), token rows, each sentence's tokens consecutive (rows, not
        (batch, seq, d_model): a matrix product of rows needs no reshape before or after it).
    weights : n weight matrices (d_model, d_model), as ``nn.Linear.weight`` (e.g. W_Q, W_K, W_V).
    biases : n bias vectors (d_model,), or n Nones.
    n_heads : number of heads; head h of a projection is its output columns h*d_k:(h+1)*d_k.
    batch : number of sentences.

    Returns
    -------
    n tensors (n_heads * batch, seq, d_k), one per projection: head h of sentence b at
    ``[h * batch + b]``.

    References
    ----------
    Post "The Beast With Many Heads" (W_Q^h, W_K^h, W_V^h); paper §3.2.2.
    """
    rows, d_model = x.shape
    n, seq, d_k = len(weights), rows // batch, d_model // n_heads
    if n == 1:
        y = F.linear(x, weights[0], biases[0])  # (batch * seq, d_model)
    else:
        bias = None if biases[0] is None else torch.cat(biases)
        y = F.linear(x, torch.cat(weights), bias)  # (batch * seq, n * d_model)
    y = y.view(batch, seq, n, n_heads, d_k).permute(2, 3, 0, 1, 4)  # (n, n_heads, batch, seq, d_k)
    heads = y.reshape(n, n_heads * batch, seq, d_k)  # the one copy
    return heads.unbind(0) if n > 1 else (heads.squeeze(0),)


def mask_bias(mask: torch.Tensor, n_heads: int, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask as the additive bias of key-first scores.

    Parameters
    ----------
    mask : bool, broadcastable to (batch, n_heads, seq_q, seq_k); True = may attend.
    n_heads : number of heads.   dtype : the scores' dtype.

    Returns
    -------
    A view (n_heads, batch or 1, seq_k or 1, seq_q or 1) that broadcasts to the key-first scores
    (n_heads, batch, seq_k, seq_q): 0 where the query may attend to the key, -inf where not
    (exp(-inf) = 0, so the softmax gives that key no weight). It holds only the mask's own
    entries: a padding mask (batch, 1, 1, seq_k) is not copied for every head and query.
    """
    key_first = mask.view((1,) * (4 - mask.dim()) + tuple(mask.shape)).permute(1, 0, 3, 2)
    bias = torch.full(key_first.shape, float("-inf"), dtype=dtype, device=mask.device)
    # built contiguous in the key-first order, so that a sum with the scores is laid out as they are
    return bias.masked_fill_(key_first, 0.0).expand(n_heads, -1, -1, -1)


def attend_keys_first(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      bias: torch.Tensor | None, dropout_p: float = 0.0) -> torch.Tensor:
    """softmax(Q Kᵀ / sqrt(d_k) + bias) V for a batch of heads, with the scores laid out key-first.

    Parameters
    ----------
    q : (n, seq_q, d_k) queries.   k : (n, seq_k, d_k) keys.   v : (n, seq_k, d_v) values;
        n = n_heads * batch, head-major (as :func:`project_heads` gives them).
    bias : None, or (n_heads, batch or 1, seq_k, seq_q or 1) from :func:`mask_bias`.
    dropout_p : dropout rate on the attention weights (0 outside training).

    Returns
    -------
    z : (n, seq_q, d_v).

    References
    ----------
    Paper §3.2.1, Eq. 1.
    """
    d_k = q.shape[-1]
    scale = 1.0 / math.sqrt(d_k)
    scores = torch.bmm(k, q.transpose(1, 2))  # (n, seq_k, seq_q): key-first, not yet scaled
    if bias is None:
        scores = scores.mul_(scale)  # in place: the product keeps no copy of its output
    else:  # bias + scale * scores in one pass, the bias broadcast over heads and sentences
        n, seq_k, seq_q = scores.shape
        heads = scores.view(bias.shape[0], n // bias.shape[0], seq_k, seq_q)
        scores = torch.add(bias, heads, alpha=scale).reshape(n, seq_k, seq_q)
    weights = scores.transpose(0, 1).softmax(dim=0).transpose(0, 1)  # over keys; (n, seq_k, seq_q)
    if dropout_p > 0:
        weights = F.dropout(weights, dropout_p)
    return torch.bmm(weights.transpose(1, 2), v)  # (n, seq_q, d_v)


def merge_heads(z: torch.Tensor, batch: int) -> torch.Tensor:
    """(n_heads * batch, seq, d_k), head-major, -> (batch * seq, n_heads * d_k): the concatenation,
    as token rows."""
    n_batch, seq, d_k = z.shape
    n_heads = n_batch // batch
    return z.view(n_heads, batch, seq, d_k).permute(1, 2, 0, 3).reshape(batch * seq, n_heads * d_k)
