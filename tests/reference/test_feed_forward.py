"""The position-wise feed-forward network: by hand and against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from illustrated.reference import feed_forward, relu


def test_relu():
    np.testing.assert_array_equal(relu([-2.0, 0.0, 3.0]), [0.0, 0.0, 3.0])


def test_small_example_by_hand():
    x = np.array([[1.0, -1.0]])
    W_1 = np.array([[1.0, -1.0, 2.0], [1.0, 1.0, 0.0]])  # hidden before ReLU: [0, -2, 2] + b_1
    b_1 = np.array([0.5, 0.0, -1.0])  # -> [0.5, -2, 1] -> ReLU -> [0.5, 0, 1]
    W_2 = np.array([[2.0, 0.0], [5.0, 5.0], [1.0, -1.0]])
    b_2 = np.array([0.0, 10.0])
    np.testing.assert_allclose(feed_forward(x, W_1, b_1, W_2, b_2), [[2.0, 9.0]])


def test_each_position_independently(rng):
    x = rng.normal(size=(5, 4))
    params = (rng.normal(size=(4, 8)), rng.normal(size=8), rng.normal(size=(8, 4)),
              rng.normal(size=4))
    whole = feed_forward(x, *params)
    for i in range(5):
        np.testing.assert_allclose(whole[i], feed_forward(x[i], *params))


def test_matches_torch(rng):
    torch.manual_seed(0)
    linear1 = torch.nn.Linear(4, 16, dtype=torch.float64)
    linear2 = torch.nn.Linear(16, 4, dtype=torch.float64)
    x = rng.normal(size=(2, 3, 4))
    expected = linear2(torch.relu(linear1(torch.from_numpy(x)))).detach().numpy()
    got = feed_forward(x, linear1.weight.detach().numpy().T, linear1.bias.detach().numpy(),
                       linear2.weight.detach().numpy().T, linear2.bias.detach().numpy())
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_W_1_shape():
    with pytest.raises(ValueError, match=r"W_1: expected shape \(4, d_ff\) to match x's "
                                         r"d_model=4, got \(3, 8\)"):
        feed_forward(np.zeros((2, 4)), np.zeros((3, 8)), None, np.zeros((8, 4)), None)


def test_W_2_shape():
    with pytest.raises(ValueError, match=r"W_2: expected shape \(8, 4\).*got \(8, 5\)"):
        feed_forward(np.zeros((2, 4)), np.zeros((4, 8)), None, np.zeros((8, 5)), None)


def test_b_1_shape():
    with pytest.raises(ValueError, match=r"b_1: expected shape \(8,\)"):
        feed_forward(np.zeros((2, 4)), np.zeros((4, 8)), np.zeros(4), np.zeros((8, 4)), None)
