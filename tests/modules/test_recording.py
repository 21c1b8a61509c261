"""Attention weights read from outside: every layer returns one tensor, and
``recording_attention`` asks each attention for its weights through hooks."""
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.modules import (Attention, Encoder, EncoderLayer, KVCache, MultiHeadAttention,
                                 Transformer, recording_attention)

CFG = replace(il.TINY, src_vocab_size=9, tgt_vocab_size=9, d_model=16, n_heads=4, d_ff=24,
              n_layers=2)
SRC, TGT = torch.tensor([[3, 4, 5, 0], [6, 7, 8, 5]]), torch.tensor([[1, 4, 6], [1, 5, 5]])


def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(CFG).eval()


def test_every_layer_and_stack_returns_one_tensor():
    m = model()
    x = torch.randn(2, 4, 16)
    outputs = [m.encoder.layers[0](x), m.encoder(x), m.decoder.layers[0](x[:, :3], x),
               m.decoder(x[:, :3], x), m.encode(SRC), m.decode(TGT, m.encode(SRC)), m(SRC, TGT)]
    assert all(isinstance(out, torch.Tensor) for out in outputs)
    with pytest.raises(TypeError, match="return_attention"):
        m.encode(SRC, return_attention=True)


def test_the_record_holds_each_attentions_weights_and_the_outputs_do_not_move(float64):
    m = model()
    with recording_attention(m) as record:
        logits = m(SRC, TGT)
    assert list(record) == [f"{stack}.layers.{i}.{kind}" for stack, kinds in
                            (("encoder", ["self_attn"]), ("decoder", ["self_attn", "cross_attn"]))
                            for i in range(2) for kind in kinds]
    assert all(len(calls) == 1 for calls in record.values())
    torch.testing.assert_close(logits, m(SRC, TGT), atol=1e-12, rtol=0)  # batched vs step by step
    attention = Attention.of(record)
    assert [w.shape for w in attention.encoder] == [(2, 4, 4, 4)] * 2
    assert [w.shape for w in attention.decoder_self] == [(2, 4, 3, 3)] * 2
    assert [w.shape for w in attention.decoder_cross] == [(2, 4, 3, 4)] * 2
    for w in attention.encoder + attention.decoder_self + attention.decoder_cross:
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-12, rtol=0)
    assert torch.all(attention.encoder[0][0, :, :, 3] == 0)  # the first source's padding
    assert torch.all(attention.decoder_self[1].triu(1) == 0)  # no word reads ahead


def test_the_weights_are_the_attentions_own(float64):
    """Layer 0's encoder weights equal those its attention returns when asked directly."""
    m = model()
    x = m.positional(m.src_embed(SRC))
    mask = il.padding_mask(SRC, 0)
    with recording_attention(m) as record:
        m.encode(SRC)
    _, weights = m.encoder.layers[0].self_attn(x, x, x, mask, return_attention=True)
    assert torch.equal(record["encoder.layers.0.self_attn"][0], weights)


def test_a_caller_who_asks_for_weights_inside_the_block_still_gets_them():
    attention = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 3, 16)
    with recording_attention(attention) as record:
        plain = attention(x, x, x)
        out, weights = attention(x, x, x, None, True)  # positional return_attention
        _, again = attention(x, x, x, return_attention=True)
    assert isinstance(plain, torch.Tensor) and torch.equal(weights, again)
    assert len(record[""]) == 3 and torch.equal(record[""][1], weights)


def test_every_cached_decoding_step_is_one_call():
    m = model()
    with torch.no_grad(), recording_attention(m) as record:
        memory, cache = m.encode(SRC), KVCache(CFG.n_layers)
        for t in range(TGT.shape[1]):
            m.decode(TGT[:, t:t + 1], memory, cache=cache)
    steps = record["decoder.layers.1.self_attn"]
    assert [w.shape for w in steps] == [(2, 4, 1, t + 1) for t in range(3)]
    assert [w.shape for w in record["decoder.layers.1.cross_attn"]] == [(2, 4, 1, 4)] * 3
    assert Attention.of(record).decoder_self[1] is steps[-1]  # the last call of each layer


def test_the_hooks_go_when_the_block_ends_even_on_an_error():
    m = model()
    with pytest.raises(ValueError, match="tgt_in"):
        with recording_attention(m):
            m(SRC, torch.tensor([[1, 99, 2], [1, 2, 3]]))  # 99 is outside the vocabulary
    for module in m.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks
    layer = EncoderLayer(CFG)
    with recording_attention(layer) as record:
        pass
    assert record == {"self_attn": []} and not layer.self_attn._forward_hooks


@pytest.mark.parametrize("value, error, match", [
    ("a model", TypeError, "model: expected a torch.nn.Module, got str 'a model'"),
    (torch.nn.Linear(4, 4), ValueError, "model: expected a module holding MultiHeadAttention"),
])
def test_bad_models_are_refused(value, error, match):
    with pytest.raises(error, match=match):
        with recording_attention(value):
            pass


def test_a_stack_records_under_its_own_names():
    encoder = Encoder(CFG).eval()
    with recording_attention(encoder) as record:
        encoder(torch.randn(1, 3, 16))
    assert list(record) == ["layers.0.self_attn", "layers.1.self_attn"]
    assert Attention.of(record) == Attention([], [], [])  # a Transformer's names only
