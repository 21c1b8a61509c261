"""Train mode: every dropout sits where the paper puts it (§5.4), checked against hand-written
references that replay the same random stream (torch.manual_seed before both)."""
from dataclasses import replace

import pytest
import torch
from torch import nn

import illustrated as il
from illustrated.modules import (DecoderLayer, EncoderLayer, FeedForward, MultiHeadAttention,
                                 PositionalEncoding)
from illustrated.modules.residual import add_and_norm

CFG = replace(il.TINY, src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=4, d_ff=24,
              n_layers=2, dropout=0.5)


def randomize_norm(norm: nn.LayerNorm) -> nn.LayerNorm:
    """A LayerNorm whose scale and shift are not 1 and 0, so that where dropout sits matters."""
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    return norm


def same_draws(seed: int, *calls) -> list:
    """Each of ``calls`` run right after torch.manual_seed(seed): a module and its hand-written
    reference, drawing the same dropout masks."""
    results = []
    for call in calls:
        torch.manual_seed(seed)
        results.append(call())
    return results


@pytest.mark.parametrize("norm_first", [False, True])
def test_add_and_norm_train_mode_equals_hand_written(float64, norm_first):
    x, sub = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    norm, dropout = randomize_norm(nn.LayerNorm(8)), nn.Dropout(0.5).train()
    torch.manual_seed(1)
    out = add_and_norm(x, sub, norm, dropout, norm_first)
    torch.manual_seed(1)
    dropped = nn.functional.dropout(sub, 0.5, training=True)
    assert 0.3 < (dropped == 0).double().mean().item() < 0.7  # 80 values at rate 0.5
    ref = x + dropped if norm_first else norm(x + dropped)  # post-LN: LayerNorm(x + Dropout(S(x)))
    assert torch.allclose(out, ref, atol=1e-12)
    assert not torch.allclose(out, add_and_norm(x, sub, norm, nn.Identity(), norm_first))


def attend(attention: MultiHeadAttention, explicit: bool, *args) -> torch.Tensor:
    """The attention's output on the book's explicit path or through the batched kernel."""
    return attention(*args, return_attention=True)[0] if explicit else attention(*args)


# explicit: the layer asked for its weights, so the book's path ran (and the reference asks
# for them too); batched: the batched kernel ran (key-first on a CPU), with its own dropout draws.
PATHS = pytest.mark.parametrize("explicit", [True, False], ids=["explicit", "batched"])


@PATHS
def test_encoder_layer_train_mode_equals_hand_written(float64, explicit, recorded):
    layer = EncoderLayer(CFG).train()
    randomize_norm(layer.norm1), randomize_norm(layer.norm2)
    x = torch.randn(2, 5, 16)
    torch.manual_seed(3)
    out = recorded(layer, layer, x)[0] if explicit else layer(x)
    torch.manual_seed(3)  # the same draws in the same order: attention, dropout1, FFN, dropout2
    h = layer.norm1(x + layer.dropout1(attend(layer.self_attn, explicit, x, x, x)))
    ref = layer.norm2(h + layer.dropout2(layer.feed_forward(h)))
    assert torch.allclose(out, ref, atol=1e-12)
    layer.eval()
    assert not torch.allclose(out, layer(x))  # dropout did act in train mode
    torch.manual_seed(3)  # without attention dropout the rest of the layer still drops
    layer.self_attn.dropout.p = 0.0
    out = recorded(layer, layer, x)[0] if explicit else layer(x)
    torch.manual_seed(3)
    h = layer.norm1(x + layer.dropout1(attend(layer.self_attn, not explicit, x, x, x)))
    ref = layer.norm2(h + layer.dropout2(layer.feed_forward(h)))
    assert torch.allclose(out, ref, atol=1e-12)  # and the other path draws the same then


@PATHS
def test_decoder_layer_train_mode_equals_hand_written(float64, explicit, recorded):
    layer = DecoderLayer(CFG).train()
    for norm in (layer.norm1, layer.norm2, layer.norm3):
        randomize_norm(norm)
    y, memory = torch.randn(2, 4, 16), torch.randn(2, 6, 16)
    mask = il.causal_mask(4)
    torch.manual_seed(4)
    out = recorded(layer, layer, y, memory, tgt_mask=mask)[0] if explicit \
        else layer(y, memory, tgt_mask=mask)
    torch.manual_seed(4)
    h = layer.norm1(y + layer.dropout1(attend(layer.self_attn, explicit, y, y, y, mask)))
    h = layer.norm2(h + layer.dropout2(attend(layer.cross_attn, explicit, h, memory, memory)))
    ref = layer.norm3(h + layer.dropout3(layer.feed_forward(h)))
    assert torch.allclose(out, ref, atol=1e-12)
    layer.eval()
    assert not torch.allclose(out, layer(y, memory, tgt_mask=mask))  # dropout did act


def test_positional_dropout_in_train_mode(float64):
    pe = PositionalEncoding(16, 10, dropout=0.5).train()
    x = torch.randn(3, 10, 16)
    out, ref = same_draws(5, lambda: pe(x),
                          lambda: nn.functional.dropout(x + pe.pe[:10], 0.5, training=True))
    assert torch.equal(out, ref)
    zeros = (out == 0).double().mean().item()
    assert 0.4 < zeros < 0.6  # 480 values at rate 0.5
    kept = out != 0
    assert torch.allclose(out[kept], 2 * (x + pe.pe[:10])[kept])  # survivors scaled by 1/(1-p)
    assert torch.allclose(pe.eval()(x), x + pe.pe[:10])  # eval: no dropout


def test_transformer_applies_positional_dropout(float64):
    model = il.modules.Transformer(replace(CFG, dropout=0.3))
    assert model.positional.dropout.p == 0.3
    model.train()
    src = torch.randint(1, 11, (2, 7))
    emb = model.src_embed(src)
    torch.manual_seed(6)
    x = model.positional(emb)
    zeros = (x == 0).double().mean().item()
    assert 0.2 < zeros < 0.4  # 224 values at rate 0.3


def test_attention_dropout_on_the_weights_in_train_mode(float64):
    mha = MultiHeadAttention(16, 4, dropout=0.5).train()
    x = torch.randn(2, 5, 16)
    torch.manual_seed(7)
    out, weights = mha(x, x, x, return_attention=True)
    q, k, v = (mha.split_heads(w(x)) for w in (mha.w_q, mha.w_k, mha.w_v))
    torch.manual_seed(7)
    dropped = nn.functional.dropout((q @ k.transpose(-2, -1) / 2.0).softmax(-1), 0.5, training=True)
    assert 0.3 < (dropped == 0).double().mean().item() < 0.7  # 200 weights at rate 0.5
    assert torch.allclose(weights, dropped, atol=1e-12)
    ref = mha.w_o((dropped @ v).transpose(1, 2).reshape(2, 5, 16))
    assert torch.allclose(out, ref, atol=1e-12)


def test_feed_forward_dropout_after_the_relu_in_train_mode(float64):
    ff = FeedForward(16, 24, dropout=0.5).train()
    x = torch.randn(2, 5, 16)
    out, hidden = same_draws(
        8, lambda: ff(x),
        lambda: nn.functional.dropout(torch.relu(ff.linear1(x)), 0.5, training=True))
    assert torch.allclose(out, ff.linear2(hidden), atol=1e-12)
    assert not torch.allclose(out, ff.linear2(torch.relu(ff.linear1(x))))


@PATHS
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_train_mode_equals_its_layers(float64, norm_first, explicit, recorded):
    """The stack replays its layers' draws; pre-LN closes with a LayerNorm (scale 1, shift 0 at
    initialisation: the closed form), post-LN's last layer has already normalised."""
    encoder = il.modules.Encoder(replace(CFG, norm_first=norm_first)).train()
    x = torch.randn(2, 5, 16) * 3 + 1
    torch.manual_seed(9)
    out = recorded(encoder, encoder, x)[0] if explicit else encoder(x)
    torch.manual_seed(9)
    h = x
    for layer in encoder.layers:
        h = recorded(layer, layer, h)[0] if explicit else layer(h)
    if norm_first:
        mean, var = h.mean(-1, keepdim=True), h.var(-1, unbiased=False, keepdim=True)
        h = (h - mean) / torch.sqrt(var + 1e-5)
    assert torch.allclose(out, h, atol=1e-10)
    assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-10)  # normalised either way


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5])
@pytest.mark.parametrize("training", [False, True])
def test_our_dropout_is_torchs_with_its_random_stream(p, training):
    """il.modules.Dropout against nn.Dropout: the same output and the same draws from torch's
    random stream (the next random number after each agrees), in train and eval mode; where
    torch returns its input itself (eval, or p = 0), ours does too."""
    ours, theirs = il.modules.Dropout(p).train(training), nn.Dropout(p).train(training)
    x = torch.randn(3, 4, 8)
    (a, after_a), (b, after_b) = same_draws(
        3, lambda: (ours(x), torch.rand(1)), lambda: (theirs(x), torch.rand(1)))
    assert torch.equal(a, b) and torch.equal(after_a, after_b)
    assert (a is x) == (b is x) and (a is x) == (not training or p == 0)
    if training and p > 0:
        assert 0 < (a == 0).float().mean() < 1  # some zeroed, some kept
