"""Layer norm and add & norm: by hand, its invariants, and torch's nn.LayerNorm."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from illustrated.reference import add_and_norm, layer_norm, layer_norm_steps


def test_small_vector_by_hand():
    # x = [1, 2, 3, 6]: mean 3, biased variance (4 + 1 + 0 + 9) / 4 = 3.5
    steps = layer_norm_steps(np.array([1.0, 2.0, 3.0, 6.0]), eps=0.0)
    assert steps.mean == pytest.approx([3.0])
    assert steps.variance == pytest.approx([3.5])
    np.testing.assert_allclose(steps.normalized, np.array([-2, -1, 0, 3]) / np.sqrt(3.5))
    np.testing.assert_allclose(layer_norm([1.0, 2.0, 3.0, 6.0], eps=0.0), steps.normalized)


def test_eps_goes_inside_the_square_root():
    out = layer_norm([0.0, 2.0], eps=0.5)  # mean 1, variance 1
    np.testing.assert_allclose(out, [-1 / np.sqrt(1.5), 1 / np.sqrt(1.5)])


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(2, 8)),
              elements=st.floats(-100, 100)))
def test_mean_zero_and_variance_one_up_to_eps(x):
    eps = 1e-5
    out = layer_norm(x, eps=eps)
    variance = x.var(axis=-1)  # biased, as layer norm uses
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-9)
    np.testing.assert_allclose(out.var(axis=-1), variance / (variance + eps), atol=1e-9)


def test_gamma_and_beta_scale_and_shift(rng):
    x, gamma, beta = rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=5)
    np.testing.assert_allclose(layer_norm(x, gamma, beta), gamma * layer_norm(x) + beta)


@pytest.mark.parametrize("eps", [1e-5, 1e-6])
def test_matches_torch_layer_norm(rng, eps):
    norm = torch.nn.LayerNorm(6, eps=eps, dtype=torch.float64)
    with torch.no_grad():
        norm.weight.normal_()
        norm.bias.normal_()
    x = rng.normal(size=(2, 3, 6)) * 4 + 1
    expected = norm(torch.from_numpy(x)).detach().numpy()
    got = layer_norm(x, norm.weight.detach().numpy(), norm.bias.detach().numpy(), eps)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_add_and_norm_is_post_ln(rng):
    x, z = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(add_and_norm(x, z, gamma, beta), layer_norm(x + z, gamma, beta))


def test_add_and_norm_shapes_must_match():
    with pytest.raises(ValueError, match=r"sublayer_out: expected the shape of x \(2, 4\), "
                                         r"got \(2, 3\)"):
        add_and_norm(np.zeros((2, 4)), np.zeros((2, 3)))


def test_gamma_shape():
    with pytest.raises(ValueError, match=r"gamma: expected shape \(4,\) to match x's "
                                         r"d_model=4, got \(3,\)"):
        layer_norm(np.zeros((2, 4)), gamma=np.ones(3))


def test_beta_shape():
    with pytest.raises(ValueError, match=r"beta: expected shape \(4,\)"):
        layer_norm(np.zeros((2, 4)), beta=np.ones((1, 4)))


def test_negative_eps():
    with pytest.raises(ValueError, match=r"eps: expected a non-negative finite number"):
        layer_norm(np.zeros(4), eps=-1.0)


def test_scalar_input():
    with pytest.raises(ValueError, match=r"x: expected shape \(\.\.\., d_model\), got \(\)"):
        layer_norm(3.0)
