"""The loss function: compare the model's probability distribution with the target distribution.

A position's target is the one-hot vector of the correct word, or, with label smoothing, that
vector mixed with a little of the uniform distribution. Cross-entropy and KL divergence differ
by the target's entropy, a constant, so minimizing one minimizes the other.
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

from .._args import check_size_limit
from ._checks import as_float_array, as_int_array, check_min_ndim, check_positive_int
from .softmax import log_softmax

__all__ = ["cross_entropy", "cross_entropy_from_logits", "kl_divergence", "one_hot",
           "smooth_labels"]


def one_hot(index: object, size: int) -> np.ndarray:
    """One-hot encoding: a vector as wide as the vocabulary, 1 at the word's cell and 0 elsewhere.

    Parameters
    ----------
    index: the word's id(s) in the vocabulary; size: vocabulary size.
    Returns
    -------
    float64 one-hot vectors.
    Shapes
    ------
    index (...); returns (..., size).
    Raises
    ------
    ValueError if ``size`` is not a positive integer or an index is not an integer in [0, size).
    References
    ----------
    Post "Recap Of Training" (one-hot output vocabulary); paper §5.4 (the targets label smoothing
    softens).
    """
    size = check_positive_int("size", size)
    index = as_int_array("index", index)
    check_size_limit("size", max(index.size, 1) * size, "number of indices x size")
    outside = (index < 0) | (index >= size)
    if outside.any():
        raise ValueError(f"index: id {index[outside].flat[0]} is outside [0, {size})")
    return (index[..., None] == np.arange(size)).astype(np.float64)  # (..., size)


def _distributions(target: object, predicted: object) -> tuple[np.ndarray, np.ndarray]:
    """Both arguments as float64 arrays of the same shape with non-negative entries."""
    target = as_float_array("target", target, finite=False)
    predicted = as_float_array("predicted", predicted, finite=False)
    check_min_ndim("target", target, 1, "(..., vocab)")
    if predicted.shape != target.shape:
        raise ValueError(f"predicted: expected the shape of target {target.shape}, "
                         f"got {predicted.shape}")
    for name, p in (("target", target), ("predicted", predicted)):
        if not np.isfinite(p).all() or (p < 0).any():
            raise ValueError(f"{name}: expected probabilities (finite, >= 0), "
                             f"got values in [{p.min()}, {p.max()}]")
    return target, predicted


def cross_entropy(target: object, predicted: object) -> np.ndarray:
    """Cross-entropy: how far the predicted distribution is from the target distribution.

    ``H(p, q) = -sum_i p_i log q_i`` over the last axis, only where ``p_i > 0`` (0 log 0 = 0);
    ``inf`` where ``q_i = 0 < p_i``, which is the right value. Inputs need not sum to 1.

    Parameters
    ----------
    target: ``p``, e.g. :func:`one_hot` or :func:`smooth_labels`; predicted: ``q``, e.g. a softmax.
    Returns
    -------
    One cross-entropy per distribution (a scalar for 1-D inputs), in nats.
    Shapes
    ------
    target, predicted (..., vocab); returns (...).
    Raises
    ------
    ValueError if the shapes differ or an entry is negative, NaN or infinite.
    References
    ----------
    Post "The Loss Function"; paper §5.4 (label smoothing "hurts perplexity").
    """
    p, q = _distributions(target, predicted)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(q), 0.0)  # (..., vocab)
    return -terms.sum(axis=-1)  # (...,)


def kl_divergence(target: object, predicted: object) -> np.ndarray:
    """Kullback-Leibler divergence: the extra cost of predicting ``q`` when the truth is ``p``.

    ``KL(p || q) = sum_i p_i log(p_i / q_i)`` over the last axis, only where ``p_i > 0``; ``inf``
    where ``q_i = 0 < p_i``. Equals ``cross_entropy(p, q) - cross_entropy(p, p)``; 0 iff q = p.

    Parameters
    ----------
    target: ``p``; predicted: ``q``.
    Returns
    -------
    One divergence per distribution (a scalar for 1-D inputs), in nats.
    Shapes
    ------
    As :func:`cross_entropy`: (..., vocab) in, (...) out.
    Raises
    ------
    ValueError as :func:`cross_entropy` does (shapes that differ, an entry negative or not
    finite).
    References
    ----------
    Post "The Loss Function" (KL divergence); the paper (§5.4) names no loss beyond label
    smoothing.
    """
    p, q = _distributions(target, predicted)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)  # (..., vocab)
    return terms.sum(axis=-1)  # (...,)


def smooth_labels(target_ids: object, vocab_size: int, epsilon: float,
                  ignore_ids: Iterable[int] = ()) -> np.ndarray:
    """Label smoothing: the one-hot target with a little probability spread over every word.

    ``(1 - epsilon) * one_hot(id) + epsilon / vocab_size``: the uniform share goes to all words,
    the correct one included (it gets ``1 - epsilon + epsilon / vocab_size``), as PyTorch's
    ``F.cross_entropy(..., label_smoothing=epsilon)``. Ids in ``ignore_ids`` (e.g. padding; they
    may lie outside the vocabulary) get an all-zero row, so they add nothing to the loss.

    Parameters
    ----------
    target_ids: the correct word's id at each position; epsilon: in [0, 1], 0 gives one-hot.
    Returns
    -------
    float64 target distributions; each row sums to 1 (0 for ignored rows).
    Shapes
    ------
    target_ids (...); returns (..., vocab_size).
    Raises
    ------
    ValueError if ``epsilon`` is outside [0, 1], ``vocab_size`` is not a positive integer, or a
    (not ignored) id is outside [0, vocab_size).
    References
    ----------
    Post "The Loss Function"; paper §5.4 (label smoothing, epsilon_ls = 0.1; Szegedy et al.).
    """
    vocab_size = check_positive_int("vocab_size", vocab_size)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) \
            or not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon: expected a number in [0, 1], got {epsilon!r}")
    target_ids = as_int_array("target_ids", target_ids)
    check_size_limit("vocab_size", max(target_ids.size, 1) * vocab_size,
                     "number of ids x vocab_size")
    ignored = np.isin(target_ids, list(ignore_ids))  # (...,)
    # Ignored rows take id 0 for the moment; they are zeroed at the end.
    ids = np.where(ignored, 0, target_ids)  # (...,)
    outside = (ids < 0) | (ids >= vocab_size)
    if outside.any():
        raise ValueError(f"target_ids: id {ids[outside].flat[0]} is outside the vocabulary "
                         f"[0, {vocab_size})")
    uniform = np.full(vocab_size, 1.0 / vocab_size)  # (vocab,)
    smoothed = (1.0 - epsilon) * one_hot(ids, vocab_size) + epsilon * uniform  # (..., vocab)
    return np.where(ignored[..., None], 0.0, smoothed)  # (..., vocab)


def cross_entropy_from_logits(logits: object, target_ids: object, label_smoothing: float = 0.0,
                              *, ignore_index: int | None = None) -> float:
    """The training loss: cross-entropy between the (smoothed) targets and softmax(logits).

    The mean over positions of ``cross_entropy(smooth_labels(...), softmax(logits))``, through a
    log-softmax so it stays finite for large logits. Equals PyTorch's ``F.cross_entropy(logits,
    target_ids, label_smoothing=..., ignore_index=...)``: positions whose target is
    ``ignore_index`` count neither in the sum nor in the number of positions.

    Parameters
    ----------
    logits: the final linear layer's scores; label_smoothing: epsilon of :func:`smooth_labels`
    (0.1 in the paper); ignore_index: a target id (e.g. padding) left out.
    Returns
    -------
    The mean loss per counted position, in nats.
    Shapes
    ------
    logits (..., vocab); target_ids (...).
    Raises
    ------
    ValueError if ``target_ids``' shape is not ``logits.shape[:-1]``, an id is outside the
    vocabulary, ``label_smoothing`` is outside [0, 1], or every position is ignored.
    References
    ----------
    Post "The Loss Function"; paper §5.4 (label smoothing).
    """
    logits = as_float_array("logits", logits, finite=False)
    check_min_ndim("logits", logits, 1, "(..., vocab)")
    if logits.shape[-1] == 0 or np.isnan(logits).any() or np.isposinf(logits).any():
        raise ValueError(f"logits: expected finite numbers or -inf over at least one word, got "
                         f"shape {logits.shape}" + (" with NaN or +inf" if logits.size else ""))
    target_ids = as_int_array("target_ids", target_ids)
    if target_ids.shape != logits.shape[:-1]:
        raise ValueError(f"target_ids: expected shape {logits.shape[:-1]} to match logits "
                         f"{logits.shape}, got {target_ids.shape}")
    ignore_ids = () if ignore_index is None else (ignore_index,)
    n_counted = np.count_nonzero(~np.isin(target_ids, ignore_ids))
    if n_counted == 0:
        raise ValueError("target_ids: every position is ignored (or there are none); "
                         "the mean loss would be 0/0")
    target = smooth_labels(target_ids, logits.shape[-1], label_smoothing, ignore_ids)
    # Only where the target is > 0: a word with probability 0 and log-probability -inf (a
    # logit of -inf, or one far below the rest) adds 0, not 0 * -inf = NaN.
    log_probs = log_softmax(logits, axis=-1)  # (..., vocab)
    with np.errstate(invalid="ignore"):
        per_position = -np.where(target > 0, target * log_probs, 0.0).sum(axis=-1)  # (...,)
    return float(per_position.sum() / n_counted)
