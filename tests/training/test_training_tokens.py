"""il.train with tokens_per_batch (paper §5.1): the loss is the mean per target token of the
batch (alone or in micro-batches), every pair is seen once an epoch, a resumed run is the run
straight, and a budget too small for the longest pair is refused by name."""
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

import illustrated as il
from illustrated.training import loop
from illustrated.data import collate, encode_pairs
from illustrated.data.pairs_file import build_vocab

WORDS = "a b c d e f".split()
PAIRS = [(" ".join(WORDS[:n][::k]), " ".join(WORDS[:n][::-k])) for n in range(1, 7)
         for k in (1, 2)]  # 12 pairs of 1 to 6 words
SRC, TGT = build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])
ENCODED = encode_pairs(PAIRS, SRC, TGT)


def fresh():
    il.set_seed(0)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(SRC),
                                          tgt_vocab_size=len(TGT), d_model=16, n_heads=2,
                                          d_ff=32, n_layers=1, dropout=0.0))


def run(model, **kwargs):
    return il.train(model, PAIRS, SRC, TGT, **{"steps": 6, "tokens_per_batch": 21, "lr": 1e-2,
                                               "warmup": 1, "device": "cpu", "progress": False,
                                               **kwargs})


@pytest.fixture
def batches(monkeypatch):
    """The pairs of every step's global batch, as train drew them."""
    seen, step = [], loop._loss_and_accuracy

    def spy(net, run, idx, *args):
        seen.append(list(idx))
        return step(net, run, idx, *args)
    monkeypatch.setattr(loop, "_loss_and_accuracy", spy)
    return seen


def test_each_batch_within_its_tokens_and_every_pair_once_an_epoch(batches):
    run(fresh(), steps=14)
    epoch, epochs = [], []
    for idx in batches:
        longest = max(max(len(ENCODED[i][0]), len(ENCODED[i][1]) + 1) for i in idx)
        assert len(idx) * longest <= 21
        epoch += idx
        if len(epoch) == len(PAIRS):
            epochs.append(sorted(epoch))
            epoch = []
    assert len(epochs) >= 2 and all(e == list(range(len(PAIRS))) for e in epochs)
    assert len({len(b) for b in batches}) > 1  # batches of short pairs hold more of them


@pytest.mark.parametrize("accum", [1, 2])
def test_the_loss_is_the_mean_per_target_token_of_the_batch(batches, accum):
    """Alone or in two micro-batches (each of its share of the batch's tokens)."""
    model = fresh()
    before = fresh()
    history = run(model, steps=1, grad_accum_steps=accum)
    assert len(batches[0]) >= accum
    batch = collate([ENCODED[i] for i in batches[0]], SRC, TGT)
    with torch.no_grad():
        logits = before.train()(batch.src, batch.tgt_in)
        per_token = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                    ignore_index=TGT.pad_id, reduction="sum")
    tokens = int((batch.tgt_out != TGT.pad_id).sum())
    assert history.loss[0] == pytest.approx(per_token.item() / tokens, rel=1e-6)


def test_a_resumed_run_equals_the_run_straight(tmp_path):
    straight = run(fresh(), steps=8)
    path = tmp_path / "run.pt"
    run(fresh(), steps=4, checkpoint_every=4, checkpoint_path=path)
    resumed = run(fresh(), steps=8, resume=path)
    assert resumed.loss == straight.loss
    with pytest.raises(ValueError, match=r"^tokens_per_batch: expected 21 as in the run being "):
        run(fresh(), steps=8, resume=path, tokens_per_batch=30)


def test_a_budget_below_the_longest_pair_is_refused_by_name():
    with pytest.raises(ValueError) as info:
        run(fresh(), tokens_per_batch=6)
    assert str(info.value) == ("tokens_per_batch: expected at least 7 (the longest pair takes 7 "
                               "positions, and each of 1 micro-batches over 1 process needs "
                               "one), got 6")
