"""The post's worked example, "Thinking Machines", as small integer matrices.

The post scores "Thinking" against itself (q1 . k1 = 112) and against "Machines"
(q1 . k2 = 96), divides by 8 (14 and 12) and takes the softmax (0.88 and 0.12). It draws the
vectors with 4 boxes (embeddings) and 3 boxes (queries, keys, values) but divides by
sqrt(64) = 8 as the paper's d_k = 64 would. The matrices here reproduce those numbers with
d_model = 4 and d_k = 3; pass ``scale=THINKING_MACHINES_SCALE`` (1/8) to
:func:`~illustrated.reference.self_attention` to divide by 8 as the post does.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["THINKING_MACHINES_SCALE", "THINKING_MACHINES_WORDS", "WorkedExample",
           "thinking_machines_example"]

THINKING_MACHINES_WORDS = ("Thinking", "Machines")
"""The two input words, one per row of X."""

THINKING_MACHINES_SCALE = 1 / 8
"""The post divides the scores by 8, the square root of the paper's d_k = 64."""


class WorkedExample(NamedTuple):
    """Inputs of the post's self-attention example."""

    X: np.ndarray
    """Embeddings of "Thinking" and "Machines", one per row, shape (2, 4)."""
    W_Q: np.ndarray
    """Query weights, shape (4, 3)."""
    W_K: np.ndarray
    """Key weights, shape (4, 3)."""
    W_V: np.ndarray
    """Value weights, shape (4, 3)."""


def thinking_machines_example() -> WorkedExample:
    """The post's example sentence "Thinking Machines", with weights that give its numbers.

    With ``q = X @ W_Q`` and ``k = X @ W_K``: q1 = [8, 6, 10], k1 = [7, 1, 5], k2 = [3, 2, 6],
    so q1 . k1 = 112 and q1 . k2 = 96; divided by 8 they are 14 and 12, and their softmax is
    0.8808 and 0.1192 (the post's 0.88 and 0.12). "Machines" scores 36 and 38 (4.5 and 4.75
    after dividing by 8), so it attends a little more to itself: 0.4378 and 0.5622.

    Parameters
    ----------
    None.

    Returns
    -------
    WorkedExample
        Named fields ``X``, ``W_Q``, ``W_K``, ``W_V``, float64 arrays of small integers (fresh
        copies on each call).

    Shapes
    ------
    ``X`` (2, 4) = (seq, d_model); ``W_Q``, ``W_K``, ``W_V`` (4, 3) = (d_model, d_k).

    Raises
    ------
    Nothing.

    References
    ----------
    Post "Self-Attention in Detail" (steps one to six, the scores 112 and 96);
    paper §3.2.1, Eq. (1).
    """
    X = np.array([[2, 2, 1, 1],    # "Thinking"
                  [0, 1, 0, 2]],   # "Machines"
                 dtype=np.float64)
    W_Q = np.array([[3, 0, 2],
                    [0, 1, 3],
                    [1, 1, 0],
                    [1, 3, 0]], dtype=np.float64)
    W_K = np.array([[1, 0, 1],
                    [1, 0, 0],
                    [2, 0, 0],
                    [1, 1, 3]], dtype=np.float64)
    W_V = np.array([[1, 0, 2],
                    [0, 1, 1],
                    [1, 1, 0],
                    [2, 0, 1]], dtype=np.float64)
    return WorkedExample(X, W_Q, W_K, W_V)
