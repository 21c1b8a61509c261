"""Each PyTorch module equals its NumPy twin in illustrated.reference (float64, copied weights)."""
from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated import reference as ref
from illustrated.parity import (attention_params, decoder_layer_params, encoder_layer_params,
                                to_numpy)

CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=8, n_heads=2, d_ff=12,
              n_layers=2)


def randomize(module: torch.nn.Module) -> torch.nn.Module:
    """Random weights everywhere, so biases and norms are not left at 0 and 1."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module.eval()


def test_attention(float64):
    mha = randomize(il.modules.MultiHeadAttention(8, 2))
    x, mem = torch.randn(2, 4, 8), torch.randn(2, 5, 8)
    mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    mask[1, ..., 3:] = False
    out, w = mha(x, mem, mem, mask, return_attention=True)
    p = attention_params(mha)
    expected = ref.multi_head_attention(to_numpy(x), to_numpy(mem), to_numpy(mem), p["W_Q"],
                                        p["W_K"], p["W_V"], p["W_O"], 2, b_Q=p["b_Q"],
                                        b_K=p["b_K"], b_V=p["b_V"], b_O=p["b_O"],
                                        mask=mask.numpy())
    np.testing.assert_allclose(to_numpy(out), expected.output, atol=1e-12)
    np.testing.assert_allclose(to_numpy(w), expected.weights, atol=1e-12)


def test_scaled_dot_product(float64):
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)
    z, w = il.modules.scaled_dot_product_attention(q, k, v)
    z_ref, w_ref = ref.scaled_dot_product_attention(to_numpy(q), to_numpy(k), to_numpy(v))
    np.testing.assert_allclose(to_numpy(z), z_ref, atol=1e-12)
    np.testing.assert_allclose(to_numpy(w), w_ref, atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
def test_positional_encoding(layout):
    pe = il.modules.PositionalEncoding(16, 30, layout)
    np.testing.assert_allclose(pe.pe.numpy(), ref.positional_encoding(30, 16, layout), atol=1e-6)


def test_embeddings_and_feed_forward(float64):
    emb = randomize(il.modules.Embeddings(11, 8))
    ids = torch.tensor([[3, 1, 10]])
    np.testing.assert_allclose(to_numpy(emb(ids))[0], ref.embed([3, 1, 10], to_numpy(emb.lut.weight)))
    ffn = randomize(il.modules.FeedForward(8, 12))
    x = torch.randn(1, 3, 8)
    np.testing.assert_allclose(
        to_numpy(ffn(x)), ref.feed_forward(to_numpy(x), to_numpy(ffn.linear1.weight.T),
                                           to_numpy(ffn.linear1.bias), to_numpy(ffn.linear2.weight.T),
                                           to_numpy(ffn.linear2.bias)), atol=1e-12)


def test_layer_norm(float64):
    norm = randomize(torch.nn.LayerNorm(8))
    x = torch.randn(3, 8) * 4
    np.testing.assert_allclose(to_numpy(norm(x)), ref.layer_norm(to_numpy(x), to_numpy(norm.weight),
                                                                 to_numpy(norm.bias)), atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer(float64, norm_first):
    layer = randomize(il.modules.EncoderLayer(replace(CFG, norm_first=norm_first)))
    x = torch.randn(2, 5, 8)
    expected = ref.encoder_layer(to_numpy(x), encoder_layer_params(layer), 2, norm_first=norm_first)
    np.testing.assert_allclose(to_numpy(layer(x)), expected.output, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(float64, norm_first):
    layer = randomize(il.modules.DecoderLayer(replace(CFG, norm_first=norm_first)))
    x, mem = torch.randn(2, 4, 8), torch.randn(2, 6, 8)
    expected = ref.decoder_layer(to_numpy(x), to_numpy(mem), decoder_layer_params(layer), 2,
                                 tgt_mask=ref.causal_mask(4), norm_first=norm_first)
    out = layer(x, mem, tgt_mask=il.causal_mask(4))
    np.testing.assert_allclose(to_numpy(out), expected.output, atol=1e-12)


def test_generator_and_loss(float64):
    gen = randomize(il.modules.Generator(8, 13))
    x = torch.randn(4, 8)
    logits = gen(x)
    out = ref.final_linear_softmax(to_numpy(x), to_numpy(gen.proj.weight.T), to_numpy(gen.proj.bias))
    np.testing.assert_allclose(to_numpy(logits), out.logits, atol=1e-12)
    np.testing.assert_allclose(to_numpy(logits.softmax(-1)), out.probs, atol=1e-12)
    targets = torch.tensor([0, 5, 12, 3])
    for eps in (0.0, 0.1):
        torch_loss = torch.nn.functional.cross_entropy(logits, targets, label_smoothing=eps)
        assert torch_loss.item() == pytest.approx(
            ref.cross_entropy_from_logits(out.logits, targets.numpy(), label_smoothing=eps), abs=1e-12)
