"""Multi-head attention: heads by hand, split/merge, and torch's nn.MultiheadAttention."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from illustrated.reference import (causal_mask, merge_heads, multi_head_attention,
                                   self_attention, split_heads)


def _weights(rng, d_model):
    return [rng.normal(size=(d_model, d_model)) for _ in range(4)]


def test_split_heads_takes_column_blocks():
    x = np.arange(2 * 6, dtype=float).reshape(2, 6)  # (seq=2, d_model=6)
    heads = split_heads(x, 3)
    assert heads.shape == (3, 2, 2)
    for h in range(3):
        np.testing.assert_array_equal(heads[h], x[:, 2 * h:2 * h + 2])


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3))
def test_merge_heads_inverts_split_heads(batch, seq, n_heads, d_k):
    x = np.random.default_rng(batch * seq).normal(size=(batch, seq, n_heads * d_k))
    heads = split_heads(x, n_heads)
    assert heads.shape == (batch, n_heads, seq, d_k)
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_one_head_with_identity_W_O_is_self_attention(rng):
    X = rng.normal(size=(5, 4))
    W_Q, W_K, W_V, _ = _weights(rng, 4)
    result = multi_head_attention(X, X, X, W_Q, W_K, W_V, np.eye(4), n_heads=1)
    single = self_attention(X, W_Q, W_K, W_V)
    np.testing.assert_allclose(result.output, single.z)
    np.testing.assert_allclose(result.weights[0], single.weights)


def test_equals_a_loop_over_heads_then_concat(rng):
    d_model, n_heads, d_k = 6, 3, 2
    X = rng.normal(size=(4, d_model))
    W_Q, W_K, W_V, W_O = _weights(rng, d_model)
    result = multi_head_attention(X, X, X, W_Q, W_K, W_V, W_O, n_heads)
    z_heads = []
    for h in range(n_heads):
        columns = slice(h * d_k, (h + 1) * d_k)
        head = self_attention(X, W_Q[:, columns], W_K[:, columns], W_V[:, columns])
        np.testing.assert_allclose(result.weights[h], head.weights)
        np.testing.assert_allclose(result.z[h], head.z)
        z_heads.append(head.z)
    concat = np.concatenate(z_heads, axis=-1)  # (seq, d_model)
    np.testing.assert_allclose(result.concat, concat)
    np.testing.assert_allclose(result.output, concat @ W_O)


def test_biases_are_added(rng):
    X = rng.normal(size=(3, 4))
    W = _weights(rng, 4)
    b_O = rng.normal(size=4)
    plain = multi_head_attention(X, X, X, *W, n_heads=2)
    shifted = multi_head_attention(X, X, X, *W, n_heads=2, b_O=b_O)
    np.testing.assert_allclose(shifted.output, plain.output + b_O)


def test_cross_attention_shapes(rng):
    query, memory = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 5, 8))
    result = multi_head_attention(query, memory, memory, *_weights(rng, 8), n_heads=4)
    assert result.q.shape == (2, 4, 3, 2)
    assert result.k.shape == result.v.shape == (2, 4, 5, 2)
    assert result.weights.shape == (2, 4, 3, 5)
    assert result.z.shape == (2, 4, 3, 2)
    assert result.concat.shape == result.output.shape == (2, 3, 8)


def _torch_mha(d_model, n_heads, seed):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # non-zero biases, so that copying them is tested too
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    return mha


@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_matches_torch_self_attention(rng, from_torch, n_heads):
    mha = _torch_mha(8, n_heads, seed=n_heads)
    x = rng.normal(size=(2, 5, 8))
    result = multi_head_attention(x, x, x, **from_torch.mha(mha), n_heads=n_heads)
    xt = torch.from_numpy(x)
    out, weights = mha(xt, xt, xt, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(result.output, out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(result.weights, weights.detach().numpy(), atol=1e-12)


def test_matches_torch_with_causal_mask(rng, from_torch):
    mha = _torch_mha(8, 2, seed=3)
    x = torch.from_numpy(rng.normal(size=(2, 4, 8)))
    mask = causal_mask(4)
    result = multi_head_attention(x.numpy(), x.numpy(), x.numpy(), **from_torch.mha(mha),
                                  n_heads=2, mask=mask)
    # torch's nn modules read a bool attn_mask the other way round: True = NOT allowed.
    out, _ = mha(x, x, x, attn_mask=torch.from_numpy(~mask))
    np.testing.assert_allclose(result.output, out.detach().numpy(), atol=1e-12)


def test_matches_torch_cross_attention_with_padding(rng, from_torch):
    mha = _torch_mha(6, 3, seed=5)
    query, memory = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 5, 6))
    keep = np.array([[True] * 5, [True, True, True, False, False]])  # (batch, seq_k)
    result = multi_head_attention(query, memory, memory, **from_torch.mha(mha), n_heads=3,
                                  mask=keep[:, None, None, :])  # (batch, 1, 1, seq_k)
    mt = torch.from_numpy(memory)
    out, _ = mha(torch.from_numpy(query), mt, mt, key_padding_mask=torch.from_numpy(~keep))
    np.testing.assert_allclose(result.output, out.detach().numpy(), atol=1e-12)
    np.testing.assert_array_equal(result.weights[1, :, :, 3:], 0.0)


# ---- bad input -------------------------------------------------------------------------------

def test_n_heads_must_divide_d_model(rng):
    x = rng.normal(size=(3, 6))
    with pytest.raises(ValueError, match=r"n_heads: d_model=6 must be divisible by n_heads, "
                                         r"got n_heads=4"):
        multi_head_attention(x, x, x, *_weights(rng, 6), n_heads=4)


@pytest.mark.parametrize("n_heads", [0, -2, 1.5, True])
def test_n_heads_must_be_a_positive_integer(rng, n_heads):
    x = rng.normal(size=(3, 6))
    with pytest.raises(ValueError, match=r"n_heads: expected a positive integer"):
        multi_head_attention(x, x, x, *_weights(rng, 6), n_heads=n_heads)


def test_split_heads_checks_n_heads():
    with pytest.raises(ValueError, match=r"n_heads: d_model=5 must be divisible"):
        split_heads(np.zeros((2, 5)), 2)


def test_W_O_shape(rng):
    x = rng.normal(size=(3, 4))
    W_Q, W_K, W_V, _ = _weights(rng, 4)
    with pytest.raises(ValueError, match=r"W_O: expected shape \(4, 4\) to match query's "
                                         r"d_model=4, got \(4, 3\)"):
        multi_head_attention(x, x, x, W_Q, W_K, W_V, np.zeros((4, 3)), n_heads=2)


def test_bias_shape(rng):
    x = rng.normal(size=(3, 4))
    with pytest.raises(ValueError, match=r"b_K: expected shape \(4,\).*got \(3,\)"):
        multi_head_attention(x, x, x, *_weights(rng, 4), n_heads=2, b_K=np.zeros(3))


def test_key_value_lengths_differ(rng):
    x = rng.normal(size=(3, 4))
    with pytest.raises(ValueError, match=r"value: expected seq_k=3 to match key, got \(2, 4\)"):
        multi_head_attention(x, x, x[:2], *_weights(rng, 4), n_heads=2)


def test_key_d_model_differs(rng):
    x = rng.normal(size=(3, 4))
    with pytest.raises(ValueError, match=r"key: expected shape \(\.\.\., seq_k, 4\).*"
                                         r"got \(3, 5\)"):
        multi_head_attention(x, np.zeros((3, 5)), x, *_weights(rng, 4), n_heads=2)


def test_mask_shape(rng):
    x = rng.normal(size=(3, 4))
    with pytest.raises(ValueError, match=r"mask: expected a shape broadcastable to "
                                         r"\(\.\.\., n_heads, seq_q, seq_k\)=\(2, 3, 3\)"):
        multi_head_attention(x, x, x, *_weights(rng, 4), n_heads=2,
                             mask=np.ones((3, 2), dtype=bool))
