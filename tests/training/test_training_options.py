"""il.train's loop options: the caller's RNG states kept, the single-process path unchanged,
gradient accumulation, bf16 autocast, periodic checkpoints and resuming a run."""
import random
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import illustrated as il
from illustrated.files.training_state import load_training_state
from illustrated.data import collate, encode_pairs
from illustrated.data.pairs_file import build_vocab

PAIRS = [(f"{s} {v} {o} .", f"{es} {ev} {eo} .")
         for s, es in (("je", "i"), ("il", "he"), ("nous", "we"))
         for v, ev in (("mange", "eat"), ("voit", "see"))
         for o, eo in (("la pomme", "the apple"), ("le chat", "the cat"))]  # 12 pairs
SRC, TGT = build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])


def fresh(dropout=0.1, seed=0):
    il.set_seed(seed)
    return il.modules.Transformer(replace(il.TINY, src_vocab_size=len(SRC),
                                          tgt_vocab_size=len(TGT), dropout=dropout))


def run(model, **kwargs):
    options = {"steps": 6, "batch_size": 5, "lr": 3e-3, "warmup": 2, "device": "cpu",
               "progress": False, **kwargs}
    return il.train(model, PAIRS, SRC, TGT, **options)


def states_equal(a, b):
    return all(torch.equal(a[k], b[k]) for k in a) and a.keys() == b.keys()


def test_the_callers_global_rng_states_are_left_as_they_were():
    model = fresh()  # seeds: before the states are taken
    random.seed(123)
    np.random.seed(123)
    torch.manual_seed(123)
    torch.rand(3)  # somewhere in the stream, not just after seeding
    before = (random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state())
    run(model)
    assert random.getstate() == before[0]
    assert np.array_equal(np.random.get_state()[1], before[1])
    assert torch.equal(torch.get_rng_state(), before[2])
    # and training itself still depends only on its seed: same weights whatever came before
    first = fresh()
    run(first, seed=4)
    torch.rand(100)
    second = fresh()
    run(second, seed=4)
    assert states_equal(first.state_dict(), second.state_dict())


def plain_loop(model, steps, batch_size, lr, seed, label_smoothing):
    """The book's loop written out: seeded RNGs, shuffled epochs, mean cross-entropy, clipping
    at 1, Adam (0.9, 0.98, 1e-9), constant lr without warm-up. il.train alone, without
    accumulation or bf16, must be exactly this."""
    il.set_seed(seed)
    encoded = encode_pairs(PAIRS, SRC, TGT)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9,
                                 fused=True)
    generator = torch.Generator().manual_seed(seed)
    order, losses = [], []
    model.train()
    for _ in range(steps):
        if len(order) < batch_size:
            order += torch.randperm(len(encoded), generator=generator).tolist()
        idx, order = order[:batch_size], order[batch_size:]
        batch = collate([encoded[i] for i in idx], SRC, TGT)
        logits = model(batch.src, batch.tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                               ignore_index=TGT.pad_id, label_smoothing=label_smoothing)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_alone_in_fp32_train_is_exactly_the_plain_loop():
    trained, reference = fresh(), fresh()
    history = run(trained, steps=7, warmup=0, seed=5, label_smoothing=0.1)
    losses = plain_loop(reference, steps=7, batch_size=5, lr=3e-3, seed=5, label_smoothing=0.1)
    assert history.loss == losses  # dropout 0.1: the same masks, so the same global RNG use
    assert states_equal(trained.state_dict(), reference.state_dict())


def test_two_accumulated_half_batches_equal_one_full_batch():
    whole, halves = fresh(dropout=0.0), fresh(dropout=0.0)
    full = run(whole, batch_size=6, label_smoothing=0.1)
    accumulated = run(halves, batch_size=6, label_smoothing=0.1, grad_accum_steps=2)
    assert accumulated.loss == pytest.approx(full.loss, rel=1e-5)
    assert accumulated.accuracy == pytest.approx(full.accuracy)
    for name, weight in whole.state_dict().items():
        if name.endswith("w_k.bias"):  # true gradient 0: Adam scales rounding noise to lr-size
            continue
        torch.testing.assert_close(halves.state_dict()[name], weight, rtol=1e-4, atol=1e-5,
                                   msg=name)


def test_bf16_autocast_trains_float32_weights_close_to_fp32():
    fp32, bf16 = fresh(dropout=0.0), fresh(dropout=0.0)
    exact = run(fp32, steps=20, batch_size=6)
    low = run(bf16, steps=20, batch_size=6, precision="bf16")
    assert all(p.dtype == torch.float32 for p in bf16.parameters())
    assert low.loss[0] != exact.loss[0]  # autocast did run the matrix products in bfloat16
    assert low.loss[0] == pytest.approx(exact.loss[0], rel=2e-2)  # bf16: 8 significant bits
    assert low.loss[-1] < 0.6 * low.loss[0]


def test_a_run_stopped_after_a_checkpoint_and_resumed_equals_the_run_straight(tmp_path, kill_at):
    recipe = {"steps": 16, "schedule": "cosine", "label_smoothing": 0.1, "seed": 3}  # dropout 0.1
    straight = fresh()
    history = run(straight, **recipe)
    path = tmp_path / "run.pt"
    with pytest.raises(kill_at.error):  # killed at step 10: the checkpoint of step 8 is what is left
        run(fresh(), **recipe, checkpoint_every=4, checkpoint_path=path, callback=kill_at(10))
    _, _, _, state = load_training_state(path)
    assert state["step"] == 8 and len(state["history"]["loss"]) == 8
    assert 0 < len(state["order"]) < 12  # mid-epoch: the batch order carries over
    torch.rand(7)  # the caller's RNG use in between must not matter
    resumed = fresh(seed=99)  # its weights are replaced by the checkpoint's
    continued = run(resumed, **recipe, resume=path, checkpoint_every=4, checkpoint_path=path)
    assert continued.loss == history.loss and continued.lr == history.lr
    assert states_equal(resumed.state_dict(), straight.state_dict())
    # the last checkpoint is the final model, and also a plain model file
    model, _, _ = il.load_checkpoint(path)
    assert states_equal(model.state_dict(), straight.state_dict())


def test_twenty_steps_equal_ten_then_resume_to_twenty(tmp_path):
    """A finished run extended: the constant schedule does not depend on ``steps``."""
    straight = fresh()
    history = run(straight, steps=20, seed=1)
    path = tmp_path / "ten.pt"
    run(fresh(), steps=10, seed=1, checkpoint_every=10, checkpoint_path=path)
    resumed = fresh(seed=7)
    continued = run(resumed, steps=20, seed=1, resume=path)
    assert continued.loss == history.loss
    assert states_equal(resumed.state_dict(), straight.state_dict())


def test_the_last_step_is_checkpointed_also_off_the_period(tmp_path):
    """steps=5 with checkpoint_every=2: checkpoints after steps 2, 4 and 5 (the last), so the
    file always ends as the trained model."""
    path, seen = tmp_path / "run.pt", []
    model = fresh()
    run(model, steps=5, checkpoint_every=2, checkpoint_path=path, callback=lambda step, _: (
        seen.append(load_training_state(path)[3]["step"] if path.exists() else None)))
    assert seen == [None, 2, 2, 4, 5]
    saved, _, _ = il.load_checkpoint(path)
    assert states_equal(saved.state_dict(), model.state_dict())


def test_resume_refuses_another_recipe_or_a_finished_model(tmp_path):
    path = tmp_path / "run.pt"
    run(fresh(), steps=4, checkpoint_every=2, checkpoint_path=path)
    with pytest.raises(ValueError, match=r"^batch_size: expected 5 as in the run being resumed"):
        run(fresh(), steps=8, batch_size=4, resume=path)
    with pytest.raises(ValueError, match=r"^steps: expected more than the 4 steps"):
        run(fresh(), steps=4, resume=path)
    plain = tmp_path / "plain.pt"
    model = fresh()
    il.save_checkpoint(plain, model, (SRC, TGT), model.cfg)
    with pytest.raises(ValueError, match=r"^resume: .*holds no training state"):
        run(fresh(), resume=plain)
    with pytest.raises(ValueError, match=r"^resume: no checkpoint file"):
        run(fresh(), resume=tmp_path / "missing.pt")


@pytest.mark.parametrize("kwargs, match", [
    ({"grad_accum_steps": 0}, r"^grad_accum_steps: expected a number of micro-batches >= 1"),
    ({"grad_accum_steps": 6}, r"^grad_accum_steps: expected at most 5 micro-batches"),
    ({"grad_accum_steps": 2.0}, r"^grad_accum_steps: expected"),
    ({"precision": "fp16"}, r"^precision: expected one of \('fp32', 'bf16'\)"),
    ({"checkpoint_every": -1}, r"^checkpoint_every: expected"),
    ({"checkpoint_every": 2}, r"^checkpoint_path: expected a file path"),
    ({"distributed": True}, r"^distributed: expected a running process group"),
    ({"distributed": "yes"}, r"^distributed: expected True or False"),
])
def test_bad_loop_options_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run(fresh(), **kwargs)


def test_checkpoint_path_in_a_missing_directory_is_refused_before_training(tmp_path):
    model = fresh()
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match=r"^checkpoint_path: expected a path in an existing"):
        run(model, checkpoint_every=1, checkpoint_path=tmp_path / "no" / "run.pt")
    assert states_equal(model.state_dict(), weights)
