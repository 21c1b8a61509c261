"""Positional encoding: a vector of sines and cosines added to each embedding (paper §3.5).

Two layouts: ``"interleaved"``, the paper's ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))``,
``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``; ``"concatenated"``, tensor2tensor's
``get_timing_signal_1d`` that the post's figures show: all sines, then all cosines, frequencies
geometric from 1 down to exactly 1/10000 over ``d_model/2 - 1`` steps. Its frequencies differ
slightly from the paper's, so the layouts are not a reordering of each other's columns.
"""
from __future__ import annotations

import math

import numpy as np

from .._args import check_size_limit
from ._checks import check_positive_int

__all__ = [
    "LAYOUTS",
    "positional_encoding",
    "positional_frequencies",
    "relative_position_matrix",
]

LAYOUTS = ("interleaved", "concatenated")
"""The accepted values of ``layout``."""


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout: expected one of {LAYOUTS}, got {layout!r}")


def _check_d_model(d_model: object) -> int:
    d_model = check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model: expected an even number (sines and cosines come in pairs), "
                         f"got {d_model}")
    return d_model


def _check_n_positions(n_positions: object, d_model: object) -> None:
    if isinstance(n_positions, bool) or not isinstance(n_positions, (int, np.integer)) \
            or n_positions < 0:
        raise ValueError(f"n_positions: expected a non-negative integer, got {n_positions!r}")
    d_model = _check_d_model(d_model)
    check_size_limit("n_positions", n_positions * d_model,
                     f"n_positions x d_model = {n_positions} x {d_model}")


def _sin_cos_columns(d_model: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The columns holding the sine and the cosine of each frequency, in frequency order."""
    half = d_model // 2
    if layout == "interleaved":
        return np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    return np.arange(half), np.arange(half, d_model)


def positional_frequencies(d_model: int, layout: str = "interleaved") -> np.ndarray:
    """The angular frequency of each sine/cosine pair: position ``pos`` gives angle ``pos * w_i``.

    Parameters
    ----------
    d_model: even. layout: ``"interleaved"``, ``w_i = 1 / 10000^(2i/d_model)`` (paper §3.5), or
    ``"concatenated"``, ``w_i = exp(-i * ln(10000) / max(d_model/2 - 1, 1))`` (tensor2tensor).
    Returns
    -------
    The frequencies, from 1 (i = 0) downwards.
    Shapes
    ------
    (d_model // 2,).
    Raises
    ------
    ValueError if ``d_model`` is not a positive even integer or ``layout`` is unknown.
    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
    """
    d_model = _check_d_model(d_model)
    _check_layout(layout)
    check_size_limit("d_model", d_model // 2, "d_model / 2")
    i = np.arange(d_model // 2)  # (d_model/2,)
    if layout == "interleaved":
        return 1.0 / 10000.0 ** (2 * i / d_model)
    num_timescales = d_model // 2
    log_timescale_increment = math.log(10000.0 / 1.0) / max(num_timescales - 1, 1)
    return np.exp(i * -log_timescale_increment)


def positional_encoding(n_positions: int, d_model: int, layout: str = "interleaved") -> np.ndarray:
    """The positional encoding vectors, one row per position, each value between -1 and 1.

    Row ``pos`` is added to the embedding at position ``pos``: the sine and cosine of ``pos * w_i``
    for each frequency of :func:`positional_frequencies`. ``d_model=4, layout="concatenated"``
    gives the post's example: position 1 -> [0.8415, 0.0001, 0.5403, 1.0].

    Parameters
    ----------
    n_positions: rows, from position 0 (0 gives an empty array); d_model: even; layout: as above.
    Returns
    -------
    float64 positional encodings.
    Shapes
    ------
    (n_positions, d_model).
    Raises
    ------
    ValueError if ``n_positions`` is not a non-negative integer, ``d_model`` is not a positive
    even integer, or ``layout`` is unknown.
    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5 (the PE
    formulas, no equation number).
    """
    _check_n_positions(n_positions, d_model)
    frequencies = positional_frequencies(d_model, layout)  # (d_model/2,)
    positions = np.arange(n_positions)[:, None]  # (n_positions, 1)
    angles = positions * frequencies  # (n_positions, d_model/2)
    sin_columns, cos_columns = _sin_cos_columns(d_model, layout)
    pe = np.zeros((n_positions, d_model))  # (n_positions, d_model)
    pe[:, sin_columns] = np.sin(angles)
    pe[:, cos_columns] = np.cos(angles)
    return pe


def relative_position_matrix(k: int, d_model: int, layout: str = "interleaved") -> np.ndarray:
    """The fixed matrix ``M_k`` with ``PE[pos + k] = M_k @ PE[pos]`` for every position ``pos``.

    Why the paper chose sinusoids: "for any fixed offset k, PE_{pos+k} can be represented as a
    linear function of PE_{pos}". Each (sin, cos) pair of frequency ``w`` is rotated by ``k * w``::

        sin(w (pos + k)) =  cos(w k) sin(w pos) + sin(w k) cos(w pos)
        cos(w (pos + k)) = -sin(w k) sin(w pos) + cos(w k) cos(w pos)

    Parameters
    ----------
    k: any integer offset (negative shifts back); d_model: even; layout: as positional_encoding.
    Returns
    -------
    An orthogonal matrix, block-diagonal (2x2 rotations) for the interleaved layout.
    Shapes
    ------
    (d_model, d_model).
    Raises
    ------
    ValueError if ``k`` is not an integer, ``d_model`` is not a positive even integer, or
    ``layout`` is unknown.
    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k: expected an integer offset, got {k!r}")
    check_size_limit("d_model", _check_d_model(d_model) ** 2, "d_model x d_model")
    frequencies = positional_frequencies(d_model, layout)  # (d_model/2,)
    cos_k = np.cos(k * frequencies)  # (d_model/2,)
    sin_k = np.sin(k * frequencies)  # (d_model/2,)
    sin_columns, cos_columns = _sin_cos_columns(d_model, layout)
    M = np.zeros((d_model, d_model))  # (d_model, d_model)
    M[sin_columns, sin_columns] = cos_k
    M[sin_columns, cos_columns] = sin_k
    M[cos_columns, sin_columns] = -sin_k
    M[cos_columns, cos_columns] = cos_k
    return M
