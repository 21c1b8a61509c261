"""Data-parallel training with torchrun: 2 CPU processes (gloo) for 20 steps end with the same
weights on both ranks, a falling loss, and the weights of single-process training on the
combined batch; `torchrun -m illustrated train --pairs` trains on both and writes on rank 0."""
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest
import torch

import illustrated as il
from illustrated.checkpoint import load_training_state
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
from illustrated import distributed
from illustrated.data.pairs_file import build_vocab
from dataclasses import replace
pairs, recipe, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
pairs = [tuple(p) for p in pairs]
distributed.init("cpu")
src, tgt = build_vocab([s for s, _ in pairs]), build_vocab([t for _, t in pairs])
cfg = replace(il.TINY, src_vocab_size=len(src), tgt_vocab_size=len(tgt))
il.set_seed(recipe["seed"])
model = il.modules.Transformer(cfg)
history = il.train(model, pairs, src, tgt, progress=False, **recipe)  # DDP: a group runs
rank = torch.distributed.get_rank()
torch.save({"state": model.state_dict(), "loss": history.loss}, f"{out}/rank{rank}.pt")
torch.distributed.destroy_process_group()
"""


def single_process():
    src, tgt = build_vocab([s for s, _ in PAIRS]), build_vocab([t for _, t in PAIRS])
    cfg = replace(il.TINY, src_vocab_size=len(src), tgt_vocab_size=len(tgt))
    il.set_seed(0)
    model = il.modules.Transformer(cfg)
    history = il.train(model, PAIRS, src, tgt, device="cpu", progress=False, **RECIPE)
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
    assert ranks[0]["loss"] == pytest.approx(loss, rel=1e-4, abs=1e-5)
    for name, weight in state.items():
        if name.endswith("w_k.bias"):
            # softmax ignores what the key bias adds (the same q.b to a whole row of scores): its
            # true gradient is 0, and Adam turns the rounding noise left there into lr-sized steps
            continue
        torch.testing.assert_close(ranks[0]["state"][name], weight, rtol=1e-4, atol=1e-4,
                                   msg=name)


# `torchrun -m illustrated train ...`, with il.train wrapped to keep each rank's final weights
CLI = """
import sys, torch
import illustrated.training as training
from illustrated import __main__ as cli
spy_dir, argv = sys.argv[1], sys.argv[2:]
plain = training.train
def spy(model, *args, **kwargs):
    history = plain(model, *args, **kwargs)
    rank = torch.distributed.get_rank()
    torch.save({"state": model.state_dict(), "device": history.device}, f"{spy_dir}/rank{rank}.pt")
    return history
training.train = spy
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
