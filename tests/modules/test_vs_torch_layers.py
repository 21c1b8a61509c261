"""Our modules equal PyTorch's own layers once the weights are copied across (float64, dropout 0)."""
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import illustrated as il
from illustrated.modules import (DecoderLayer, EncoderLayer, MultiHeadAttention,
                                 scaled_dot_product_attention)

CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=4, d_ff=24,
              n_layers=2, dropout=0.0)


def copy_mha(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy torch's packed in-projection (q, k, v rows stacked) and out-projection into ours."""
    d = ours.d_model
    with torch.no_grad():
        for i, lin in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            lin.weight.copy_(theirs.in_proj_weight[i * d:(i + 1) * d])
            lin.bias.copy_(theirs.in_proj_bias[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)


def copy_layer(ours: nn.Module, theirs: nn.Module) -> None:
    """Copy an nn.TransformerEncoderLayer/DecoderLayer's weights into our layer."""
    copy_mha(ours.self_attn, theirs.self_attn)
    if hasattr(theirs, "multihead_attn"):
        copy_mha(ours.cross_attn, theirs.multihead_attn)
    ours.feed_forward.linear1.load_state_dict(theirs.linear1.state_dict())
    ours.feed_forward.linear2.load_state_dict(theirs.linear2.state_dict())
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(theirs, name):
            getattr(ours, name).load_state_dict(getattr(theirs, name).state_dict())


@pytest.mark.parametrize("masked", [False, True])
def test_attention_equals_torch_sdpa(float64, masked):
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 7, 4), torch.randn(2, 3, 7, 6)
    mask = torch.rand(5, 7) > 0.4 if masked else None
    if mask is not None:
        mask[:, 0] = True  # every query keeps at least one key
    z, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.allclose(z, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-12)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 5))


def test_multi_head_equals_nn_multihead_attention(float64):
    theirs = nn.MultiheadAttention(16, 4, batch_first=True)
    ours = MultiHeadAttention(16, 4)
    copy_mha(ours, theirs)
    query, memory = torch.randn(3, 5, 16), torch.randn(3, 7, 16)
    key_padding = torch.zeros(3, 7, dtype=torch.bool)
    key_padding[1, 5:] = True  # torch: True = ignore
    out, w = ours(query, memory, memory, mask=~key_padding[:, None, None, :], return_attention=True)
    ref, ref_w = theirs(query, memory, memory, key_padding_mask=key_padding,
                        average_attn_weights=False)
    assert torch.allclose(out, ref, atol=1e-12)
    assert torch.allclose(w, ref_w, atol=1e-12)


def test_layer_norm_equals_numpy_reference(float64):
    """The layer's norm against the NumPy reference and the closed form, not torch against itself."""
    x = torch.randn(2, 3, 16) * 5 + 2
    layer = EncoderLayer(CFG)
    with torch.no_grad():  # a scale and shift that are not 1 and 0
        layer.norm1.weight.uniform_(0.5, 1.5)
        layer.norm1.bias.uniform_(-1.0, 1.0)
    out = layer.norm1(x).detach().numpy()
    gamma, beta = layer.norm1.weight.detach().numpy(), layer.norm1.bias.detach().numpy()
    assert np.allclose(out, il.reference.layer_norm(x.numpy(), gamma, beta, eps=1e-5), atol=1e-12)
    xn = x.numpy()
    mean, var = xn.mean(-1, keepdims=True), xn.var(-1, keepdims=True)  # biased variance
    assert np.allclose(out, gamma * (xn - mean) / np.sqrt(var + 1e-5) + beta, atol=1e-12)


def copied_layers(ours_class, theirs_class, norm_first: bool):
    """Torch's ``theirs_class`` layer at CFG's sizes (eval mode) and our ``ours_class`` one
    holding its weights, both post-LN or both pre-LN."""
    theirs = theirs_class(16, 4, 24, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    ours = ours_class(replace(CFG, norm_first=norm_first)).eval()
    copy_layer(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_torch(float64, norm_first):
    ours, theirs = copied_layers(EncoderLayer, nn.TransformerEncoderLayer, norm_first)
    x = torch.randn(3, 6, 16)
    pad = torch.zeros(3, 6, dtype=torch.bool)
    pad[2, 4:] = True
    ref = theirs(x, src_key_padding_mask=pad)
    out = ours(x, mask=~pad[:, None, None, :])
    keep = ~pad  # torch's fast path may zero padded rows; compare the real positions
    assert torch.allclose(out[keep], ref[keep], atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_torch(float64, norm_first):
    ours, theirs = copied_layers(DecoderLayer, nn.TransformerDecoderLayer, norm_first)
    x, memory = torch.randn(3, 5, 16), torch.randn(3, 6, 16)
    causal = il.causal_mask(5)
    ref = theirs(x, memory, tgt_mask=~causal)
    assert torch.allclose(ours(x, memory, tgt_mask=causal), ref, atol=1e-10)


def test_whole_stack_equals_nn_transformer(float64):
    """Encoder and decoder stacks (post-LN) equal nn.Transformer's with the same weights."""
    ours = il.modules.Transformer(CFG).eval()
    theirs = nn.Transformer(16, 4, 2, 2, 24, dropout=0.0, batch_first=True).eval()
    for a, b in zip(ours.encoder.layers, theirs.encoder.layers):
        copy_layer(a, b)
    for a, b in zip(ours.decoder.layers, theirs.decoder.layers):
        copy_layer(a, b)
    src, tgt = torch.randn(2, 6, 16), torch.randn(2, 4, 16)
    # nn.Transformer adds a final LayerNorm to both stacks; ours (post-LN, like the paper) does not,
    # so compare layer by layer through the stacks with torch's final norms removed.
    theirs.encoder.norm = nn.Identity()
    theirs.decoder.norm = nn.Identity()
    memory = ours.encoder(src)
    ref = theirs(src, tgt, tgt_mask=~il.causal_mask(4))
    assert torch.allclose(ours.decoder(tgt, memory, tgt_mask=il.causal_mask(4)), ref, atol=1e-10)
