"""Self-attention, step by step as the post tells it, then in matrix form (paper §3.2.1).

Masks are bool arrays, True = may attend; a masked score is set to ``-inf`` before the softmax,
so it gets weight exactly 0.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_mask, check_matrix, check_min_ndim, finite_result
from .softmax import softmax

__all__ = ["AttentionResult", "scaled_dot_product_attention", "self_attention"]


class AttentionResult(NamedTuple):
    """Every step of one attention as the post tells it: the one record of an attention that the
    NumPy reference returns, :func:`illustrated.trace` fills from the model and the book draws.

    For one head (:func:`self_attention`) the arrays are (seq_q, ·); for every head at once
    (:func:`~illustrated.reference.multi_head_attention`, ``il.trace``) they carry the heads
    first, (..., n_heads, seq_q, ·), and ``concat`` and ``output`` are filled in.
    """

    q: np.ndarray
    """Step 1, queries ``X @ W_Q``, (seq_q, d_k) per head."""
    k: np.ndarray
    """Step 1, keys ``X @ W_K``, (seq_k, d_k) per head."""
    v: np.ndarray
    """Step 1, values ``X @ W_V``, (seq_k, d_v) per head."""
    scores: np.ndarray
    """Step 2, every query dotted with every key, (seq_q, seq_k) per head."""
    scaled: np.ndarray
    """Step 3, the scores divided by sqrt(d_k), (seq_q, seq_k) per head; ``il.trace`` sets the
    masked ones to ``-inf``, the reference leaves them."""
    weights: np.ndarray
    """Step 4, softmax of the (masked) scaled scores; each row sums to 1, (seq_q, seq_k)."""
    z: np.ndarray
    """Steps 5 and 6, the values weighted by the softmax and summed, (seq_q, d_v) per head."""
    concat: np.ndarray | None = None
    """Several heads: their z side by side, (..., seq_q, d_model)."""
    output: np.ndarray | None = None
    """Several heads: ``concat @ W_O + b_O``, (..., seq_q, d_model)."""
    mask: np.ndarray | None = None
    """Which keys each query may attend to (True = may), where a mask was given."""


def _scale(scale: float | None, d_k: int) -> float:
    """The factor the scores are multiplied by: 1/sqrt(d_k) unless given."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale: expected a positive finite number, got {scale!r}")
    return float(scale)


def _apply_mask(scaled: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Set the scores of positions that may not be attended to to -inf (True = may attend)."""
    if mask is None:
        return scaled
    return np.where(mask, scaled, -np.inf)


@finite_result("X", "W_Q", "W_K", "W_V")
def self_attention(X: object, W_Q: object, W_K: object, W_V: object, mask: object = None, *,
                   scale: float | None = None) -> AttentionResult:
    """Self-attention: score every word against this word, softmax the scores, and sum the values.

    The post's six steps: (1) a query, key and value per word, ``X @ W_Q``, ``X @ W_K``,
    ``X @ W_V``; (2) score = query . key; (3) divide by sqrt(d_k) (8 in the paper, d_k = 64);
    (4) softmax; (5) weight each value by its score; (6) sum. In matrix form
    ``Z = softmax(Q K^T / sqrt(d_k)) V``.

    Parameters
    ----------
    mask: True where a query (row) may attend to a key (column); masked scores become ``-inf``
    before the softmax; None attends everywhere.
    scale: what the scores are multiplied by in step 3, default ``1 / sqrt(d_k)``. The post's
    worked example divides by 8 = sqrt(64) with 3-number vectors, so
    :func:`illustrated.reference.thinking_machines_example` passes ``scale=1/8``.
    Returns
    -------
    AttentionResult(q, k, v, scores, scaled, weights, z), one field per step.
    Shapes
    ------
    X (seq, d_model); W_Q, W_K (d_model, d_k); W_V (d_model, d_v); mask broadcastable to
    (seq, seq); q, k (seq, d_k); v (seq, d_v); scores, scaled, weights (seq, seq); z (seq, d_v).
    Raises
    ------
    ValueError if the shapes do not fit, ``mask`` is not bool or does not broadcast to
    (seq, seq), a query row has no key it may attend to (the softmax would be NaN), or ``scale``
    is not a positive finite number.
    References
    ----------
    Post "Self-Attention in Detail", "Matrix Calculation of Self-Attention"; paper §3.2.1, Eq. 1.
    """
    X = as_float_array("X", X)
    W_Q = as_float_array("W_Q", W_Q)
    W_K = as_float_array("W_K", W_K)
    W_V = as_float_array("W_V", W_V)
    if X.ndim != 2 or 0 in X.shape:
        raise ValueError(f"X: expected shape (seq, d_model), got {X.shape}")
    seq, d_model = X.shape
    check_matrix("W_Q", W_Q, d_model, None, f"to match X's d_model={d_model}", f"({d_model}, d_k)")
    d_k = W_Q.shape[1]
    check_matrix("W_K", W_K, d_model, d_k, f"to match X's d_model={d_model} and W_Q's d_k={d_k}",
                 f"({d_model}, {d_k})")
    check_matrix("W_V", W_V, d_model, None, f"to match X's d_model={d_model}", f"({d_model}, d_v)")
    mask = check_mask("mask", mask, (seq, seq), "(seq, seq)")
    scale = _scale(scale, d_k)

    # Step 1: a query, a key and a value vector for each word (one row each).
    q = X @ W_Q  # (seq, d_k)
    k = X @ W_K  # (seq, d_k)
    v = X @ W_V  # (seq, d_v)
    # Step 2: score every word against every word, scores[i, j] = q_i . k_j.
    scores = q @ k.T  # (seq, seq)
    # Step 3: divide by sqrt(d_k) (unless another scale is given).
    scaled = scores * scale  # (seq, seq)
    # Step 4: softmax over each row, after setting the masked scores to -inf.
    weights = softmax(_apply_mask(scaled, mask), axis=-1)  # (seq, seq)
    # Steps 5 and 6: weight each value vector by its softmax score and sum them up.
    z = weights @ v  # (seq, d_v)
    return AttentionResult(q, k, v, scores, scaled, weights, z)


@finite_result("Q", "K", "V")
def scaled_dot_product_attention(Q: object, K: object, V: object, mask: object = None, *,
                                 scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The self-attention calculation in matrix form: ``Z = softmax(Q K^T / sqrt(d_k)) V``.

    Steps two to six of :func:`self_attention` from ready queries, keys and values, for any
    leading (batch, head) dimensions.

    Parameters
    ----------
    mask: True where a query may attend to a key; scale: default ``1 / sqrt(d_k)``.
    Returns
    -------
    (Z, weights): the attention output and the softmax weights (each row sums to 1).
    Shapes
    ------
    Q (..., seq_q, d_k); K (..., seq_k, d_k); V (..., seq_k, d_v); mask broadcastable to
    (..., seq_q, seq_k); Z (..., seq_q, d_v); weights (..., seq_q, seq_k). The leading
    dimensions broadcast against each other.
    Raises
    ------
    ValueError if ``Q`` and ``K`` differ in d_k, ``K`` and ``V`` in length, the leading dimensions
    do not broadcast, ``mask`` is not a fitting bool array, a query row has no key it may attend
    to, or ``scale`` is not a positive finite number.
    References
    ----------
    Post "Matrix Calculation of Self-Attention"; paper §3.2.1, Eq. 1.
    """
    Q, K, V = as_float_array("Q", Q), as_float_array("K", K), as_float_array("V", V)
    check_min_ndim("Q", Q, 2, "(..., seq_q, d_k)")
    check_min_ndim("K", K, 2, "(..., seq_k, d_k)")
    check_min_ndim("V", V, 2, "(..., seq_k, d_v)")
    if 0 in (Q.shape[-1], K.shape[-2]):
        raise ValueError(f"Q, K: expected d_k >= 1 and seq_k >= 1, got Q {Q.shape}, K {K.shape}")
    d_k = Q.shape[-1]
    if K.shape[-1] != d_k:
        raise ValueError(f"K: expected shape (..., seq_k, {d_k}) to match Q's d_k={d_k}, "
                         f"got {K.shape}")
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(f"V: expected shape (..., {K.shape[-2]}, d_v) to match K's "
                         f"seq_k={K.shape[-2]}, got {V.shape}")
    try:
        leading = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(f"Q, K, V: leading dimensions do not broadcast: Q {Q.shape}, "
                         f"K {K.shape}, V {V.shape}") from None
    target = (*leading, Q.shape[-2], K.shape[-2])
    mask = check_mask("mask", mask, target, "(..., seq_q, seq_k)")
    scale = _scale(scale, d_k)

    steps = attend(Q, K, V, mask, scale)
    return steps.z, steps.weights


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None,
           scale: float) -> AttentionResult:
    """Steps two to six on checked arrays (q (..., seq_q, d_k), k (..., seq_k, d_k), v
    (..., seq_k, d_v), a bool mask or None), every step kept; the callers check their inputs."""
    scores = q @ np.swapaxes(k, -1, -2)  # (..., seq_q, seq_k)
    scaled = scores * scale  # (..., seq_q, seq_k)
    weights = softmax(_apply_mask(scaled, mask), axis=-1)  # (..., seq_q, seq_k)
    z = weights @ v  # (..., seq_q, d_v)
    return AttentionResult(q, k, v, scores, scaled, weights, z, mask=mask)
