"""Multi-headed attention: several self-attentions side by side, concatenated, times W_O.

Each head has its own slice of the projections: head ``h`` uses columns ``h*d_k:(h+1)*d_k`` of
``X @ W_Q`` (likewise K and V), with ``d_k = d_model // n_heads``.
"""
from __future__ import annotations

import numpy as np

from ._checks import (as_float_array, check_bias, check_mask, check_matrix, check_min_ndim,
                      check_n_heads)
from ._checks import finite_result
from .self_attention import AttentionResult, attend

__all__ = ["merge_heads", "multi_head_attention", "split_heads"]


def split_heads(x: object, n_heads: int) -> np.ndarray:
    """Cut the projected matrix into one slice of columns per head.

    Parameters
    ----------
    x: a projection such as ``X @ W_Q``; n_heads: must divide d_model.
    Returns
    -------
    Head ``h`` holds columns ``h*d_k:(h+1)*d_k`` of ``x``, ``d_k = d_model // n_heads``.
    Shapes
    ------
    (..., seq, d_model) -> (..., n_heads, seq, d_k).
    Raises
    ------
    ValueError if ``x`` has fewer than 2 dimensions or ``n_heads`` is not a positive divisor of
    d_model.
    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    x = as_float_array("x", x)
    check_min_ndim("x", x, 2, "(..., seq, d_model)")
    *leading, seq, d_model = x.shape
    n_heads = check_n_heads(n_heads, d_model)
    d_k = d_model // n_heads
    x = x.reshape(*leading, seq, n_heads, d_k)  # (..., seq, n_heads, d_k)
    return np.swapaxes(x, -3, -2)  # (..., n_heads, seq, d_k)


def merge_heads(x: object) -> np.ndarray:
    """Concatenate the heads' matrices side by side: the inverse of :func:`split_heads`.

    Parameters
    ----------
    x: one matrix per head.
    Returns
    -------
    Columns ``h*d_k:(h+1)*d_k`` hold head ``h``.
    Shapes
    ------
    (..., n_heads, seq, d_k) -> (..., seq, n_heads * d_k).
    Raises
    ------
    ValueError if ``x`` has fewer than 3 dimensions.
    References
    ----------
    Post "The Beast With Many Heads" ("We concat the matrices"); paper §3.2.2.
    """
    x = as_float_array("x", x)
    check_min_ndim("x", x, 3, "(..., n_heads, seq, d_k)")
    *leading, n_heads, seq, d_k = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., seq, n_heads, d_k)
    return x.reshape(*leading, seq, n_heads * d_k)  # (..., seq, d_model)


def _query_key_value(query: object, key: object,
                     value: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """The three inputs as float64 arrays, checked to fit together, and their leading dims."""
    query = as_float_array("query", query)
    key = as_float_array("key", key)
    value = as_float_array("value", value)
    check_min_ndim("query", query, 2, "(..., seq_q, d_model)")
    d_model = query.shape[-1]
    for name, x in (("key", key), ("value", value)):
        check_min_ndim(name, x, 2, f"(..., seq_k, d_model={d_model})")
        if x.shape[-1] != d_model:
            raise ValueError(f"{name}: expected shape (..., seq_k, {d_model}) to match query's "
                             f"d_model={d_model}, got {x.shape}")
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(f"value: expected seq_k={key.shape[-2]} to match key, got {value.shape}")
    try:
        leading = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(f"query, key, value: leading dimensions do not broadcast: query "
                         f"{query.shape}, key {key.shape}, value {value.shape}") from None
    return query, key, value, leading


def _weight(name: str, W: object, d_model: int) -> np.ndarray:
    """``W`` as a float64 (d_model, d_model) matrix; ValueError naming ``name`` otherwise."""
    W = as_float_array(name, W)
    check_matrix(name, W, d_model, d_model, f"to match query's d_model={d_model}",
                 f"({d_model}, {d_model})")
    return W


@finite_result("query", "key", "value", "W_Q", "W_K", "W_V", "W_O")
def multi_head_attention(query: object, key: object, value: object, W_Q: object, W_K: object,
                         W_V: object, W_O: object, n_heads: int, *, b_Q: object = None,
                         b_K: object = None, b_V: object = None, b_O: object = None,
                         mask: object = None) -> AttentionResult:
    """Multi-headed attention: do the self-attention calculation once per head, concat, times W_O.

    ``Concat(head_1, ..., head_h) W_O`` with ``head_i = Attention(query W_Q^i, key W_K^i,
    value W_V^i)``; ``W_Q^i`` is the column slice ``i*d_k:(i+1)*d_k`` of one (d_model, d_model)
    matrix. Self-attention passes one array as query, key and value; encoder-decoder attention
    passes the decoder's states as ``query`` and the encoder output as ``key`` and ``value``.

    Parameters
    ----------
    W_*, b_*: applied as ``x @ W + b``, a bias of None is 0; n_heads: 8 in the paper, divides
    d_model; mask: True where a query may attend to a key, e.g. (seq_q, seq_k) causal or
    (batch, 1, 1, seq_k) padding.
    Returns
    -------
    AttentionResult(q, k, v, scores, scaled, weights, z per head, concat, output, mask).
    Shapes
    ------
    query (..., seq_q, d_model); key, value (..., seq_k, d_model); W_* (d_model, d_model);
    b_* (d_model,); mask broadcastable to (..., n_heads, seq_q, seq_k); output
    (..., seq_q, d_model); weights (..., n_heads, seq_q, seq_k).
    Raises
    ------
    ValueError if the shapes do not fit, ``n_heads`` is not a positive divisor of d_model, or
    ``mask`` is not a fitting bool array (or leaves a query row with no key).
    References
    ----------
    Post "The Beast With Many Heads", "The Decoder Side"; paper §3.2.2.
    """
    query, key, value, leading = _query_key_value(query, key, value)
    *_, seq_q, d_model = query.shape
    seq_k = key.shape[-2]
    n_heads = check_n_heads(n_heads, d_model)
    W_Q, W_K, W_V, W_O = (_weight(name, W, d_model) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    b_Q, b_K, b_V, b_O = (check_bias(name, b, d_model, f"to match d_model={d_model}")
                          for name, b in (("b_Q", b_Q), ("b_K", b_K), ("b_V", b_V), ("b_O", b_O)))
    mask = check_mask("mask", mask, (*leading, n_heads, seq_q, seq_k),
                      "(..., n_heads, seq_q, seq_k)")

    q = split_heads(query @ W_Q + b_Q, n_heads)  # (..., n_heads, seq_q, d_k)
    k = split_heads(key @ W_K + b_K, n_heads)  # (..., n_heads, seq_k, d_k)
    v = split_heads(value @ W_V + b_V, n_heads)  # (..., n_heads, seq_k, d_k)
    heads = attend(q, k, v, mask, 1.0 / np.sqrt(q.shape[-1]))  # steps 2-6 of every head
    concat = merge_heads(heads.z)  # (..., seq_q, d_model)
    output = concat @ W_O + b_O  # (..., seq_q, d_model)
    return heads._replace(concat=concat, output=output)
