"""One decoder layer against torch's nn.TransformerDecoderLayer, post-LN and pre-LN."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from illustrated.reference import (DECODER_PARAM_KEYS, causal_mask, decoder_layer,
                                   init_decoder_params)

D_MODEL, N_HEADS, D_FF = 8, 4, 12

# from_torch.layer(*TORCH_LAYER, norm_first, seed): torch's layer at these sizes
TORCH_LAYER = (torch.nn.TransformerDecoderLayer, D_MODEL, N_HEADS, D_FF)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_torch_with_causal_and_padding_masks(rng, from_torch, norm_first):
    layer = from_torch.layer(*TORCH_LAYER, norm_first)
    x, memory = rng.normal(size=(2, 4, D_MODEL)), rng.normal(size=(2, 6, D_MODEL))
    keep = np.ones((2, 6), dtype=bool)
    keep[1, 4:] = False  # the second source sentence has two padding positions
    tgt_mask = causal_mask(4)
    # torch's nn modules read bool masks the other way round: True = NOT allowed.
    expected = layer(torch.from_numpy(x), torch.from_numpy(memory),
                     tgt_mask=torch.from_numpy(~tgt_mask),
                     memory_key_padding_mask=torch.from_numpy(~keep)).detach().numpy()
    result = decoder_layer(x, memory, from_torch.decoder(layer), N_HEADS,
                           src_mask=keep[:, None, None, :], tgt_mask=tgt_mask,
                           norm_first=norm_first)
    np.testing.assert_allclose(result.output, expected, atol=1e-10)
    assert result.self_attention.weights.shape == (2, N_HEADS, 4, 4)
    assert result.cross_attention.weights.shape == (2, N_HEADS, 4, 6)
    np.testing.assert_array_equal(result.cross_attention.weights[1, ..., 4:], 0.0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_torch_without_masks(rng, from_torch, norm_first):
    layer = from_torch.layer(*TORCH_LAYER, norm_first, seed=7)
    x, memory = rng.normal(size=(3, D_MODEL)), rng.normal(size=(5, D_MODEL))  # unbatched
    expected = layer(torch.from_numpy(x), torch.from_numpy(memory)).detach().numpy()
    result = decoder_layer(x, memory, from_torch.decoder(layer), N_HEADS, norm_first=norm_first)
    np.testing.assert_allclose(result.output, expected, atol=1e-10)


def test_causal_mask_means_no_leak_from_the_future(rng):
    params = init_decoder_params(D_MODEL, D_FF, seed=1)
    x, memory = rng.normal(size=(5, D_MODEL)), rng.normal(size=(3, D_MODEL))
    out = decoder_layer(x, memory, params, N_HEADS, tgt_mask=causal_mask(5)).output
    x_changed = x.copy()
    x_changed[3:] = rng.normal(size=(2, D_MODEL))
    changed = decoder_layer(x_changed, memory, params, N_HEADS, tgt_mask=causal_mask(5)).output
    np.testing.assert_allclose(changed[:3], out[:3])
    assert not np.allclose(changed[3:], out[3:])


def test_init_decoder_params():
    params = init_decoder_params(D_MODEL, D_FF)
    assert set(params) == set(DECODER_PARAM_KEYS)
    assert len(DECODER_PARAM_KEYS) == 8 + 8 + 4 + 6


def test_missing_key_is_named(rng):
    params = init_decoder_params(D_MODEL, D_FF)
    del params["cross_W_K"]
    with pytest.raises(ValueError, match=r"params: missing key 'cross_W_K'"):
        decoder_layer(rng.normal(size=(3, D_MODEL)), rng.normal(size=(2, D_MODEL)), params,
                      N_HEADS)


def test_wrong_param_shape_is_named(rng):
    params = init_decoder_params(D_MODEL, D_FF)
    params["self_b_O"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"params\['self_b_O'\]: expected shape "
                                         r"\(d_model,\)=\(8,\), got \(3,\)"):
        decoder_layer(rng.normal(size=(3, D_MODEL)), rng.normal(size=(2, D_MODEL)), params,
                      N_HEADS)


def test_memory_d_model_must_match(rng):
    with pytest.raises(ValueError, match=r"memory: expected shape \(\.\.\., src_len, 8\) to "
                                         r"match x's d_model=8, got \(2, 6\)"):
        decoder_layer(rng.normal(size=(3, D_MODEL)), rng.normal(size=(2, 6)),
                      init_decoder_params(D_MODEL, D_FF), N_HEADS)


def test_tgt_mask_shape(rng):
    with pytest.raises(ValueError, match=r"mask: expected a shape broadcastable"):
        decoder_layer(rng.normal(size=(3, D_MODEL)), rng.normal(size=(2, D_MODEL)),
                      init_decoder_params(D_MODEL, D_FF), N_HEADS, tgt_mask=causal_mask(4))


@pytest.mark.parametrize("size", [0, -1, 2.0])
def test_causal_mask_size(size):
    with pytest.raises(ValueError, match=r"size: expected a positive integer"):
        causal_mask(size)
