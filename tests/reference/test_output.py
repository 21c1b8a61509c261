"""The final linear and softmax layer."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from illustrated.reference import final_linear_softmax


def test_logits_then_probabilities():
    x = np.array([[1.0, 0.0]])
    W = np.array([[2.0, 0.0, 1.0], [5.0, 5.0, 5.0]])
    result = final_linear_softmax(x, W, b=np.array([0.0, 2.0, 0.0]))
    np.testing.assert_array_equal(result.logits, [[2.0, 2.0, 1.0]])
    e = np.exp([2.0, 2.0, 1.0])
    np.testing.assert_allclose(result.probs, [e / e.sum()])


def test_matches_torch_linear_and_softmax(rng):
    linear = torch.nn.Linear(8, 6, dtype=torch.float64)
    x = rng.normal(size=(2, 4, 8))
    result = final_linear_softmax(x, linear.weight.detach().numpy().T,
                                  linear.bias.detach().numpy())
    logits = linear(torch.from_numpy(x))
    np.testing.assert_allclose(result.logits, logits.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(result.probs, torch.softmax(logits, -1).detach().numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(result.probs.sum(axis=-1), 1.0)


def test_W_shape():
    with pytest.raises(ValueError, match=r"W: expected shape \(4, vocab\) to match x's "
                                         r"d_model=4, got \(3, 6\)"):
        final_linear_softmax(np.zeros((2, 4)), np.zeros((3, 6)))


def test_b_shape():
    with pytest.raises(ValueError, match=r"b: expected shape \(6,\) to match W's vocab=6"):
        final_linear_softmax(np.zeros((2, 4)), np.zeros((4, 6)), np.zeros(4))
