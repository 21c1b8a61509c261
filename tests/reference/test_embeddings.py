"""Embeddings: a lookup scaled by sqrt(d_model)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from illustrated.reference import embed


def test_lookup_times_sqrt_d_model():
    E = np.arange(12, dtype=float).reshape(3, 4)  # (vocab=3, d_model=4)
    np.testing.assert_array_equal(embed([2, 0], E), [[16, 18, 20, 22], [0, 2, 4, 6]])


def test_any_id_shape(rng):
    E = rng.normal(size=(5, 4))
    ids = np.array([[0, 1, 4], [3, 3, 2]])
    assert embed(ids, E).shape == (2, 3, 4)


def test_matches_torch_embedding_times_sqrt_d_model(rng):
    emb = torch.nn.Embedding(7, 9, dtype=torch.float64)
    ids = rng.integers(0, 7, size=(2, 5))
    expected = (emb(torch.from_numpy(ids)) * 3.0).detach().numpy()
    np.testing.assert_allclose(embed(ids, emb.weight.detach().numpy()), expected)


@pytest.mark.parametrize("bad", [-1, 3])
def test_id_outside_vocabulary(bad):
    with pytest.raises(ValueError, match=rf"token_ids: id {bad} is outside the vocabulary "
                                         r"\[0, 3\)"):
        embed([0, bad], np.zeros((3, 4)))


def test_float_ids():
    with pytest.raises(ValueError, match=r"token_ids: expected integer ids, got dtype float64"):
        embed([0.0, 1.0], np.zeros((3, 4)))


def test_embedding_matrix_must_be_2d():
    with pytest.raises(ValueError, match=r"embedding_matrix: expected shape \(vocab, d_model\)"):
        embed([0], np.zeros(3))
