"""The final linear and softmax layer: from the decoder's vector of floats to a word.

The linear layer projects each vector to a logits vector with one score per word of the output
vocabulary; the softmax turns the scores into probabilities.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_bias, check_matrix, check_min_ndim, finite_result
from .softmax import softmax

__all__ = ["OutputResult", "final_linear_softmax"]


class OutputResult(NamedTuple):
    """The logits vector and the probabilities made from it."""

    logits: np.ndarray
    """One score per word of the output vocabulary, shape (..., vocab)."""
    probs: np.ndarray
    """``softmax(logits)``: all positive, adding up to 1, shape (..., vocab)."""


@finite_result("x", "W", "b")
def final_linear_softmax(x: object, W: object, b: object = None) -> OutputResult:
    """The final Linear layer projects the decoder's output into a logits vector; softmax follows.

    ``logits = x @ W + b`` and ``probs = softmax(logits)``. The word with the highest
    probability (``probs.argmax(-1)``) is the output of this time step in greedy decoding.

    Parameters
    ----------
    x : array_like
        The vectors produced by the decoder stack, one per position.
    W : array_like
        The linear layer's weights, one column per word of the output vocabulary.
    b : array_like, optional
        The linear layer's bias; None means zero.

    Returns
    -------
    OutputResult
        Named fields ``logits`` and ``probs``.

    Shapes
    ------
    ``x`` (..., d_model); ``W`` (d_model, vocab); ``b`` (vocab,);
    ``logits``, ``probs`` (..., vocab).

    Raises
    ------
    ValueError
        If the shapes do not fit together, an input holds NaN/inf, or the logits overflow
        float64.

    References
    ----------
    Post "The Final Linear and Softmax Layer"; paper §3.4 ("the usual learned linear
    transformation and softmax function").
    """
    x, W = as_float_array("x", x), as_float_array("W", W)
    check_min_ndim("x", x, 1, "(..., d_model)")
    d_model = x.shape[-1]
    check_matrix("W", W, d_model, None, f"to match x's d_model={d_model}", f"({d_model}, vocab)")
    vocab = W.shape[1]
    b = check_bias("b", b, vocab, f"to match W's vocab={vocab}")

    logits = x @ W + b  # (..., vocab)
    probs = softmax(logits, axis=-1)  # (..., vocab)
    return OutputResult(logits, probs)
