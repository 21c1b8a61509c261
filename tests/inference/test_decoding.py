"""Greedy decoding and beam search: equivalences, exhaustive optimality, ordering, bad input."""
import copy
import itertools
from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il

BOS, EOS, PAD = 1, 2, 0
CFG = replace(il.TINY, src_vocab_size=7, tgt_vocab_size=5, d_model=16, n_heads=2, d_ff=16,
              n_layers=1, max_len=16)


@pytest.fixture(scope="module")
def model():
    """An untrained but seeded model: its distributions are spread out, so beams differ."""
    il.set_seed(3)
    return il.modules.Transformer(CFG).eval()


def sequence_log_prob(model, src, hyp):
    """Sum of log-probs of ``hyp`` (bos/pad excluded after the log_softmax, as the contract says)."""
    with torch.no_grad():
        tgt_in = torch.tensor([[BOS, *hyp[:-1]]])
        log_probs = model(torch.tensor([src]), tgt_in).log_softmax(-1)[0]  # (len, vocab)
    return float(sum(log_probs[i, t] for i, t in enumerate(hyp)))


@pytest.mark.parametrize("src", [[3, 4, 5], [6], [3, 3, 4, 5, 6, 5]])
def test_beam_size_one_equals_greedy(model, src):
    greedy = il.greedy_decode(model, src, bos_id=BOS, eos_id=EOS, max_len=8)
    [(beam, score)] = il.beam_search(model, src, bos_id=BOS, eos_id=EOS, beam_size=1, max_len=8)
    assert beam == greedy
    assert score == pytest.approx(sequence_log_prob(model, src, greedy), abs=1e-5)


def test_wide_beam_finds_the_exhaustive_best(model):
    """With max_len 3 and 3 generatable words (bos, pad excluded) a beam of 27 keeps everything."""
    src, max_len = [3, 4, 5], 3
    words = [w for w in range(CFG.tgt_vocab_size) if w not in (BOS, PAD)]
    complete = []
    for length in range(1, max_len + 1):
        for hyp in itertools.product(words, repeat=length):
            ends = hyp[-1] == EOS
            if EOS in hyp[:-1] or (not ends and length < max_len):
                continue  # <eos> ends a hypothesis; without it only max_len ones are returned
            complete.append((list(hyp), sequence_log_prob(model, src, list(hyp))))
    best = max(complete, key=lambda item: item[1])
    [(found, score)] = il.beam_search(model, src, bos_id=BOS, eos_id=EOS, beam_size=27,
                                      max_len=max_len)
    assert found == best[0]
    assert score == pytest.approx(best[1], abs=1e-5)


def test_top_beams_sorted_distinct_and_scored(model):
    results = il.beam_search(model, [3, 4, 5], bos_id=BOS, eos_id=EOS, beam_size=4, top_beams=4,
                             max_len=6)
    scores = [s for _, s in results]
    assert len(results) == 4
    assert scores == sorted(scores, reverse=True)
    assert len({tuple(h) for h, _ in results}) == 4
    for hyp, score in results:
        assert score == pytest.approx(sequence_log_prob(model, [3, 4, 5], hyp), abs=1e-5)
        assert BOS not in hyp and PAD not in hyp


def test_length_penalty_divides_the_score(model):
    alpha = 0.6
    for hyp, score in il.beam_search(model, [3, 4], bos_id=BOS, eos_id=EOS, beam_size=3,
                                     top_beams=3, max_len=6, alpha=alpha):
        raw = sequence_log_prob(model, [3, 4], hyp)
        assert score == pytest.approx(raw / ((5 + len(hyp)) / 6) ** alpha, abs=1e-5)
    assert il.length_penalty(1, 0.6) == pytest.approx(1.0)
    assert il.length_penalty(7, 1.0) == pytest.approx(2.0)


def test_steps_trace_agrees_with_result(model):
    results, steps = il.beam_search(model, [3, 4, 5], bos_id=BOS, eos_id=EOS, beam_size=2,
                                    top_beams=2, max_len=6, return_steps=True)
    assert [s.step for s in steps] == list(range(1, len(steps) + 1))
    ended = {h for s in steps for h in s.finished} | {h for h in steps[-1].kept}
    for hyp, _ in results:
        assert tuple(hyp) in ended or len(hyp) == 6
    for s in steps:
        assert len(s.kept) <= 2
        assert [c for _, c in s.candidates] == sorted((c for _, c in s.candidates), reverse=True)


def test_max_len_counts_generated_tokens(model):
    out = il.greedy_decode(model, [3, 4, 5], bos_id=BOS, eos_id=EOS, max_len=2)
    assert 1 <= len(out) <= 2
    assert out[-1] == EOS or len(out) == 2


def test_decoding_restores_training_mode():
    il.set_seed(0)
    m = il.modules.Transformer(CFG).train()
    il.greedy_decode(m, [3], bos_id=BOS, eos_id=EOS, max_len=3)
    assert m.training
    il.beam_search(m, [3], bos_id=BOS, eos_id=EOS, max_len=3)
    assert m.training


def test_eval_mode_no_grad_inside_and_mode_restored_after_an_error():
    m = il.modules.Transformer(CFG).train()
    with pytest.raises(RuntimeError, match="inside"):
        with il.inference.decoding.EvalMode(m):
            assert not m.training and not torch.is_grad_enabled()
            raise RuntimeError("inside")
    assert m.training and torch.is_grad_enabled()
    m.eval()
    with il.inference.decoding.EvalMode(m):
        pass
    assert not m.training


@pytest.mark.parametrize("kwargs, match", [
    ({"beam_size": 0}, "beam_size"),
    ({"beam_size": 2, "top_beams": 3}, "top_beams"),
    ({"alpha": -1.0}, "alpha"),
    ({"max_len": 0}, "max_len"),
])
def test_beam_search_bad_arguments(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        il.beam_search(model, [3], bos_id=BOS, eos_id=EOS, **kwargs)


@pytest.mark.parametrize("src, match", [([], "src_ids"), ([3, 99], "src_ids.*99"),
                                        ([3] * 20, "max_len=16")])
def test_bad_sources(model, src, match):
    with pytest.raises(ValueError, match=match):
        il.greedy_decode(model, src, bos_id=BOS, eos_id=EOS)


def test_greedy_return_steps_mirror_the_output():
    import illustrated as il
    model, src_vocab, tgt_vocab = il.pretrained("fr-en")
    ids = src_vocab.encode("je suis étudiant")
    out, steps = il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                  return_steps=True)
    assert out == il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    assert [s.token for s in steps] == out and [s.step for s in steps] == [1, 2, 3, 4, 5]
    for s in steps:
        assert s.log_probs.shape == (len(tgt_vocab),)
        assert s.log_probs[tgt_vocab.bos_id] == s.log_probs[tgt_vocab.pad_id] == float("-inf")
        assert int(np.argmax(s.log_probs)) == s.token and s.log_prob == s.log_probs[s.token]
        # the ban comes after the log_softmax: the allowed probabilities sum to at most 1
        assert np.exp(s.log_probs).sum() <= 1 + 1e-6
    # summed log-probs equal beam search's score with beam_size 1
    beam = il.beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                          beam_size=1)[0]
    assert beam[0] == out
    assert abs(sum(s.log_prob for s in steps) - beam[1]) < 1e-4
    with pytest.raises(ValueError, match="return_steps"):
        il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                         return_steps="yes")


@pytest.mark.parametrize("where", ["src_embed.lut.weight",
                                   "encoder.layers.0.feed_forward.linear1.weight",
                                   "decoder.layers.0.cross_attn.w_v.bias", "generator.proj.bias"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_an_error_not_a_translation(model, where, value):
    broken = copy.deepcopy(model)
    with torch.no_grad():
        broken.get_parameter(where).view(-1)[0] = value  # in a table: the row of id 0, <pad>
    src = [3, 4, 5] if where != "src_embed.lut.weight" else [0, 3]
    message = r"^model: its scores for the next token are NaN"
    with pytest.raises(ValueError, match=message):
        il.greedy_decode(broken, src, bos_id=BOS, eos_id=EOS, max_len=4)
    with pytest.raises(ValueError, match=message):
        il.beam_search(broken, src, bos_id=BOS, eos_id=EOS, beam_size=3, max_len=4)
    with pytest.raises(ValueError, match=message):
        il.inference.decoding.greedy_decode_batch(broken, torch.tensor([src, src]), bos_id=BOS, eos_id=EOS,
                                        max_len=4)


@pytest.mark.parametrize("src, kind", [({3, 4}, "set"), ({3: 0, 4: 1}, "dict"),
                                       (frozenset({3}), "frozenset"), (3, "int")])
def test_unordered_or_scalar_sources_are_refused(model, src, kind):
    with pytest.raises(TypeError, match=rf"^src_ids: expected a 1-D sequence of int token ids "
                                        rf"\(a list, tuple or tensor\), got {kind} "):
        il.greedy_decode(model, src, bos_id=BOS, eos_id=EOS)
    assert il.greedy_decode(model, iter([3, 4]), bos_id=BOS, eos_id=EOS, max_len=3) == \
        il.greedy_decode(model, (3, 4), bos_id=BOS, eos_id=EOS, max_len=3)


@pytest.mark.parametrize("length, alpha, match", [
    (-1, 0.6, r"^length: expected an integer >= 0, got -1"),
    (2.0, 0.6, r"^length: expected an integer >= 0, got float"),
    (2, float("nan"), r"^alpha: expected a finite length-penalty exponent >= 0.0, got nan"),
    (2, -0.5, r"^alpha: expected a length-penalty exponent >= 0.0, got -0.5"),
])
def test_length_penalty_checks_its_arguments(length, alpha, match):
    with pytest.raises(ValueError, match=match):
        il.length_penalty(length, alpha)
    assert il.length_penalty(0, 0.0) == 1.0 and il.length_penalty(np.int64(7), 1) == 2.0


def test_a_nan_memory_from_the_model_is_blamed_on_the_model():
    """Transformer.decode leaves the memory unread (decoding calls it at every step with the
    model's own): the decoding loop refuses the NaN scores, naming the model."""
    model, src_vocab, tgt_vocab = il.pretrained("post")
    with torch.no_grad():
        model.src_embed.lut.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match=r"^model: its scores for the next token are NaN"):
        il.greedy_decode(model, [4, 5], bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
