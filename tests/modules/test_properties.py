"""Properties the architecture must have, checked on our modules."""
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.modules import FeedForward, MultiHeadAttention

CFG = replace(il.TINY, src_vocab_size=9, tgt_vocab_size=9, d_model=16, n_heads=4, d_ff=24,
              n_layers=2)


def test_config_d_k_and_rejections():
    assert il.PAPER_BASE.d_k == 64 and il.PAPER_BASE.n_layers == 6 and il.PAPER_BASE.d_ff == 2048
    with pytest.raises(ValueError, match="d_model.*n_heads=3"):
        replace(CFG, n_heads=3)
    with pytest.raises(ValueError, match="d_ff"):
        replace(CFG, d_ff=0)
    with pytest.raises(ValueError, match="dropout"):
        replace(CFG, dropout=1.5)


def test_causal_and_padding_masks():
    assert il.causal_mask(3).tolist() == [[True, False, False], [True, True, False],
                                          [True, True, True]]
    tokens = torch.tensor([[5, 6, 0], [7, 0, 0]])
    assert il.padding_mask(tokens, 0).shape == (2, 1, 1, 3)
    assert il.padding_mask(tokens, 0)[1, 0, 0].tolist() == [True, False, False]
    with pytest.raises(ValueError, match="size"):
        il.causal_mask(0)


def test_attention_rows_sum_to_one(float64):
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    _, w = mha(x, x, x, il.causal_mask(5), return_attention=True)
    assert torch.allclose(w.sum(-1), torch.ones(2, 4, 5))
    assert torch.all(w[..., 0, 1:] == 0)  # the first position sees only itself


def test_causal_mask_blocks_the_future(float64):
    """Changing a later target token changes no earlier decoder output."""
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5, 6]])
    tgt = torch.tensor([[1, 4, 5, 6, 7]])
    changed = tgt.clone()
    changed[0, 3] = 8
    a, b = model(src, tgt), model(src, changed)
    assert torch.allclose(a[0, :3], b[0, :3])
    assert not torch.allclose(a[0, 3:], b[0, 3:])


def test_self_attention_is_permutation_equivariant_without_positions(float64):
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(1, 6, 16)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    assert torch.allclose(mha(x, x, x)[:, perm], mha(x[:, perm], x[:, perm], x[:, perm]))


def test_feed_forward_is_position_wise(float64):
    ffn = FeedForward(16, 24)
    x = torch.randn(1, 4, 16)
    y = x.clone()
    y[0, 2] += 1.0
    changed = (ffn(x) - ffn(y)).abs().sum(-1)[0] > 0
    assert changed.tolist() == [False, False, True, False]


def test_padding_does_not_change_real_outputs(float64):
    model = il.modules.Transformer(CFG).eval()
    src = torch.tensor([[3, 4, 5]])
    padded = torch.tensor([[3, 4, 5, 0, 0]])
    tgt = torch.tensor([[1, 4, 6]])
    assert torch.allclose(model(src, tgt), model(padded, tgt))


def test_attention_of_every_layer_and_head(recorded):
    model = il.modules.Transformer(CFG)
    logits, att = recorded(model, model, torch.tensor([[3, 4, 5]]), torch.tensor([[1, 4]]))
    assert logits.shape == (1, 2, 9)
    assert [w.shape for w in att.encoder] == [(1, 4, 3, 3)] * 2
    assert [w.shape for w in att.decoder_self] == [(1, 4, 2, 2)] * 2
    assert [w.shape for w in att.decoder_cross] == [(1, 4, 2, 3)] * 2


@pytest.mark.parametrize("call, match", [
    (lambda m: m(torch.randn(2, 3, 8), torch.randn(2, 3, 16), torch.randn(2, 3, 16)), "query"),
    (lambda m: m(torch.randn(2, 3, 16), torch.randn(2, 4, 16), torch.randn(2, 5, 16)), "value"),
    (lambda m: m(*[torch.randn(2, 3, 16)] * 3, mask=torch.ones(3, 3)), "mask.*bool"),
    (lambda m: m(*[torch.randn(2, 3, 16)] * 3, mask=torch.ones(4, 4, dtype=torch.bool)),
     "mask.*broadcastable"),
    (lambda m: m(*[torch.randn(2, 3, 16)] * 3, mask=torch.zeros(3, 3, dtype=torch.bool)),
     "mask.*no key"),
])
def test_multi_head_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call(MultiHeadAttention(16, 4))


def test_transformer_bad_input():
    model = il.modules.Transformer(CFG)
    with pytest.raises(ValueError, match="src: token id 9 is outside"):
        model(torch.tensor([[3, 9]]), torch.tensor([[1]]))
    with pytest.raises(ValueError, match="tgt_in"):
        model(torch.tensor([[3, 4]]), torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="max_len"):
        model(torch.ones(1, CFG.max_len + 1, dtype=torch.long), torch.tensor([[1]]))
    with pytest.raises(ValueError, match="n_heads"):
        MultiHeadAttention(16, 3)
