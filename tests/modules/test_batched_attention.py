"""The pieces of the batched, key-first attention path against the book's step-by-step one."""
import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import illustrated as il
from illustrated.modules import scaled_dot_product_attention
from illustrated.modules.batched_attention import (attend_keys_first, mask_bias, merge_heads,
                                                   project_heads)


def test_project_heads_puts_projection_i_head_h_sentence_b_at_i_h_times_batch_plus_b(float64):
    batch, seq, d_model, n_heads = 3, 4, 12, 3
    d_k = d_model // n_heads
    x = torch.randn(batch, seq, d_model)
    weights = [torch.randn(d_model, d_model) for _ in range(3)]
    biases = [torch.randn(d_model) for _ in range(3)]
    out = project_heads(x.view(batch * seq, d_model), weights, biases, n_heads, batch)
    assert len(out) == 3 and all(o.shape == (n_heads * batch, seq, d_k) for o in out)
    for i, (w, b) in enumerate(zip(weights, biases)):
        y = x @ w.T + b  # (batch, seq, d_model)
        for h in range(n_heads):
            for s in range(batch):
                assert torch.allclose(out[i][h * batch + s], y[s, :, h * d_k:(h + 1) * d_k],
                                      atol=1e-12, rtol=0)
    no_bias, = project_heads(x.view(-1, d_model), weights[1:2], [None], n_heads, batch)  # no bias
    assert torch.allclose(no_bias, out[1] - biases[1].view(n_heads, 1, 1, d_k).repeat_interleave(
        batch, 0).reshape(n_heads * batch, 1, d_k), atol=1e-12, rtol=0)


def test_merge_heads_is_the_concatenation_of_heads(float64):
    batch, seq, d_model, n_heads = 2, 5, 8, 4
    x = torch.randn(batch, seq, d_model)
    eye = torch.eye(d_model)
    heads, = project_heads(x.view(-1, d_model), [eye], [None], n_heads, batch)  # identity, split
    assert torch.equal(merge_heads(heads, batch), x.view(batch * seq, d_model))  # as token rows


def test_mask_bias_is_zero_where_allowed_and_minus_infinity_where_not():
    tokens = torch.tensor([[3, 4, 0], [5, 0, 0]])
    mask = il.padding_mask(tokens, 0)  # (2, 1, 1, 3)
    bias = mask_bias(mask, n_heads=2, dtype=torch.float32)
    assert bias.shape == (2, 2, 3, 1)  # (n_heads, batch, seq_k, 1): broadcasts over queries
    assert bias.untyped_storage().nbytes() == 6 * 4  # the mask's 6 entries, not one per head
    for h in range(2):
        for b in range(2):
            for k in range(3):
                expected = 0.0 if tokens[b, k] != 0 else -math.inf
                assert torch.all(bias[h, b, k] == expected)
    causal = mask_bias(il.causal_mask(3), 2, torch.float64)
    assert causal.dtype == torch.float64 and causal.shape == (2, 1, 3, 3)  # (heads, 1, key, query)
    assert torch.equal(torch.isinf(causal[0, 0]), ~il.causal_mask(3).T)  # key k > query q is -inf


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 3), n_heads=st.integers(1, 3), seq_q=st.integers(1, 6),
       seq_k=st.integers(1, 6), d_k=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_attend_keys_first_is_softmax_of_q_k_over_sqrt_d_k_plus_bias_times_v(batch, n_heads, seq_q,
                                                                             seq_k, d_k, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(batch, n_heads, n, d_k, generator=g, dtype=torch.float64)
               for n in (seq_q, seq_k, seq_k))
    mask = torch.rand(batch, 1, seq_q, seq_k, generator=g) < 0.6
    mask[..., 0] = True  # every query may attend to one key at least
    expected, _ = scaled_dot_product_attention(q, k, v, mask)  # (batch, n_heads, seq_q, d_k)

    def heads_first(x):  # (batch, n_heads, n, d) -> (n_heads * batch, n, d)
        return x.transpose(0, 1).reshape(n_heads * batch, *x.shape[2:])

    bias = mask_bias(mask, n_heads, torch.float64)
    z = attend_keys_first(heads_first(q), heads_first(k), heads_first(v), bias)
    assert torch.allclose(z, heads_first(expected), atol=1e-12, rtol=0)
    unmasked, _ = scaled_dot_product_attention(q, k, v)
    z = attend_keys_first(heads_first(q), heads_first(k), heads_first(v), None)
    assert torch.allclose(z, heads_first(unmasked), atol=1e-12, rtol=0)
