"""Every learning-rate schedule at its edges (illustrated.training.schedules): no warm-up, the first and
last warm-up steps, the peak, the last step, past the end; closed forms, and what il.train
records at each step."""
import math

import pytest

import illustrated as il
from illustrated.training.schedules import SCHEDULES, learning_rate

LR, WARMUP, TOTAL = 1e-3, 10, 110


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_warm_up_climbs_linearly_to_the_peak_whatever_comes_after(schedule):
    for step in range(1, WARMUP + 1):
        assert learning_rate(step, LR, WARMUP, schedule, TOTAL) == pytest.approx(
            LR * step / WARMUP, rel=1e-12)
    assert learning_rate(1, LR, WARMUP, schedule, TOTAL) == LR / WARMUP  # never 0: step 1 moves
    assert learning_rate(WARMUP, LR, WARMUP, schedule, TOTAL) == LR  # the peak, exactly


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_without_warm_up_the_first_step_is_at_the_peak(schedule):
    assert learning_rate(1, LR, 0, schedule, TOTAL) == pytest.approx(
        LR if schedule != "cosine" else LR * 0.5 * (1 + math.cos(math.pi / TOTAL)), rel=1e-12)


def test_constant_stays_at_the_peak_to_the_end_and_past_it():
    for step in (WARMUP, WARMUP + 1, TOTAL, TOTAL + 1, 10 * TOTAL):
        assert learning_rate(step, LR, WARMUP, "constant", TOTAL) == LR


def test_noam_decays_as_one_over_the_square_root_of_the_step():
    """Paper Eq. 3 rescaled to peak at lr: lr * sqrt(warmup / step), also past the last step."""
    for step in (WARMUP, WARMUP + 1, 4 * WARMUP, TOTAL, 100 * TOTAL):
        assert learning_rate(step, LR, WARMUP, "noam", TOTAL) == pytest.approx(
            LR * math.sqrt(WARMUP / step), rel=1e-12)
    assert learning_rate(4 * WARMUP, LR, WARMUP, "noam", TOTAL) == pytest.approx(LR / 2)
    # without warm-up there is no peak step to scale by: the rate stays at lr
    assert learning_rate(50, LR, 0, "noam", TOTAL) == LR


def test_noam_is_the_papers_equation_3_up_to_its_scale():
    d_model, warmup = 512, 4000
    paper = [d_model ** -0.5 * min(s ** -0.5, s * warmup ** -1.5) for s in (1, 2000, 4000, 9000)]
    peak = paper[2]
    ours = [learning_rate(s, peak, warmup, "noam") for s in (1, 2000, 4000, 9000)]
    assert ours == pytest.approx(paper, rel=1e-12)


def test_cosine_reaches_zero_at_the_last_step_and_stays_there():
    assert learning_rate(WARMUP + (TOTAL - WARMUP) // 2, LR, WARMUP, "cosine", TOTAL) == \
        pytest.approx(LR / 2, rel=1e-12)
    assert learning_rate(TOTAL - 1, LR, WARMUP, "cosine", TOTAL) == pytest.approx(
        LR * 0.5 * (1 + math.cos(math.pi * (TOTAL - 1 - WARMUP) / (TOTAL - WARMUP))), rel=1e-12)
    assert learning_rate(TOTAL, LR, WARMUP, "cosine", TOTAL) == pytest.approx(0.0, abs=1e-20)
    for past in (TOTAL + 1, 2 * TOTAL):  # a resumed run extended past its end: no rise again
        assert learning_rate(past, LR, WARMUP, "cosine", TOTAL) == pytest.approx(0.0, abs=1e-20)


def test_cosine_when_warm_up_takes_every_step():
    """total_steps == warmup: the peak at the last step, nothing left to decay over."""
    assert learning_rate(WARMUP, LR, WARMUP, "cosine", WARMUP) == LR
    assert learning_rate(WARMUP + 1, LR, WARMUP, "cosine", WARMUP) == pytest.approx(0.0, abs=1e-20)


@pytest.mark.parametrize("args, match", [
    ((0, LR, WARMUP), r"^step: expected an integer >= 1, got 0"),
    ((1, math.nan, WARMUP), r"^lr: expected a finite learning rate"),
    ((1, LR, -1), r"^warmup: expected a number of steps >= 0, got -1"),
    ((1, LR, WARMUP, "triangle"), r"^schedule: expected one of"),
    ((1, LR, WARMUP, "cosine"), r"^total_steps: the 'cosine' schedule needs"),
    ((1, LR, WARMUP, "cosine", 0), r"^total_steps: expected an integer >= 1, got 0"),
])
def test_bad_arguments_are_named(args, match):
    with pytest.raises(ValueError, match=match):
        learning_rate(*args)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_train_uses_the_schedule_at_every_step_up_to_the_last(schedule):
    """History.lr is the schedule at steps 1..steps, with steps as the total."""
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("post")
    il.set_seed(0)
    model = il.modules.Transformer(il.pretrained_models.make_config("post", src_vocab, tgt_vocab))
    history = il.train(model, pairs, src_vocab, tgt_vocab, steps=6, lr=LR, warmup=3,
                       schedule=schedule, batch_size=2, device="cpu", progress=False)
    assert history.lr == [learning_rate(s, LR, 3, schedule, 6) for s in range(1, 7)]
    assert history.lr[0] == LR / 3 and history.lr[2] == LR
    if schedule == "cosine":
        assert history.lr[-1] == pytest.approx(0.0, abs=1e-20)
