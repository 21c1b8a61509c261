"""Softmax: "normalizes the scores so they're all positive and add up to 1".

Used by self-attention (step four), by the final linear + softmax layer and by the loss.
"""
from __future__ import annotations

import numpy as np

from ._checks import NonFiniteError, as_float_array, check_axis

__all__ = ["log_softmax", "softmax"]


def _shifted(x: object, axis: int) -> np.ndarray:
    """``x`` minus its maximum along ``axis``: same softmax, and no exp() of a large number."""
    x = as_float_array("x", x, finite=False)
    if x.ndim == 0:
        raise ValueError(f"x: expected at least one entry along axis {axis}, got shape {x.shape}")
    axis = check_axis("axis", axis, x.ndim)
    if x.shape[axis] == 0:
        raise ValueError(f"x: expected at least one entry along axis {axis}, got shape {x.shape}")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise NonFiniteError("x: expected finite numbers or -inf (masked), got NaN or +inf")
    x_max = np.max(x, axis=axis, keepdims=True)  # (..., 1, ...)
    if np.isneginf(x_max).any():
        raise ValueError(f"x: some slice along axis {axis} is all -inf (nothing may be attended "
                         "to); its softmax would be 0/0 = NaN")
    with np.errstate(over="ignore"):  # -1e308 - 1e308 = -inf: a probability of exactly 0
        return x - x_max


def softmax(x: object, axis: int = -1) -> np.ndarray:
    """Softmax normalizes the scores so they're all positive and add up to 1.

    ``exp(x_i) / sum_j exp(x_j)``, computed after subtracting the maximum so ``exp`` cannot
    overflow. ``-inf`` entries (masked scores) get probability exactly 0.

    Parameters
    ----------
    x: scores (logits); axis: the axis along which the result sums to 1.
    Returns
    -------
    Probabilities, float64, the shape of ``x``.
    Shapes
    ------
    x (..., n) -> (..., n) for the default axis=-1.
    Raises
    ------
    ValueError if a slice along ``axis`` is all ``-inf`` (the result would be NaN), ``x`` holds
    NaN or ``+inf``, or ``axis`` is not an axis of ``x`` or has length 0.
    References
    ----------
    Post "Self-Attention in Detail" (step four), "The Final Linear and Softmax Layer";
    paper §3.2.1, Eq. 1 and §3.4.
    """
    shifted = _shifted(x, axis)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=axis, keepdims=True)


def log_softmax(x: object, axis: int = -1) -> np.ndarray:
    """The log of the softmax, finite even where the softmax underflows to 0 (the loss uses it).

    ``x - max(x) - log(sum(exp(x - max(x))))``.

    Parameters
    ----------
    x: scores (logits); axis: the axis along which ``exp`` of the result sums to 1.
    Returns
    -------
    Log-probabilities, float64, the shape of ``x``.
    Shapes
    ------
    x (..., n) -> (..., n) for the default axis=-1.
    Raises
    ------
    ValueError as :func:`softmax`.
    References
    ----------
    Post "The Loss Function"; paper §5.4 (the training loss).
    """
    shifted = _shifted(x, axis)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
