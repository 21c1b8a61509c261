"""One encoder layer against torch's nn.TransformerEncoderLayer, post-LN and pre-LN."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from illustrated.reference import (ENCODER_PARAM_KEYS, add_and_norm, encoder_layer,
                                   feed_forward, init_encoder_params, multi_head_attention)

D_MODEL, N_HEADS, D_FF = 8, 2, 16

# from_torch.layer(*TORCH_LAYER, norm_first, seed): torch's layer at these sizes
TORCH_LAYER = (torch.nn.TransformerEncoderLayer, D_MODEL, N_HEADS, D_FF)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_torch(rng, from_torch, norm_first):
    layer = from_torch.layer(*TORCH_LAYER, norm_first)
    x = rng.normal(size=(2, 5, D_MODEL))
    expected = layer(torch.from_numpy(x)).detach().numpy()
    result = encoder_layer(x, from_torch.encoder(layer), N_HEADS, norm_first=norm_first)
    np.testing.assert_allclose(result.output, expected, atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_torch_with_padding_mask(rng, from_torch, norm_first):
    layer = from_torch.layer(*TORCH_LAYER, norm_first, seed=1)
    x = rng.normal(size=(2, 4, D_MODEL))
    keep = np.array([[True, True, True, True], [True, True, False, False]])  # (batch, seq)
    expected = layer(torch.from_numpy(x),
                     src_key_padding_mask=torch.from_numpy(~keep)).detach().numpy()
    result = encoder_layer(x, from_torch.encoder(layer), N_HEADS,
                           mask=keep[:, None, None, :], norm_first=norm_first)
    np.testing.assert_allclose(result.output, expected, atol=1e-10)


def test_intermediate_steps_are_the_post_ln_recipe(rng):
    params = init_encoder_params(D_MODEL, D_FF, seed=3)
    x = rng.normal(size=(3, D_MODEL))
    result = encoder_layer(x, params, N_HEADS)
    attention = multi_head_attention(x, x, x, params["W_Q"], params["W_K"], params["W_V"],
                                     params["W_O"], N_HEADS)
    np.testing.assert_allclose(result.attention.output, attention.output)
    z = add_and_norm(x, attention.output)  # gamma ones, beta zeros at initialization
    np.testing.assert_allclose(result.z, z)
    ffn = feed_forward(z, params["W_1"], params["b_1"], params["W_2"], params["b_2"])
    np.testing.assert_allclose(result.ffn, ffn)
    np.testing.assert_allclose(result.output, add_and_norm(z, ffn))


def test_init_encoder_params():
    params = init_encoder_params(D_MODEL, D_FF, seed=0)
    assert set(params) == set(ENCODER_PARAM_KEYS)
    assert params["W_1"].shape == (D_MODEL, D_FF) and params["b_1"].shape == (D_FF,)
    np.testing.assert_array_equal(params["gamma_2"], 1.0)
    np.testing.assert_array_equal(init_encoder_params(D_MODEL, D_FF, seed=0)["W_Q"],
                                  params["W_Q"])


def test_missing_key_is_named(rng):
    params = init_encoder_params(D_MODEL, D_FF)
    del params["b_V"]
    with pytest.raises(ValueError, match=r"params: missing key 'b_V'"):
        encoder_layer(rng.normal(size=(3, D_MODEL)), params, N_HEADS)


def test_wrong_param_shape_is_named(rng):
    params = init_encoder_params(D_MODEL, D_FF)
    params["gamma_1"] = np.ones(D_MODEL + 1)
    with pytest.raises(ValueError, match=r"params\['gamma_1'\]: expected shape "
                                         r"\(d_model,\)=\(8,\), got \(9,\)"):
        encoder_layer(rng.normal(size=(3, D_MODEL)), params, N_HEADS)


def test_x_must_match_params_d_model(rng):
    params = init_encoder_params(D_MODEL, D_FF)
    with pytest.raises(ValueError, match=r"params\['W_1'\]: expected shape \(d_model, d_ff\) "
                                         r"with x's d_model=4, got \(8, 16\)"):
        encoder_layer(rng.normal(size=(3, 4)), params, N_HEADS)


def test_n_heads_must_divide(rng):
    with pytest.raises(ValueError, match=r"n_heads: d_model=8 must be divisible by n_heads"):
        encoder_layer(rng.normal(size=(3, D_MODEL)), init_encoder_params(D_MODEL, D_FF), 3)


def test_params_must_be_a_mapping(rng):
    with pytest.raises(ValueError, match=r"params: expected a Mapping"):
        encoder_layer(rng.normal(size=(3, D_MODEL)), [1, 2], N_HEADS)
