"""Beam search with a length penalty (alpha > 0) equals an exhaustive search over every sequence.

With a beam wide enough to hold every hypothesis, only the early stop can make beam search miss
the best one; the exhaustive search scores each sequence as ``il.beam_search`` documents: the sum
of its tokens' log_softmax (over the whole vocabulary; <bos> and <pad> excluded afterwards)
divided by ((5 + len) / 6) ** alpha, len counting <eos>; sequences that reach max_len without
<eos> count as they are.
"""
import itertools
from dataclasses import replace

import pytest
import torch

import illustrated as il

BOS, EOS, PAD = 1, 2, 0
VOCAB = 6  # <pad>, <bos>, <eos> and three words
MAX_LEN = 4
CFG = replace(il.TINY, src_vocab_size=7, tgt_vocab_size=VOCAB, d_model=16, n_heads=2, d_ff=16,
              n_layers=1, dropout=0.0, max_len=8)
SRC = [3, 4, 5, 6]


def tiny_model(seed: int) -> il.modules.Transformer:
    torch.manual_seed(seed)
    model = il.modules.Transformer(CFG).eval()
    with torch.no_grad():  # sharper distributions than Glorot's, so that lengths compete
        model.generator.proj.weight.mul_(3.0)
    return model


def exhaustive(model, src, alpha, max_len=MAX_LEN):
    """Every sequence of at most max_len generated tokens, scored, best first."""
    words = [t for t in range(VOCAB) if t not in (BOS, PAD, EOS)]
    with torch.no_grad():
        memory = model.encode(torch.tensor([src]))
        cache = {}

        def log_probs(prefix):
            if prefix not in cache:
                out = model.decode(torch.tensor([[BOS, *prefix]]), memory)
                lp = model.generator(out[:, -1]).log_softmax(-1)[0].double()
                cache[prefix] = lp
            return cache[prefix]

        scored = []
        for n in range(max_len):
            for body in itertools.product(words, repeat=n):
                ends = [body + (EOS,)] + ([body + (w,) for w in words] if n + 1 == max_len else [])
                for seq in ends:
                    total = sum(float(log_probs(seq[:i])[seq[i]]) for i in range(len(seq)))
                    scored.append((list(seq), total / ((5 + len(seq)) / 6) ** alpha))
    return sorted(scored, key=lambda item: item[1], reverse=True)


# Seeds 5 and 8 (top_beams=1) are models where stopping on the penalty of the current step
# instead of max_len's ends the search before a longer, better-scoring hypothesis is found.
@pytest.mark.parametrize("seed, alpha, top_beams", [(5, 4.0, 1), (8, 0.6, 1), (0, 0.0, 3),
                                                    (1, 0.6, 3), (2, 2.0, 2)])
def test_wide_beam_equals_exhaustive_search(seed, alpha, top_beams):
    model = tiny_model(seed)
    expected = exhaustive(model, SRC, alpha)[:top_beams]
    got = il.beam_search(model, SRC, bos_id=BOS, eos_id=EOS, beam_size=128, top_beams=top_beams,
                         max_len=MAX_LEN, alpha=alpha)
    assert [h for h, _ in got] == [h for h, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert any(len(h) > 1 for h, _ in expected)  # not all won by <eos> alone


# Models where the top_beams-th finished hypothesis decides when the search may stop: with the
# best finished one instead (a stop bound compared with the wrong hypothesis), the search stops
# before a hypothesis that belongs among the top_beams is found.
KTH_DECIDES = [(5, 0.6, 2), (8, 0.0, 3), (9, 2.0, 2), (9, 0.0, 3)]


@pytest.mark.parametrize("seed, alpha, top_beams", KTH_DECIDES)
def test_the_top_beams_th_finished_hypothesis_decides_the_early_stop(seed, alpha, top_beams):
    model = tiny_model(seed)
    expected = exhaustive(model, SRC, alpha)[:top_beams]
    got = il.beam_search(model, SRC, bos_id=BOS, eos_id=EOS, beam_size=128,
                         top_beams=top_beams, max_len=MAX_LEN, alpha=alpha)
    assert [h for h, _ in got] == [h for h, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert len({len(h) for h, _ in expected}) > 1  # hypotheses of several lengths compete


def test_length_penalty_reorders_hypotheses():
    """The cases above are ones where alpha matters: the best sequence changes with it."""
    model = tiny_model(5)
    assert exhaustive(model, SRC, 0.0)[0][0] != exhaustive(model, SRC, 4.0)[0][0]


@pytest.mark.parametrize("seed", [0, 3])
def test_beam_keeps_beam_size_live_hypotheses_besides_eos(seed):
    """The best beam_size candidates that do not end with <eos> stay alive, even when <eos> is
    among the best beam_size: 2 * beam_size candidates are looked at, not beam_size."""
    model = tiny_model(seed)
    with torch.no_grad():
        model.generator.proj.bias[EOS] = 2.0  # <eos> often among the best
    _, steps = il.beam_search(model, SRC, bos_id=BOS, eos_id=EOS, beam_size=2, top_beams=1,
                              max_len=MAX_LEN, alpha=0.0, return_steps=True)
    for step in steps[:-1]:
        assert len(step.kept) == 2
        best = [h for h, _ in step.candidates if h[-1] != EOS][:2]
        assert step.kept == best
    assert any(step.finished for step in steps[:-1])  # <eos> did take a place in the best two
