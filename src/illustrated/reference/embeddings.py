"""Embeddings: turn each input word into a vector using an embedding algorithm (a lookup table).

The Transformer multiplies the looked-up vectors by sqrt(d_model) (paper §3.4).
"""
from __future__ import annotations

import math

import numpy as np

from ._checks import as_float_array, as_int_array, finite_result

__all__ = ["embed"]


@finite_result("embedding_matrix")
def embed(token_ids: object, embedding_matrix: object) -> np.ndarray:
    """Turn each input word into a vector: look up its row of the embedding matrix.

    ``embed(ids) = embedding_matrix[ids] * sqrt(d_model)``; the paper scales the shared
    embedding weights by sqrt(d_model) so that they are not drowned by the positional encoding.

    Parameters
    ----------
    token_ids : array_like of int
        Vocabulary ids, any shape.
    embedding_matrix : array_like
        One row per word of the vocabulary.

    Returns
    -------
    numpy.ndarray
        The scaled embeddings, one vector per id.

    Shapes
    ------
    ``token_ids`` (...); ``embedding_matrix`` (vocab, d_model); result (..., d_model).

    Raises
    ------
    ValueError
        If ``token_ids`` are not integers or lie outside [0, vocab), or ``embedding_matrix``
        is not 2-D.

    References
    ----------
    Post "Bringing The Tensors Into The Picture"; paper §3.4.
    """
    token_ids = as_int_array("token_ids", token_ids)
    embedding_matrix = as_float_array("embedding_matrix", embedding_matrix)
    if embedding_matrix.ndim != 2:
        raise ValueError(f"embedding_matrix: expected shape (vocab, d_model), "
                         f"got {embedding_matrix.shape}")
    vocab, d_model = embedding_matrix.shape
    outside = (token_ids < 0) | (token_ids >= vocab)
    if outside.any():
        raise ValueError(f"token_ids: id {token_ids[outside].flat[0]} is outside the "
                         f"vocabulary [0, {vocab})")
    return embedding_matrix[token_ids] * math.sqrt(d_model)  # (..., d_model)
