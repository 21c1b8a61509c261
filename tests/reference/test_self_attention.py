"""Self-attention: the post's numbers, the matrix form, masks, and torch's own function."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from illustrated.reference import (THINKING_MACHINES_SCALE, causal_mask,
                                   scaled_dot_product_attention, self_attention,
                                   thinking_machines_example)


@pytest.fixture
def post():
    """The Thinking Machines example run with the post's divide-by-8."""
    return self_attention(*thinking_machines_example(), scale=THINKING_MACHINES_SCALE)


def test_post_scores_112_and_96(post):
    np.testing.assert_array_equal(post.scores[0], [112.0, 96.0])


def test_post_scaled_14_and_12(post):
    assert THINKING_MACHINES_SCALE == 1 / np.sqrt(64)
    np.testing.assert_array_equal(post.scaled[0], [14.0, 12.0])


def test_post_softmax_088_and_012(post):
    np.testing.assert_allclose(post.weights[0], [0.8808, 0.1192], atol=5e-5)
    np.testing.assert_allclose(post.weights[0], [1 / (1 + np.exp(-2)), 1 / (1 + np.exp(2))])


def test_post_example_vectors(post):
    np.testing.assert_array_equal(post.q[0], [8, 6, 10])
    np.testing.assert_array_equal(post.k, [[7, 1, 5], [3, 2, 6]])
    np.testing.assert_array_equal(post.scores[1], [36.0, 38.0])


def test_steps_five_and_six_by_hand(post):
    # z1 = 0.88 * v1 + 0.12 * v2: multiply each value vector by its softmax score, then sum.
    z1 = post.weights[0, 0] * post.v[0] + post.weights[0, 1] * post.v[1]
    np.testing.assert_allclose(post.z[0], z1)


def test_vector_form_equals_matrix_form(rng):
    X, W_Q, W_K, W_V = (rng.normal(size=s) for s in [(5, 8), (8, 4), (8, 4), (8, 6)])
    result = self_attention(X, W_Q, W_K, W_V)
    for i in range(5):
        q_i = X[i] @ W_Q
        scores = np.array([q_i @ (X[j] @ W_K) for j in range(5)]) / np.sqrt(4)
        weights = np.exp(scores) / np.exp(scores).sum()
        z_i = sum(weights[j] * (X[j] @ W_V) for j in range(5))
        np.testing.assert_allclose(result.z[i], z_i)
    assert result.z.shape == (5, 6) and result.weights.shape == (5, 5)


def test_default_scale_is_one_over_sqrt_d_k(rng):
    X, W = rng.normal(size=(3, 4)), rng.normal(size=(4, 9))
    result = self_attention(X, W, W, W)
    np.testing.assert_allclose(result.scaled, result.scores / 3.0)


def test_permutation_equivariance_without_positions(rng):
    X, W_Q, W_K, W_V = (rng.normal(size=s) for s in [(6, 4), (4, 3), (4, 3), (4, 3)])
    perm = rng.permutation(6)
    z = self_attention(X, W_Q, W_K, W_V).z
    z_permuted = self_attention(X[perm], W_Q, W_K, W_V).z
    np.testing.assert_allclose(z_permuted, z[perm])


def test_causal_mask_rows():
    np.testing.assert_array_equal(causal_mask(3), [[True, False, False],
                                                   [True, True, False],
                                                   [True, True, True]])


def test_causal_mask_blocks_the_future(rng):
    X, W_Q, W_K, W_V = (rng.normal(size=s) for s in [(5, 4), (4, 3), (4, 3), (4, 3)])
    result = self_attention(X, W_Q, W_K, W_V, mask=causal_mask(5))
    np.testing.assert_array_equal(np.triu(result.weights, k=1), 0.0)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0)
    np.testing.assert_array_equal(result.weights[0], [1, 0, 0, 0, 0])
    # Leak test: changing the last word changes no earlier output.
    X_changed = X.copy()
    X_changed[-1] += 10.0
    changed = self_attention(X_changed, W_Q, W_K, W_V, mask=causal_mask(5))
    np.testing.assert_allclose(changed.z[:-1], result.z[:-1])
    assert not np.allclose(changed.z[-1], result.z[-1])


def test_masked_scores_become_minus_inf_only_inside_the_softmax(rng):
    X, W = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    result = self_attention(X, W, W, W, mask=causal_mask(3))
    assert np.isfinite(result.scaled).all()  # the step-3 scores are kept for display


def test_sdpa_matches_self_attention(rng):
    X, W_Q, W_K, W_V = (rng.normal(size=s) for s in [(4, 6), (6, 2), (6, 2), (6, 5)])
    result = self_attention(X, W_Q, W_K, W_V)
    Z, weights = scaled_dot_product_attention(result.q, result.k, result.v)
    np.testing.assert_allclose(Z, result.z)
    np.testing.assert_allclose(weights, result.weights)


@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_matches_torch(rng, masked):
    Q = rng.normal(size=(2, 3, 5, 4))  # (batch, n_heads, seq_q, d_k)
    K = rng.normal(size=(2, 3, 7, 4))  # (batch, n_heads, seq_k, d_k)
    V = rng.normal(size=(2, 3, 7, 6))  # (batch, n_heads, seq_k, d_v)
    mask = rng.random(size=(2, 1, 5, 7)) < 0.6 if masked else None
    if masked:
        mask[..., 0] = True  # every query may attend to at least one key
    Z, weights = scaled_dot_product_attention(Q, K, V, mask)
    expected = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (Q, K, V)),
        attn_mask=None if mask is None else torch.from_numpy(mask))
    np.testing.assert_allclose(Z, expected.numpy(), atol=1e-12)
    assert weights.shape == (2, 3, 5, 7)
    if masked:
        np.testing.assert_array_equal(weights[np.broadcast_to(~mask, weights.shape)], 0.0)


def test_sdpa_broadcasts_leading_dims(rng):
    Q = rng.normal(size=(2, 1, 3, 4))
    K, V = rng.normal(size=(1, 5, 6, 4)), rng.normal(size=(1, 5, 6, 2))
    Z, weights = scaled_dot_product_attention(Q, K, V)
    assert Z.shape == (2, 5, 3, 2) and weights.shape == (2, 5, 3, 6)
    Z_00, _ = scaled_dot_product_attention(Q[0, 0], K[0, 0], V[0, 0])
    np.testing.assert_allclose(Z[0, 0], Z_00)


def test_sdpa_custom_scale_matches_torch(rng):
    Q, K, V = (rng.normal(size=(3, 4)) for _ in range(3))
    Z, _ = scaled_dot_product_attention(Q, K, V, scale=0.3)
    expected = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (Q, K, V)),
                                              scale=0.3)
    np.testing.assert_allclose(Z, expected.numpy(), atol=1e-12)


# ---- bad input -------------------------------------------------------------------------------

def _sa_inputs(rng):
    return rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), \
        rng.normal(size=(4, 5))


def test_W_Q_mismatch_names_argument_and_shapes(rng):
    X, _, W_K, W_V = _sa_inputs(rng)
    with pytest.raises(ValueError, match=r"W_Q: expected shape \(4, d_k\) to match X's "
                                         r"d_model=4, got \(3, 2\)"):
        self_attention(X, np.zeros((3, 2)), W_K, W_V)


def test_W_K_must_match_W_Q_d_k(rng):
    X, W_Q, _, W_V = _sa_inputs(rng)
    with pytest.raises(ValueError, match=r"W_K: expected shape \(4, 2\).*got \(4, 3\)"):
        self_attention(X, W_Q, np.zeros((4, 3)), W_V)


def test_W_V_rows_must_match_d_model(rng):
    X, W_Q, W_K, _ = _sa_inputs(rng)
    with pytest.raises(ValueError, match=r"W_V: expected shape \(4, d_v\).*got \(5, 5\)"):
        self_attention(X, W_Q, W_K, np.zeros((5, 5)))


def test_X_must_be_2d(rng):
    _, W_Q, W_K, W_V = _sa_inputs(rng)
    with pytest.raises(ValueError, match=r"X: expected shape \(seq, d_model\), got \(4,\)"):
        self_attention(np.zeros(4), W_Q, W_K, W_V)


def test_mask_must_be_bool(rng):
    with pytest.raises(ValueError, match=r"mask: expected a bool array.*got dtype int64"):
        self_attention(*_sa_inputs(rng), mask=np.ones((3, 3), dtype=np.int64))


def test_mask_of_wrong_shape(rng):
    with pytest.raises(ValueError, match=r"mask: expected a shape broadcastable to "
                                         r"\(seq, seq\)=\(3, 3\), got \(2, 3\)"):
        self_attention(*_sa_inputs(rng), mask=np.ones((2, 3), dtype=bool))


def test_query_row_with_no_allowed_key_raises_not_nan(rng):
    mask = np.ones((3, 3), dtype=bool)
    mask[1] = False
    with pytest.raises(ValueError, match=r"mask: some query position may attend to no key"):
        self_attention(*_sa_inputs(rng), mask=mask)


@pytest.mark.parametrize("scale", [0.0, -1.0, np.inf])
def test_bad_scale(rng, scale):
    with pytest.raises(ValueError, match=r"scale: expected a positive finite number"):
        self_attention(*_sa_inputs(rng), scale=scale)


def test_sdpa_K_and_V_lengths_differ(rng):
    with pytest.raises(ValueError, match=r"V: expected shape \(\.\.\., 4, d_v\) to match K's "
                                         r"seq_k=4, got \(3, 2\)"):
        scaled_dot_product_attention(np.zeros((2, 2)), np.zeros((4, 2)), np.zeros((3, 2)))


def test_sdpa_d_k_differs(rng):
    with pytest.raises(ValueError, match=r"K: expected shape \(\.\.\., seq_k, 2\) to match Q's "
                                         r"d_k=2, got \(4, 3\)"):
        scaled_dot_product_attention(np.zeros((2, 2)), np.zeros((4, 3)), np.zeros((4, 2)))


def test_sdpa_leading_dims_do_not_broadcast():
    with pytest.raises(ValueError, match=r"Q, K, V: leading dimensions do not broadcast"):
        scaled_dot_product_attention(np.zeros((2, 3, 2)), np.zeros((3, 4, 2)),
                                     np.zeros((3, 4, 2)))


def test_sdpa_mask_may_not_add_dimensions():
    with pytest.raises(ValueError, match=r"mask: expected a shape broadcastable to "
                                         r"\(\.\.\., seq_q, seq_k\)=\(2, 4\)"):
        scaled_dot_product_attention(np.zeros((2, 2)), np.zeros((4, 2)), np.zeros((4, 2)),
                                     mask=np.ones((3, 2, 4), dtype=bool))
