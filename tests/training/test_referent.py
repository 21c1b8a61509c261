"""The referent objective (illustrated.training.referent, ``il.train(referent_weight=...)``): the labels the
coreference grammar gives, what one training step changes, its bad arguments, micro-batches that
add up to the whole batch's objective, and the "it" head it grew in the shipped coreference model
(the post's figure: "it" -> "the animal" / "the street")."""
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.modules import Attention, recording_attention
from illustrated.data import coreference_grammar as g
from illustrated.data.coreference_grammar import referent

POST = "the animal didn't cross the street because it was too {}"


def test_referent_of_the_post_sentences_and_of_others():
    assert referent(POST.format("tired")) == (7, 1)  # "it" -> "animal"
    assert referent(POST.format("wide")) == (7, 5)  # "it" -> "street"
    assert referent("the cow didn't leave the bridge because it was too narrow") == (7, 5)
    assert referent("i am a student") is None
    assert referent("the animal was tired") is None  # no "it"


@pytest.mark.parametrize("split", ["train", "test"])
def test_every_coreference_pair_is_labelled_and_the_label_agrees_with_the_french_pronoun(split):
    pairs, _, _ = il.data.load_corpus("coreference", split)
    gender = {n.en: n.gender for n in g.ANIMALS + g.PLACES}
    for source, target in pairs:
        it, noun = referent(source)
        words = il.data.tokenize(source)
        assert words[it] == "it" and words[noun - 1] == "the"
        assert ("il" if gender[words[noun]] == "m" else "elle") in il.data.tokenize(target)


@pytest.fixture(scope="module")
def coreference():
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("coreference")
    return pairs[:64], src_vocab, tgt_vocab


def one_step(coreference, weight):
    pairs, src_vocab, tgt_vocab = coreference
    cfg = il.pretrained_models.make_config("coreference", src_vocab, tgt_vocab, d_model=32, d_ff=64)
    il.set_seed(0)
    model = il.modules.Transformer(cfg)
    il.train(model, pairs, src_vocab, tgt_vocab, steps=1, warmup=0, batch_size=16, clip_grad=0,
             device="cpu", progress=False, referent_weight=weight)
    return model.state_dict()


def test_one_step_moves_the_encoder_side_only_and_keeps_the_state_dict(coreference):
    off, on = one_step(coreference, 0.0), one_step(coreference, 1.0)
    assert list(on) == list(off)  # the read-out is not part of the model
    encoder_side = ("src_embed.", "encoder.")
    for name in off:
        if name.startswith(encoder_side):
            continue
        # the read-out's loss has no gradient in the decoder, its generator or its embeddings
        assert torch.equal(on[name], off[name]), name
    moved = [n for n in off if n.startswith(encoder_side) and not torch.equal(on[n], off[n])]
    assert "src_embed.lut.weight" in moved and any(n.startswith("encoder.layers.1.") for n in moved)


@pytest.mark.parametrize("weight, message", [
    (-1.0, r"referent_weight: expected a weight \(0 = off\) >= 0.0, got -1.0"),
    (math.nan, "referent_weight: expected a finite weight"),
    ("1", r"referent_weight: expected a weight \(0 = off\) \(a finite real number\)"),
])
def test_bad_referent_weight_is_refused_by_name(coreference, weight, message):
    pairs, src_vocab, tgt_vocab = coreference
    model = il.modules.Transformer(il.pretrained_models.make_config("coreference", src_vocab, tgt_vocab))
    with pytest.raises(ValueError, match=message):
        il.train(model, pairs, src_vocab, tgt_vocab, steps=1, progress=False,
                 referent_weight=weight)


def test_referent_weight_needs_pairs_with_it():
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("post")
    model = il.modules.Transformer(il.pretrained_models.make_config("post", src_vocab, tgt_vocab))
    with pytest.raises(ValueError, match="referent_weight: expected pairs whose source has 'it'"):
        il.train(model, pairs, src_vocab, tgt_vocab, steps=1, progress=False, referent_weight=1.0)


def test_micro_batches_give_the_objective_of_the_whole_batch(it_pairs):
    """grad_accum_steps is the same step in less memory, the "it" objective included: each
    micro-batch's mean over its labelled pairs counts as their share of the batch's labelled
    pairs. Before, it counted as its share of target tokens, and with the unlabelled pairs of
    ``it_pairs`` the accumulated run moved away from the plain one (losses 1 % apart after 4
    steps, weights up to 0.06; now 1e-7 and 2e-5, float rounding)."""
    pairs, src_vocab, tgt_vocab = it_pairs
    runs = []
    for accum in (1, 4):
        il.set_seed(0)
        model = il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src_vocab),
                                               tgt_vocab_size=len(tgt_vocab)))
        history = il.train(model, pairs, src_vocab, tgt_vocab, steps=4, batch_size=16, warmup=0,
                           lr=1e-2, referent_weight=5.0, grad_accum_steps=accum, device="cpu",
                           progress=False)
        runs.append((history.loss, model.state_dict()))
    (plain, plain_state), (accumulated, accumulated_state) = runs
    assert accumulated == pytest.approx(plain, rel=1e-5)
    for name, weight in plain_state.items():
        if not name.endswith("w_k.bias"):  # its true gradient is 0 (tests/training/test_distributed.py)
            torch.testing.assert_close(accumulated_state[name], weight, rtol=1e-4, atol=1e-4,
                                       msg=name)


def test_the_compiled_step_takes_the_it_objective_as_the_eager_one(it_pairs):
    """``compile="aot_eager"`` on the CPU runs the path a GPU takes (padded buckets, the labels
    as inputs of the compiled step, the memory handed to the read-out, no hook): the same
    losses and weights as the eager step, and the objective acts (the encoder moves
    otherwise than without it)."""
    pairs, src_vocab, tgt_vocab = it_pairs
    runs = {}
    for compile, weight in ((False, 5.0), ("aot_eager", 5.0), ("aot_eager", 0.0)):
        il.set_seed(0)
        model = il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src_vocab),
                                               tgt_vocab_size=len(tgt_vocab), dropout=0.0))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback to the eager step, no hook warning
            history = il.train(model, pairs, src_vocab, tgt_vocab, steps=4, batch_size=16,
                               warmup=0, lr=1e-2, referent_weight=weight, device="cpu",
                               progress=False, compile=compile)
        runs[compile, weight] = (history.loss, model.state_dict())
    (eager, eager_state), (compiled, compiled_state) = runs[False, 5.0], runs["aot_eager", 5.0]
    assert compiled == pytest.approx(eager, rel=1e-5)
    for name, weight in eager_state.items():
        if not name.endswith("w_k.bias"):  # its true gradient is 0
            torch.testing.assert_close(compiled_state[name], weight, rtol=1e-4, atol=1e-4,
                                       msg=name)
    without = runs["aot_eager", 0.0][1]["src_embed.lut.weight"]
    assert not torch.allclose(compiled_state["src_embed.lut.weight"], without, atol=1e-4)


def it_weights(model, src_vocab, sentences):
    """Weight of "it" on its referent's phrase and on the other one: (layers, heads, n) each."""
    ids = [src_vocab.encode(s) for s in sentences]
    with torch.no_grad(), recording_attention(model) as record:
        model.encode(torch.tensor(ids))
    w = torch.stack(Attention.of(record).encoder).double().numpy()  # (layers, n, heads, 11, 11)
    out = []
    for k, s in enumerate(sentences):
        it, noun = referent(s)
        other = 6 - noun  # "the animal" sits at 0-1, "the PLACE" at 4-5
        out.append((w[:, k, :, it, noun - 1:noun + 1].sum(-1),
                    w[:, k, :, it, other - 1:other + 1].sum(-1)))
    return np.stack([o[0] for o in out], -1), np.stack([o[1] for o in out], -1)


def test_the_shipped_coreference_model_has_the_posts_it_head():
    model, src_vocab, _ = il.pretrained("coreference")
    (tired, _), (wide, _) = (it_weights(model, src_vocab, [POST.format(a)])
                             for a in ("tired", "wide"))
    test = [s for s, _ in il.data.load_corpus("coreference", "test")[0]]
    right, other = it_weights(model, src_vocab, test)
    passes = (tired[..., 0] >= 0.5) & (wide[..., 0] >= 0.5) & ((right > other).mean(-1) >= 0.9)
    assert passes.any(), (tired[..., 0].round(2), wide[..., 0].round(2))
