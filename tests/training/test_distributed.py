"""Data-parallel training with torchrun: 2 CPU processes (gloo) for 20 steps end with the same
weights on both ranks, a falling loss, and the weights of single-process training on the
combined batch, with the "it" objective's read-out too; `torchrun -m illustrated train --pairs`
trains on both and writes on rank 0."""
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.files.training_state import load_training_state
from illustrated.training import distributed
from illustrated.data.pairs_file import build_vocab

PAIRS = [(f"{s} {v} {o} .", f"{es} {ev} {eo} .")
         for s, es in (("je", "i"), ("il", "he"), ("nous", "we"))
         for v, ev in (("mange", "eat"), ("voit", "see"))
         for o, eo in (("la pomme", "the apple"), ("le chat", "the cat"))]
RECIPE = {"steps": 20, "batch_size": 6, "lr": 3e-3, "warmup": 5, "seed": 0,
          "label_smoothing": 0.1}

WORKER = """
import json, sys, torch
import illustrated as il
from illustrated.training import distributed, loop
from illustrated.data.pairs_file import build_vocab
from dataclasses import replace
pairs, recipe, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
pairs = [tuple(p) for p in pairs]
made = []  # the "it" objective il.train makes, when referent_weight > 0
class Kept(loop.ReferentObjective):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        made.append(self)
loop.ReferentObjective = Kept
distributed.init("cpu")
src, tgt = build_vocab([s for s, _ in pairs]), build_vocab([t for _, t in pairs])
cfg = replace(il.TINY, src_vocab_size=len(src), tgt_vocab_size=len(tgt))
il.set_seed(recipe["seed"])
model = il.modules.Transformer(cfg)
history = il.train(model, pairs, src, tgt, progress=False, **recipe)  # DDP: a group runs
rank = torch.distributed.get_rank()
readout = made[0].readout.state_dict() if made else None
torch.save({"state": model.state_dict(), "loss": history.loss, "readout": readout},
           f"{out}/rank{rank}.pt")
torch.distributed.destroy_process_group()
"""


def single_process(pairs=PAIRS, recipe=RECIPE):
    src, tgt = build_vocab([s for s, _ in pairs]), build_vocab([t for _, t in pairs])
    cfg = replace(il.TINY, src_vocab_size=len(src), tgt_vocab_size=len(tgt))
    il.set_seed(0)
    model = il.modules.Transformer(cfg)
    history = il.train(model, pairs, src, tgt, device="cpu", progress=False, **recipe)
    return model.state_dict(), history.loss


def torchrun(script, *args, timeout=180):
    """Run ``script`` on 2 CPU processes (gloo) under torchrun; the finished process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         str(script), *args], capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    script = out / "worker.py"
    script.write_text(textwrap.dedent(WORKER))
    torchrun(script, json.dumps(PAIRS), json.dumps(RECIPE), str(out))
    return [torch.load(out / f"rank{r}.pt", weights_only=True) for r in (0, 1)]


def test_both_ranks_end_with_identical_weights_and_the_loss_fell(ranks):
    first, second = ranks
    for name, weight in first["state"].items():
        assert torch.equal(weight, second["state"][name]), name
    assert first["loss"] == second["loss"]
    assert len(first["loss"]) == 20
    assert first["loss"][-1] < 0.6 * first["loss"][0]


def test_two_processes_equal_one_process_on_the_combined_batch(ranks):
    state, loss = single_process()
    assert_same_run(ranks[0], state, loss)


def assert_same_run(rank, state, loss):
    """A rank's losses and weights are those of one process, to float rounding."""
    assert rank["loss"] == pytest.approx(loss, rel=1e-4, abs=1e-5)
    for name, weight in state.items():
        if name.endswith("w_k.bias"):
            # softmax ignores what the key bias adds (the same q.b to a whole row of scores): its
            # true gradient is 0, and Adam turns the rounding noise left there into lr-sized steps
            continue
        torch.testing.assert_close(rank["state"][name], weight, rtol=1e-4, atol=1e-4, msg=name)


def test_the_it_objective_under_two_processes_keeps_one_read_out_and_one_process_run(
        it_pairs, tmp_path, monkeypatch):
    """referent_weight > 0 under torchrun. Before: refused ("its read-out is neither
    checkpointed nor shared across processes"). Now the read-out's gradients are averaged as
    DDP averages the model's: both ranks end with the same read-out, and the run (the pairs
    without "it" among them, so that each rank's labelled share differs from its share of the
    batch) is the one-process run, its read-out included; rank 0's checkpoint keeps it."""
    pairs = it_pairs[0]
    recipe = {**RECIPE, "batch_size": 8, "steps": 12, "referent_weight": 2.0}
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(WORKER))
    path = tmp_path / "run.pt"
    torchrun(script, json.dumps(pairs), json.dumps({**recipe, "checkpoint_every": 12,
                                                    "checkpoint_path": str(path)}),
             str(tmp_path))
    first, second = (torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1))
    assert first["loss"] == second["loss"]
    for name, weight in [*first["state"].items(), *first["readout"].items()]:
        assert torch.equal(weight, {**second["state"], **second["readout"]}[name]), name
    made = []

    class Kept(il.training.loop.ReferentObjective):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(il.training.loop, "ReferentObjective", Kept)
    state, loss = single_process(pairs, recipe)
    assert_same_run(first, state, loss)
    for name, weight in made[0].readout.state_dict().items():
        torch.testing.assert_close(first["readout"][name], weight, rtol=1e-4, atol=1e-4,
                                   msg=name)
    _, _, _, saved = load_training_state(path)
    assert saved["recipe"]["processes"] == 2
    for name, weight in first["readout"].items():
        assert torch.equal(saved["referent"][name], weight), name


# `torchrun -m illustrated train ...`, with il.train wrapped to keep each rank's final weights
CLI = """
import sys, torch
import illustrated.training.loop as loop
from illustrated.commands import cli
spy_dir, argv = sys.argv[1], sys.argv[2:]
plain = loop.train
def spy(model, *args, **kwargs):
    history = plain(model, *args, **kwargs)
    rank = torch.distributed.get_rank()
    torch.save({"state": model.state_dict(), "device": history.device}, f"{spy_dir}/rank{rank}.pt")
    return history
loop.train = spy
sys.exit(cli.main(argv))
"""


def test_cli_under_torchrun_trains_on_both_ranks_and_only_rank_0_writes(tmp_path):
    data, spies = tmp_path / "data", tmp_path / "spies"
    data.mkdir()
    spies.mkdir()
    (data / "mine.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in PAIRS), encoding="utf-8")
    script = tmp_path / "cli.py"
    script.write_text(textwrap.dedent(CLI))
    out = data / "mine.pt"
    result = torchrun(script, str(spies), "train", "--pairs", str(data / "mine.tsv"), "--steps",
                      "6", "--batch-size", "8", "--test-fraction", "0.25", "--device", "cpu",
                      "--grad-accum", "2", "--checkpoint-every", "3", "--out", str(out))
    assert result.stdout.count("BLEU") == 1 and result.stdout.count("saved ") == 1
    assert "test (3 pairs): exact match" in result.stdout
    assert sorted(p.name for p in data.iterdir()) == ["mine.pt", "mine.tsv"]  # no rank-1 file
    first, second = (torch.load(spies / f"rank{r}.pt", weights_only=True) for r in (0, 1))
    assert first["device"] == second["device"] == "cpu x 2 processes"
    for name, weight in first["state"].items():
        assert torch.equal(weight, second["state"][name]), name
    saved, _, _ = il.load_checkpoint(out)
    for name, weight in saved.state_dict().items():
        assert torch.equal(weight, first["state"][name]), name
    _, _, _, state = load_training_state(out)  # --checkpoint-every: the state to resume with
    assert state["step"] == 6 and state["recipe"]["processes"] == 2


def test_a_frozen_process_stops_the_run_after_timeout_not_30_minutes(tmp_path):
    """Two ranks started as torchrun starts them (env:// rendezvous); rank 1 is stopped with
    SIGSTOP mid-loop. Before: rank 0 waited for gloo's 30-minute default."""
    import signal
    import socket
    import time
    pairs = tmp_path / "mine.tsv"
    pairs.write_text("".join(f"{s}\t{t}\n" for s, t in PAIRS), encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ranks = []
    try:  # both ranks are ended in `finally`, whatever fails (their start included)
        for rank in (0, 1):
            env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                   "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
                   "LOCAL_WORLD_SIZE": "2", "OMP_NUM_THREADS": "1"}
            ranks.append(subprocess.Popen(
                [sys.executable, "-m", "illustrated", "train", "--pairs", str(pairs), "--steps",
                 "1000000", "--device", "cpu", "--timeout", "5", "--out",
                 str(tmp_path / "m.pt")],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        first = ranks[0].stdout.readline()  # rank 0 prints this just before training
        assert first.startswith(f"{pairs}: 12 pairs"), first + ranks[0].stderr.read()
        time.sleep(1.0)
        ranks[1].send_signal(signal.SIGSTOP)
        start = time.monotonic()
        _, stderr = ranks[0].communicate(timeout=120)
        waited = time.monotonic() - start
    finally:
        for process in ranks:
            process.kill()
            process.wait()
    assert ranks[0].returncode == 2
    assert stderr == ("error: --timeout: another process did not answer within 5 s (stopped, "
                      "killed or stuck?); training stopped\n")
    assert 4 < waited < 60
    assert not (tmp_path / "m.pt").exists()


def test_init_gives_the_process_group_a_timeout(monkeypatch):
    import datetime

    from illustrated.training import distributed
    calls = []
    monkeypatch.setattr(distributed.dist, "is_initialized", lambda: False)
    monkeypatch.setattr(distributed.dist, "init_process_group",
                        lambda backend, **kwargs: calls.append((backend, kwargs)))
    distributed.init("cpu")
    distributed.init("cpu", timeout=12.5)
    assert calls == [("gloo", {"timeout": datetime.timedelta(seconds=300)}),
                     ("gloo", {"timeout": datetime.timedelta(seconds=12.5)})]
    with pytest.raises(ValueError, match=r"^timeout: expected a finite number of seconds in "
                                         r"\(0.0, 604800.0\], got inf"):
        distributed.init("cpu", timeout=float("inf"))


def test_more_processes_than_training_pairs_names_the_pairs(tmp_path, monkeypatch, capsys):
    """torchrun with 2 processes on a 2-pair file (1 to train on): before, the message was
    '--grad-accum: expected at most 1 micro-batches (...), got 1'."""
    from illustrated.commands import cli
    from illustrated.training import distributed
    path = tmp_path / "two.tsv"
    path.write_text("je suis\ti am\nmerci\tthanks\n", encoding="utf-8")
    monkeypatch.setattr(distributed, "launched_by_torchrun", lambda: True)
    monkeypatch.setattr(distributed, "init", lambda device, timeout: torch.device("cpu"))
    monkeypatch.setattr(il.training.distributed, "process_group", lambda distributed: (0, 2, True))
    code = cli.main(["train", "--pairs", str(path), "--device", "cpu", "--out",
                     str(tmp_path / "m.pt")])
    assert code == 2
    assert capsys.readouterr().err == ("error: --pairs: expected at least 2 training pairs, one "
                                       "for each of the 2 processes, got 1\n")
    model = il.modules.Transformer(replace(il.TINY, src_vocab_size=len(build_vocab(["a b"])),
                                           tgt_vocab_size=len(build_vocab(["x"]))))
    with pytest.raises(ValueError, match=r"^batch_size: expected at least 2, one pair for each "
                                         r"of the 2 processes, got 1$"):
        il.train(model, [("a", "x"), ("b", "x")], build_vocab(["a b"]), build_vocab(["x"]),
                 batch_size=1, device="cpu", progress=False)
    with pytest.raises(ValueError, match=r"^grad_accum_steps: expected at most 1 micro-batches "
                                         r"\(batches of 2 pairs.*got 2$"):
        il.train(model, [("a", "x"), ("b", "x")], build_vocab(["a b"]), build_vocab(["x"]),
                 batch_size=2, grad_accum_steps=2, device="cpu", progress=False)


def test_batches_by_tokens_split_over_two_processes_as_one_process_trains_them(tmp_path,
                                                                                monkeypatch):
    """tokens_per_batch (paper §5.1) under DDP: every rank cuts the same batches and takes every
    other pair of each; the run equals one process's; a budget that cannot give each process a
    pair of the longest length is refused by name."""
    recipe = {**RECIPE, "steps": 6, "tokens_per_batch": 30}  # 5 pairs of 6 positions a batch
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(WORKER))
    torchrun(script, json.dumps(PAIRS), json.dumps(recipe), str(tmp_path))
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    src, tgt = build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])
    il.set_seed(0)
    model = il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src),
                                           tgt_vocab_size=len(tgt)))
    alone = il.train(model, PAIRS, src, tgt, device="cpu", progress=False, **recipe)
    assert ranks[0]["loss"] == ranks[1]["loss"]
    assert ranks[0]["loss"] == pytest.approx(alone.loss, rel=1e-4, abs=1e-5)
    monkeypatch.setattr(il.training.distributed, "process_group", lambda distributed: (0, 2, True))
    with pytest.raises(ValueError, match=r"^tokens_per_batch: expected at least 12 \(the longest "
                                         r"pair takes 6 positions, and each of 1 micro-batches "
                                         r"over 2 processes needs one\), got 11$"):
        il.train(model, PAIRS, src, tgt, tokens_per_batch=11, device="cpu", progress=False)


@pytest.mark.parametrize("timeout", [1e300, 7 * 86400 + 1, float("inf")])
def test_a_timeout_past_a_week_is_refused_before_joining(timeout, monkeypatch):
    monkeypatch.setattr(distributed.dist, "init_process_group",
                        lambda *a, **k: pytest.fail("joined"))
    with pytest.raises(ValueError, match=r"^timeout: expected a .*number of seconds"):
        distributed.init("cpu", timeout=timeout)
