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

    ``softmax(x)_i = exp(x_i) / sum_j exp(x_j)``, computed after subtracting the maximum, which
    changes nothing mathematically but keeps ``exp`` from overflowing. Entries equal to ``-inf``
    (masked scores) get probability exactly 0.

    Parameters
    ----------
    x : array_like
        Scores (logits). ``-inf`` marks an entry that must get probability 0.
    axis : int, default -1
        The axis along which the result sums to 1.

    Returns
    -------
    numpy.ndarray
        Probabilities, float64, same shape as ``x``.

    Shapes
    ------
    ``x`` (..., n) -> (..., n) for the default ``axis=-1``.

    Raises
    ------
    ValueError
        If a slice along ``axis`` is all ``-inf`` (the result would be NaN), if ``x`` holds NaN
        or ``+inf``, if ``axis`` is not an axis of ``x``, or if it has length 0.

    References
    ----------
    Post "Self-Attention in Detail" (step four) and "The Final Linear and Softmax Layer";
    paper §3.2.1, Eq. (1) and §3.4.
    """
    shifted = _shifted(x, axis)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=axis, keepdims=True)


def log_softmax(x: object, axis: int = -1) -> np.ndarray:
    """The logarithm of the softmax, computed without taking the log of a tiny probability.

    ``log_softmax(x) = x - max(x) - log(sum(exp(x - max(x))))``; equal to ``log(softmax(x))``
    but finite even where the softmax underflows to 0. The loss uses it.

    Parameters
    ----------
    x : array_like
        Scores (logits).
    axis : int, default -1
        The axis along which ``exp`` of the result sums to 1.

    Returns
    -------
    numpy.ndarray
        Log-probabilities, float64, same shape as ``x``.

    Shapes
    ------
    ``x`` (..., n) -> (..., n) for the default ``axis=-1``.

    Raises
    ------
    ValueError
        As :func:`softmax`.

    References
    ----------
    Post "The Loss Function"; paper §5.4 (the training loss).
    """
    shifted = _shifted(x, axis)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
