"""The compute functions behind chapters 03 and 04, against the package and closed forms."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.data import Vocab
from illustrated.explain import attention as E

SENTENCE = "the animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def small():
    """An untrained two-layer model with a vocabulary of the post's sentence (fast, seeded)."""
    vocab = Vocab.build([SENTENCE, "the animal didn't cross the street because it was too wide"])
    cfg = replace(il.TINY, src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), d_model=16,
                  n_heads=4, d_ff=16, n_layers=2)
    il.set_seed(0)
    return il.modules.Transformer(cfg).eval(), vocab


def test_encoder_attention_is_what_the_model_returns(small):
    model, vocab = small
    model.train()
    att = E.encoder_self_attention(model, vocab, SENTENCE)
    assert model.training  # the mode is restored
    assert att.tokens == SENTENCE.split()
    assert att.weights.shape == (2, 4, 11, 11)
    np.testing.assert_allclose(att.weights.sum(-1), 1.0, atol=1e-6)
    model.eval()
    src = torch.tensor([vocab.encode(SENTENCE)])
    with torch.no_grad():
        _, attention = model(src, torch.tensor([[vocab.bos_id]]), return_attention=True)
    for layer in range(2):
        np.testing.assert_allclose(att.weights[layer], attention.encoder[layer][0].numpy(),
                                   atol=1e-6)


def test_word_attention_is_the_row_of_the_word(small):
    model, vocab = small
    full = E.encoder_self_attention(model, vocab, SENTENCE)
    by_word = E.word_attention(model, vocab, SENTENCE, "it")
    by_position = E.word_attention(model, vocab, SENTENCE, 7)
    assert by_word.query == by_position.query == 7
    np.testing.assert_array_equal(by_word.weights, full.weights[:, :, 7, :])
    np.testing.assert_array_equal(by_word.weights, by_position.weights)


@pytest.mark.parametrize("word", ["giraffe", 11, -1])
def test_word_attention_rejects_a_missing_word(small, word):
    model, vocab = small
    with pytest.raises(ValueError, match="word"):
        E.word_attention(model, vocab, SENTENCE, word)


def test_unknown_words_and_empty_sentences_are_rejected(small):
    model, vocab = small
    with pytest.raises(ValueError, match="sentence"):
        E.encoder_self_attention(model, vocab, "the giraffe was tired")
    with pytest.raises(ValueError, match="sentence"):
        E.encoder_self_attention(model, vocab, "  ")


def _att(weights_by_word: dict[str, float], tokens: list[str]) -> E.WordAttention:
    w = np.zeros((1, 2, len(tokens)))
    for word, value in weights_by_word.items():
        w[0, 0, tokens.index(word)] = value
    w[0, 1, :] = 1 / len(tokens)  # head 1 attends uniformly
    return E.WordAttention(tokens, tokens.index("it"), w)


def test_resolution_scores_reward_the_head_that_follows_the_referent():
    tired, wide = SENTENCE.split(), SENTENCE.replace("tired", "wide").split()
    a = _att({"animal": 0.7, "street": 0.1}, tired)
    b = _att({"animal": 0.2, "street": 0.6}, wide)
    scores = E.resolution_scores(a, b, "animal", "street")
    np.testing.assert_allclose(scores, [[(0.7 - 0.1) + (0.6 - 0.2), 0.0]], atol=1e-12)
    assert E.best_head(scores) == (0, 0)
    with pytest.raises(ValueError, match="referent_a"):
        E.resolution_scores(a, b, "giraffe", "street")


def test_telling_heads_pick_distinct_heads_per_target():
    tokens = SENTENCE.split()
    w = np.full((2, 2, len(tokens)), 0.01)
    w[1, 0, tokens.index("animal")] = 0.8
    w[1, 0, tokens.index("tired")] = 0.15  # head (1, 0) likes both, but is taken by "animal"
    w[0, 1, tokens.index("tired")] = 0.1
    picked = E.telling_heads(E.WordAttention(tokens, 7, w), ["animal", "tired"])
    assert [(p.layer, p.head, p.target) for p in picked] == [(1, 0, "animal"), (0, 1, "tired")]
    assert picked[0].weight == pytest.approx(0.8)
    # a head that looks at both words goes to the one it looks at most, whatever the order
    w[1, 0, tokens.index("tired")] = 0.9
    picked = E.telling_heads(E.WordAttention(tokens, 7, w), ["animal", "tired"])
    assert [(p.layer, p.head, p.target) for p in picked][1] == (1, 0, "tired")
    assert picked[0].target == "animal" and (picked[0].layer, picked[0].head) != (1, 0)
    # "the" occurs twice: its weights are summed
    assert E.telling_heads(E.WordAttention(tokens, 7, w), ["the"])[0].weight == pytest.approx(0.02)
    with pytest.raises(ValueError, match="targets"):
        E.telling_heads(E.WordAttention(tokens, 7, w), ["a", "b", "c", "d", "e"])


def test_best_head_rejects_non_matrices():
    with pytest.raises(ValueError, match="scores"):
        E.best_head(np.zeros(3))


def test_scaled_softmax_gives_the_posts_numbers():
    result = E.scaled_softmax([112, 96], 64)
    np.testing.assert_array_equal(result.scaled, [14, 12])
    np.testing.assert_allclose(result.weights, [0.8808, 0.1192], atol=5e-5)
    np.testing.assert_allclose(result.weights, il.reference.softmax(np.array([14.0, 12.0])))


@pytest.mark.parametrize("bad", [0, -4, 2.5, True])
def test_scaled_softmax_rejects_a_bad_d_k(bad):
    with pytest.raises(ValueError, match="d_k"):
        E.scaled_softmax([1.0, 2.0], bad)


def test_scaled_softmax_rejects_bad_scores():
    with pytest.raises(ValueError, match="scores"):
        E.scaled_softmax([[1.0, 2.0]], 4)
    with pytest.raises(ValueError, match="scores"):
        E.scaled_softmax([np.inf, 1.0], 4)


def test_saturation_example_is_a_softmax_of_dot_products():
    ex = E.saturation_example(16, n_keys=5, seed=3)
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal(16), rng.standard_normal((5, 16))
    np.testing.assert_allclose(ex.scores, k @ q)
    np.testing.assert_allclose(ex.unscaled, il.reference.softmax(k @ q))
    np.testing.assert_allclose(ex.scaled, il.reference.softmax(k @ q / 4))
    with pytest.raises(ValueError, match="n_keys"):
        E.saturation_example(16, n_keys=1)


def test_saturation_curve_follows_the_papers_footnote():
    curve = E.saturation_curve([1, 16, 256], n_keys=8, n_samples=400, seed=0)
    # variance of q . k is d_k (paper §3.2.1, footnote 4), within sampling error
    np.testing.assert_allclose(curve.score_variance / curve.d_k, 1.0, atol=0.15)
    assert np.all(np.diff(curve.max_weight_unscaled) > 0)  # unscaled: saturates
    assert curve.max_weight_unscaled[-1] > 0.9
    assert np.ptp(curve.max_weight_scaled) < 0.1  # scaled: stays put
    assert np.all(np.diff(curve.gradient_unscaled) < 0)  # gradients vanish without scaling
    # d_k = 1: scaling by 1 changes nothing
    assert curve.max_weight_scaled[0] == curve.max_weight_unscaled[0]


def test_jacobian_norm_matches_autograd():
    p = il.reference.softmax(np.array([[0.3, -1.0, 2.0]]))
    x = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(lambda t: t.softmax(-1), x)
    assert E._jacobian_norm(p)[0] == pytest.approx(float(jac.norm()))


def test_saturation_curve_rejects_bad_input():
    with pytest.raises(ValueError, match="d_k_values"):
        E.saturation_curve([])
    with pytest.raises(ValueError, match="d_k_values"):
        E.saturation_curve([4, 0])


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
def test_multi_head_example_slices_heads_like_the_package(n_heads):
    ex = E.multi_head_example(8, n_heads)
    assert ex.d_k == 8 // n_heads and ex.X.shape == (2, 8)
    np.testing.assert_array_equal(ex.X, np.round(ex.X))  # small integers
    for h in range(n_heads):
        w_q, w_k, w_v = ex.head_weights(h)
        assert w_q.shape == (8, ex.d_k)
        one = il.reference.self_attention(ex.X, w_q, w_k, w_v)  # the head on its own
        np.testing.assert_allclose(ex.result.q[h], one.q)
        np.testing.assert_allclose(ex.result.z[h], one.z)
    Q, K, V = ex.projections()
    np.testing.assert_allclose(Q, ex.X @ ex.W_Q)
    np.testing.assert_allclose(ex.result.output, ex.result.concat @ ex.W_O)
    # the same matrices whatever the number of heads
    np.testing.assert_array_equal(ex.W_Q, E.multi_head_example(8, 1).W_Q)


def test_multi_head_example_equals_the_torch_module():
    ex = E.multi_head_example(8, 2)
    mha = il.modules.MultiHeadAttention(8, 2).double()
    with torch.no_grad():
        for lin, W in ((mha.w_q, ex.W_Q), (mha.w_k, ex.W_K), (mha.w_v, ex.W_V), (mha.w_o, ex.W_O)):
            lin.weight.copy_(torch.from_numpy(W.T))
            lin.bias.zero_()
    x = torch.from_numpy(ex.X)[None]
    out, weights = mha(x, x, x, return_attention=True)
    np.testing.assert_allclose(out[0].detach().numpy(), ex.result.output, atol=1e-12)
    np.testing.assert_allclose(weights[0].detach().numpy(), ex.result.weights, atol=1e-12)


@pytest.mark.parametrize("kwargs, name", [({"d_model": 1}, "d_model"), ({"n_heads": 3}, "n_heads"),
                                          ({"words": []}, "words")])
def test_multi_head_example_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=name):
        E.multi_head_example(**kwargs)
    with pytest.raises(ValueError, match="head"):
        E.multi_head_example().head_weights(2)


def test_splitting_across_heads_costs_the_same_multiply_adds():
    rows = E.multiply_add_table(seq=10, d_model=512, heads=(1, 2, 4, 8, 16))
    totals = {row.total for row in rows}
    assert len(totals) == 1
    d, n = 512, 10
    assert rows[0].total == 4 * n * d * d + 2 * n * n * d
    assert [row.exponentials for row in rows] == [h * n * n for h in (1, 2, 4, 8, 16)]
    full = E.multiply_adds(10, 512, 8, d_k=512)  # eight heads of full width: eight times the work
    assert full.total == 8 * rows[0].total


@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_multiply_adds_match_torchs_flop_counter(n_heads):
    mha = il.modules.MultiHeadAttention(16, n_heads)
    counted = E.torch_flops(mha, torch.randn(1, 5, 16))
    assert counted == 2 * E.multiply_adds(5, 16, n_heads).total


def test_multiply_adds_reject_bad_sizes():
    with pytest.raises(ValueError, match="n_heads"):
        E.multiply_adds(10, 512, 3)
    with pytest.raises(ValueError, match="seq"):
        E.multiply_adds(0, 512, 8)
    with pytest.raises(ValueError, match="heads"):
        E.multiply_add_table(10, 512, heads=())
    with pytest.raises(ValueError, match="x"):
        E.torch_flops(il.modules.MultiHeadAttention(16, 2), torch.randn(5, 16))


def test_to_torch_multihead_computes_the_same(float64):
    ours = il.modules.MultiHeadAttention(16, 4)
    theirs = E.to_torch_multihead(ours)
    x = torch.randn(2, 6, 16)
    out, w = ours(x, x, x, return_attention=True)
    ref, ref_w = theirs(x, x, x, average_attn_weights=False)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w, ref_w)
    with pytest.raises(ValueError, match="mha"):
        E.to_torch_multihead(il.modules.MultiHeadAttention(16, 4, bias=False))
    with pytest.raises(ValueError, match="mha"):
        E.to_torch_multihead(torch.nn.Linear(3, 3))




def test_cross_attention_at_reads_the_step_that_wrote_the_word(small):
    model, vocab = small
    out = il.greedy_decode(model, vocab.encode(SENTENCE), bos_id=vocab.bos_id,
                           eos_id=vocab.eos_id, max_len=8)
    words = [vocab.tokens[i] for i in out if i != vocab.eos_id]
    target = words[-1]
    att = E.cross_attention_at(model, vocab, vocab, SENTENCE, target, max_len=8)
    step = words.index(target)
    assert att.output == words and att.step == step and att.source == SENTENCE.split()
    tgt_in = torch.tensor([[vocab.bos_id] + out[:step]])
    with torch.no_grad():
        _, attention = model(torch.tensor([vocab.encode(SENTENCE)]), tgt_in,
                             return_attention=True)
    for layer in range(2):  # the causal mask: later words do not change this step's attention
        np.testing.assert_allclose(att.weights[layer], attention.decoder_cross[layer][0, :, -1],
                                   atol=1e-6)
    with pytest.raises(ValueError, match="words"):
        E.cross_attention_at(model, vocab, vocab, SENTENCE, "<unk>-never", max_len=8)
