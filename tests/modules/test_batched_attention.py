"""The batched, key-first attention kernel and its mask bias against the book's step-by-step one."""
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import illustrated as il
from illustrated.modules import scaled_dot_product_attention
from illustrated.modules.batched_attention import attend_keys_first, mask_bias


def test_mask_bias_is_zero_where_allowed_and_minus_infinity_where_not():
    tokens = torch.tensor([[3, 4, 0], [5, 0, 0]])
    mask = il.padding_mask(tokens, 0)  # (2, 1, 1, 3)
    bias = mask_bias(mask, dtype=torch.float32)
    assert bias.shape == (2, 1, 3, 1)  # (batch, 1, seq_k, 1): broadcasts over heads and queries
    assert bias.untyped_storage().nbytes() == 6 * 4  # the mask's 6 entries, not one per head
    for b in range(2):
        for k in range(3):
            expected = 0.0 if tokens[b, k] != 0 else -math.inf
            assert torch.all(bias[b, 0, k] == expected)
    causal = mask_bias(il.causal_mask(3), torch.float64)
    assert causal.dtype == torch.float64 and causal.shape == (3, 3)  # (key, query)
    assert torch.equal(torch.isinf(causal), ~il.causal_mask(3).T)  # key k > query q is -inf


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

    z = attend_keys_first(q, k, v, mask)
    assert z.shape == (batch, n_heads, seq_q, d_k)
    assert torch.allclose(z, expected, atol=1e-12, rtol=0)
    unmasked, _ = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(attend_keys_first(q, k, v), unmasked, atol=1e-12, rtol=0)


@pytest.mark.parametrize("mask", [torch.tensor(True), torch.tensor([True])], ids=["0-d", "1-d"])
@pytest.mark.parametrize("seq", [1, 3])
def test_a_mask_of_fewer_than_two_dimensions_broadcasts_as_on_the_step_by_step_path(mask, seq):
    """hypothesis found it: a one-word source with mask=True (0-d or 1-d, which broadcast to any
    (batch, n_heads, seq_q, seq_k)) reached the fused kernel, which raised an IndexError from
    inside torch for one query. Now every kernel gives the step-by-step path's output."""
    torch.manual_seed(0)
    mha = il.modules.MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, seq, 8)
    expected, _ = mha(x, x, x, None, return_attention=True)
    torch.testing.assert_close(mha(x, x, x, mask), expected)
    torch.testing.assert_close(mha(x, x, x, mask, return_attention=True)[0], expected)
