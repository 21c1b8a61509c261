"""The residuals: each sub-layer has a residual connection around it, followed by layer norm.

Layer normalization as torch's ``nn.LayerNorm``: over the last axis, with the biased variance
(divide by d_model, not d_model - 1) and ``eps`` inside the square root.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_bias, check_min_ndim, finite_result

__all__ = ["LayerNormSteps", "add_and_norm", "layer_norm", "layer_norm_steps"]


class LayerNormSteps(NamedTuple):
    """The pieces of layer normalization, so a chapter can print the mean and variance."""

    mean: np.ndarray
    """Mean of each vector over its d_model entries, shape (..., 1)."""
    variance: np.ndarray
    """Biased variance of each vector (divided by d_model), shape (..., 1)."""
    normalized: np.ndarray
    """``(x - mean) / sqrt(variance + eps)``, shape (..., d_model)."""


def _check_eps(eps: float) -> float:
    try:
        value = float(eps) if not isinstance(eps, (bool, np.bool_, str, bytes)) else None
    except (TypeError, ValueError, OverflowError):
        value = None
    if value is None or not np.isfinite(value) or value < 0:
        raise ValueError(f"eps: expected a non-negative finite number, got {eps!r}")
    return value


def _check_constant_rows(variance: np.ndarray, eps: float) -> None:
    """With eps = 0 a constant vector (variance 0) would normalise to 0/0 = NaN."""
    if eps == 0 and (variance == 0).any():
        raise ValueError("eps: expected eps > 0 for x with a constant vector (variance 0), got "
                         "0: that vector would normalise to 0/0 = NaN")


@finite_result("x")
def layer_norm_steps(x: object, eps: float = 1e-5) -> LayerNormSteps:
    """Layer normalization without the learned scale and shift: mean, variance, normalized.

    Parameters
    ----------
    x: vectors to normalize, one per position; eps: added to the variance inside the square root.
    Returns
    -------
    LayerNormSteps(mean, variance (biased, divided by d_model), normalized).
    Shapes
    ------
    x (..., d_model); mean, variance (..., 1); normalized (..., d_model).
    Raises
    ------
    ValueError if ``x`` is a scalar, has an empty last axis or holds NaN/inf; ``eps`` is negative
    or not finite, or 0 while a vector of ``x`` is constant (0/0); or float64 overflows (entries
    near 1e154 and above).
    References
    ----------
    Post "The Residuals"; paper §3.1 (LayerNorm, citing Ba et al. 2016).
    """
    x = as_float_array("x", x)
    check_min_ndim("x", x, 1, "(..., d_model)")
    if x.shape[-1] == 0:
        raise ValueError(f"x: expected at least one feature, got shape {x.shape}")
    eps = _check_eps(eps)
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    # The biased variance: divide by d_model, not d_model - 1.
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1)
    _check_constant_rows(variance, eps)
    normalized = (x - mean) / np.sqrt(variance + eps)  # (..., d_model)
    return LayerNormSteps(mean, variance, normalized)


@finite_result("x", "gamma", "beta")
def layer_norm(x: object, gamma: object = None, beta: object = None,
               eps: float = 1e-5) -> np.ndarray:
    """Layer normalization: give each vector mean 0 and variance 1, then scale and shift it.

    ``gamma * (x - mean) / sqrt(variance + eps) + beta`` over the last axis.

    Parameters
    ----------
    x: vectors to normalize; gamma, beta: learned scale and shift (None: ones, zeros).
    Returns
    -------
    The normalized vectors.
    Shapes
    ------
    x (..., d_model); gamma, beta (d_model,); returns (..., d_model).
    Raises
    ------
    ValueError if ``gamma`` or ``beta`` is not (d_model,), or as :func:`layer_norm_steps`.
    References
    ----------
    Post "The Residuals"; paper §3.1.
    """
    steps = layer_norm_steps(x, eps)
    d_model = steps.normalized.shape[-1]
    gamma = np.ones(d_model) if gamma is None else check_bias(
        "gamma", gamma, d_model, f"to match x's d_model={d_model}")
    beta = check_bias("beta", beta, d_model, f"to match x's d_model={d_model}")
    return gamma * steps.normalized + beta


@finite_result("x", "sublayer_out")
def add_and_norm(x: object, sublayer_out: object, gamma: object = None, beta: object = None,
                 eps: float = 1e-5) -> np.ndarray:
    """Add & Normalize: the residual connection around a sub-layer, followed by layer norm.

    ``LayerNorm(x + Sublayer(x))``: the "post-LN" order of the paper and of the post's figures.

    Parameters
    ----------
    x: the sub-layer's input (the residual); sublayer_out: its output, e.g. self-attention's Z.
    Returns
    -------
    ``layer_norm(x + sublayer_out, gamma, beta, eps)``.
    Shapes
    ------
    x, sublayer_out (..., d_model); returns (..., d_model).
    Raises
    ------
    ValueError if ``x`` and ``sublayer_out`` differ in shape, or as :func:`layer_norm`.
    References
    ----------
    Post "The Residuals"; paper §3.1 ("LayerNorm(x + Sublayer(x))") and §5.4 (residual dropout).
    """
    x = as_float_array("x", x)
    sublayer_out = as_float_array("sublayer_out", sublayer_out)
    if sublayer_out.shape != x.shape:
        raise ValueError(f"sublayer_out: expected the shape of x {x.shape}, "
                         f"got {sublayer_out.shape}")
    return layer_norm(x + sublayer_out, gamma, beta, eps)
