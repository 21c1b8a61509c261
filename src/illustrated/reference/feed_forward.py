"""The position-wise feed-forward network: the same two-layer network applied to every position.

``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2`` (paper §3.3, Eq. 2), with d_ff = 2048 in the paper.
"""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_bias, check_matrix, check_min_ndim, finite_result

__all__ = ["feed_forward", "relu"]


def relu(x: object) -> np.ndarray:
    """The rectified linear unit ``max(0, x)``, elementwise.

    Parameters
    ----------
    x: any numbers.
    Returns
    -------
    ``x`` with the negative entries replaced by 0.
    Shapes
    ------
    The shape of ``x``.
    Raises
    ------
    ValueError if ``x`` does not hold numbers.
    References
    ----------
    Paper §3.3, Eq. 2 (the ``max(0, .)``).
    """
    return np.maximum(as_float_array("x", x), 0.0)


@finite_result("x", "W_1", "b_1", "W_2", "b_2")
def feed_forward(x: object, W_1: object, b_1: object, W_2: object, b_2: object) -> np.ndarray:
    """The feed-forward neural network each position flows through, independently of the others.

    ``relu(x @ W_1 + b_1) @ W_2 + b_2``: widen to d_ff, apply ReLU, project back.

    Parameters
    ----------
    x: one vector per position, e.g. self-attention's output after add & norm; a bias of None is 0.
    Returns
    -------
    The network's output, one vector per position.
    Shapes
    ------
    x (..., d_model); W_1 (d_model, d_ff); b_1 (d_ff,); W_2 (d_ff, d_model); b_2 (d_model,);
    returns (..., d_model).
    Raises
    ------
    ValueError if the shapes do not fit, an input holds NaN/inf, or float64 overflows.
    References
    ----------
    Post "Now We're Encoding!"; paper §3.3, Eq. 2.
    """
    x = as_float_array("x", x)
    W_1, W_2 = as_float_array("W_1", W_1), as_float_array("W_2", W_2)
    check_min_ndim("x", x, 1, "(..., d_model)")
    d_model = x.shape[-1]
    check_matrix("W_1", W_1, d_model, None, f"to match x's d_model={d_model}", f"({d_model}, d_ff)")
    d_ff = W_1.shape[1]
    check_matrix("W_2", W_2, d_ff, d_model, f"to match W_1's d_ff={d_ff} and x's d_model={d_model}",
                 f"({d_ff}, {d_model})")
    b_1 = check_bias("b_1", b_1, d_ff, f"to match W_1's d_ff={d_ff}")
    b_2 = check_bias("b_2", b_2, d_model, f"to match x's d_model={d_model}")

    hidden = relu(x @ W_1 + b_1)  # (..., d_ff)
    return hidden @ W_2 + b_2  # (..., d_model)
