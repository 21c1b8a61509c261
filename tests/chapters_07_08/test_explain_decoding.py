"""Compute functions of chapter 07 against the package's own decoding and modules."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.explain import decoding as D

SENTENCE, TARGET = "je suis étudiant", "i am a student"


def _greedy(model, src_vocab, tgt_vocab, sentence, max_len=20):
    return il.greedy_decode(model, src_vocab.encode(sentence), bos_id=tgt_vocab.bos_id,
                            eos_id=tgt_vocab.eos_id, max_len=max_len)


@pytest.mark.parametrize("sentence", ["je suis étudiant", "merci"])
def test_trace_chooses_what_greedy_decode_chooses(post_trained, sentence):
    model, sv, tv = post_trained
    trace = D.decoding_trace(model, sentence, sv, tv)
    assert trace.output_ids == _greedy(model, sv, tv, sentence)
    assert [s.chosen_id for s in trace.steps] == trace.output_ids
    assert trace.output_tokens == [tv.tokens[i] for i in trace.output_ids]
    assert trace.output_tokens[-1] == "<eos>"


def test_trace_equals_greedy_on_an_untrained_model_without_eos(fr_en_untrained):
    model, sv, tv = fr_en_untrained
    for sentence in ("je suis étudiant", "le chat noir"):
        trace = D.decoding_trace(model, sentence, sv, tv, max_len=7)
        assert trace.output_ids == _greedy(model, sv, tv, sentence, max_len=7)
        assert tv.bos_id not in trace.output_ids and tv.pad_id not in trace.output_ids


def test_trace_steps_feed_each_choice_back(post_trained):
    model, sv, tv = post_trained
    trace = D.decoding_trace(model, SENTENCE, sv, tv, top_k=4)
    assert trace.source_tokens == ["je", "suis", "étudiant"]
    assert trace.layer == model.cfg.n_layers - 1 and trace.head is None
    for i, s in enumerate(trace.steps):
        assert s.step == i + 1
        assert s.input_tokens == ["<bos>", *trace.output_tokens[:i]]
        assert s.cross_attention.shape == (i + 1, 3)
        np.testing.assert_allclose(s.cross_attention.sum(axis=1), 1.0, rtol=1e-6)
        np.testing.assert_allclose(s.probs.sum(), 1.0)
        assert s.probs.shape == (len(tv),)
        assert len(s.top_tokens) == 4 and np.all(np.diff(s.top_probs) <= 0)
        np.testing.assert_allclose(s.top_probs, [s.probs[tv.index(w)] for w in s.top_tokens])
        if i:  # earlier positions do not change when a word is appended (the causal mask)
            np.testing.assert_allclose(s.cross_attention[:-1], trace.steps[i - 1].cross_attention,
                                       atol=1e-6)


def test_trace_attention_is_the_models_cross_attention(post_trained):
    model, sv, tv = post_trained
    trace = D.decoding_trace(model, SENTENCE, sv, tv, layer=0, head=None)
    last = trace.steps[-1]
    src = torch.tensor([sv.encode(SENTENCE)])
    tgt = torch.tensor([[tv.index(w) for w in last.input_tokens]])
    with torch.no_grad():
        _, attention = model(src, tgt, return_attention=True)
    np.testing.assert_allclose(last.cross_attention, attention.decoder_cross[0][0].mean(0).numpy(),
                               atol=1e-6)
    heads = [D.decoding_trace(model, SENTENCE, sv, tv, layer=0, head=h).steps[-1].cross_attention
             for h in range(model.cfg.n_heads)]
    np.testing.assert_allclose(np.mean(heads, axis=0), last.cross_attention, atol=1e-6)


def test_trace_restores_training_mode(post_trained):
    model, sv, tv = post_trained
    model.train()
    try:
        D.decoding_trace(model, "merci", sv, tv)
        assert model.training
    finally:
        model.eval()


def test_memory_keys_values_are_the_cross_attention_projections(post_trained):
    model, sv, _ = post_trained
    kv = D.memory_keys_values(model, SENTENCE, sv)
    d, h = model.cfg.d_model, model.cfg.n_heads
    assert kv.memory.shape == (1, 3, d)
    assert len(kv.keys) == len(kv.values) == model.cfg.n_layers
    with torch.no_grad():
        memory = model.encode(torch.tensor([sv.encode(SENTENCE)]))
    # the traced step-by-step attention vs the model's fused kernel: float32 rounding apart
    np.testing.assert_allclose(kv.memory, memory.numpy(), atol=1e-5)
    for layer, k, v in zip(model.decoder.layers, kv.keys, kv.values):
        assert k.shape == v.shape == (1, h, 3, d // h)
        w = layer.cross_attn.w_k
        by_hand = (memory[0].double() @ w.weight.double().T + w.bias.double()).detach().numpy()  # (3, d)
        np.testing.assert_allclose(k[0].transpose(1, 0, 2).reshape(3, d), by_hand, atol=1e-5)


def test_output_step_is_linear_then_softmax(post_trained):
    model, sv, tv = post_trained
    step = D.output_softmax_step(model, SENTENCE, ["i"], sv, tv)
    assert step.input_tokens == ["<bos>", "i"]
    ref = il.reference.final_linear_softmax(step.decoder_output, step.weight, step.bias)
    np.testing.assert_allclose(ref.logits, step.logits, atol=1e-5)
    np.testing.assert_allclose(ref.probs, step.probs, atol=1e-6)
    with torch.no_grad():
        logits = model(torch.tensor([sv.encode(SENTENCE)]), torch.tensor([[tv.bos_id, tv.index("i")]]))
    # the traced step-by-step attention vs the model's fused kernel: float32 rounding apart
    np.testing.assert_allclose(step.logits, logits[0, -1].numpy(), atol=1e-5)
    assert step.chosen_id == _greedy(model, sv, tv, SENTENCE)[1]
    assert step.chosen_token == "am"


def test_masked_self_attention_is_zero_above_the_diagonal(post_trained):
    model, sv, tv = post_trained
    m = D.masked_self_attention(model, SENTENCE, TARGET, sv, tv, layer=-1, head=1)
    assert m.input_tokens == ["<bos>", "i", "am", "a", "student"]
    np.testing.assert_array_equal(m.mask, np.tril(np.ones((5, 5), dtype=bool)))
    assert np.all(m.weights[~m.mask] == 0)
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0, rtol=1e-6)
    assert m.layer == model.cfg.n_layers - 1 and m.head == 1


def test_without_causal_mask_copies_weights_and_keeps_the_rng(post_trained):
    model, sv, tv = post_trained
    state = torch.get_rng_state()
    twin = D.without_causal_mask(model)
    assert torch.equal(state, torch.get_rng_state())
    assert isinstance(twin, D.UnmaskedTransformer) and not twin.training
    for (n1, p1), (n2, p2) in zip(model.state_dict().items(), twin.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2)
    src = torch.tensor([sv.encode(SENTENCE)])
    tgt = torch.tensor([[tv.bos_id, *tv.encode(TARGET)]])
    with torch.no_grad():
        a, b = model(src, tgt), twin(src, tgt)
        first_a, first_b = model(src, tgt[:, :1]), twin(src, tgt[:, :1])
    torch.testing.assert_close(first_a, first_b)  # one position: nothing to hide
    assert not torch.allclose(a[:, :-1], b[:, :-1])
    double = D.without_causal_mask(copy.deepcopy(model).double())
    assert next(double.parameters()).dtype == torch.float64


def test_leak_test_earlier_outputs_do_not_move(post_trained, fr_en_untrained):
    for model, sv, tv in (post_trained, fr_en_untrained):
        # a word other than the one there ("<bos> i am a student": "i" at 1, "a" at 3)
        for position, new_word in ((1, "a"), (3, "am")):
            leak = D.leak_test(model, SENTENCE, TARGET, sv, tv, position=position,
                               new_word=new_word)
            assert leak.input_after[position] == new_word and leak.position == position
            assert np.all(leak.change_masked[:position] < 1e-12)
            assert leak.change_masked[position] > 1e-3  # a real change, not rounding
    model, sv, tv = fr_en_untrained
    leak = D.leak_test(model, SENTENCE, TARGET, sv, tv, position=3, new_word="the")
    assert leak.change_unmasked[:3].max() > 1e-4  # without the mask the future leaks back


def test_cheating_demo_trains_both_models_alike():
    result = D.cheating_demo("post", steps=3, batch_size=2, n_examples=2)
    assert result.corpus == "post"
    assert result.masked.steps == result.unmasked.steps == 3
    assert result.masked.loss[0] == pytest.approx(result.unmasked.loss[0], rel=0.5)
    assert len(result.examples) == 2 and result.examples[1][:2] == ("merci", "thanks")
    assert 0 <= result.masked_exact_match <= 1 and 0 <= result.unmasked_exact_match <= 1


@pytest.mark.parametrize("kwargs, match", [
    ({"layer": 5}, "layer"), ({"head": 9}, "head"), ({"top_k": 0}, "top_k"),
    ({"max_len": 0}, "max_len")])
def test_trace_rejects_bad_arguments(post_trained, kwargs, match):
    model, sv, tv = post_trained
    with pytest.raises(ValueError, match=match):
        D.decoding_trace(model, SENTENCE, sv, tv, **kwargs)


def test_bad_inputs_raise_value_errors(post_trained):
    model, sv, tv = post_trained
    with pytest.raises(ValueError, match="model"):
        D.decoding_trace("model", SENTENCE, sv, tv)
    with pytest.raises(ValueError, match="tgt_vocab"):
        D.decoding_trace(model, SENTENCE, sv, sv)
    with pytest.raises(ValueError, match="sentence"):
        D.decoding_trace(model, "  ", sv, tv)
    with pytest.raises(ValueError, match="prefix"):
        D.output_softmax_step(model, SENTENCE, "i am", sv, tv)
    with pytest.raises(ValueError, match="prefix"):
        D.output_softmax_step(model, SENTENCE, ["zebra"], sv, tv)
    with pytest.raises(ValueError, match="position"):
        D.leak_test(model, SENTENCE, TARGET, sv, tv, position=0, new_word="a")
    with pytest.raises(ValueError, match="new_word"):
        D.leak_test(model, SENTENCE, TARGET, sv, tv, position=1, new_word="zebra")
    with pytest.raises(ValueError, match="corpus"):
        D.cheating_demo("klingon")
