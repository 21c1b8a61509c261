"""Training: schedules, history, divergence handling, vocab checks, checkpoints, the command line."""
import math
import subprocess
import sys
from dataclasses import replace

import pytest
import torch

import illustrated as il


@pytest.fixture(scope="module")
def post():
    return il.data.load_corpus("post")


def post_model(post, **overrides):
    pairs, src_vocab, tgt_vocab = post
    cfg = il.pretrained_models.make_config("post", src_vocab, tgt_vocab, **overrides)
    il.set_seed(0)
    return il.modules.Transformer(cfg)


def test_learning_rate_schedules():
    assert il.training.schedules.learning_rate(5, 1e-3, 10) == pytest.approx(5e-4)
    assert il.training.schedules.learning_rate(40, 1e-3, 10) == pytest.approx(1e-3)
    # noam: peak lr at the end of warm-up, then lr * sqrt(warmup / step) (paper Eq. 3, rescaled)
    assert il.training.schedules.learning_rate(10, 1e-3, 10, "noam") == pytest.approx(1e-3)
    assert il.training.schedules.learning_rate(40, 1e-3, 10, "noam") == pytest.approx(5e-4)
    # cosine: from lr at the end of warm-up to 0 at the last step, lr/2 half way
    assert il.training.schedules.learning_rate(10, 1e-3, 10, "cosine", 110) == pytest.approx(1e-3)
    assert il.training.schedules.learning_rate(60, 1e-3, 10, "cosine", 110) == pytest.approx(5e-4)
    assert il.training.schedules.learning_rate(110, 1e-3, 10, "cosine", 110) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="schedule"):
        il.training.schedules.learning_rate(1, 1e-3, 10, "triangle")
    with pytest.raises(ValueError, match="total_steps"):
        il.training.schedules.learning_rate(1, 1e-3, 10, "cosine")


def test_post_corpus_learned_exactly(post):
    pairs, src_vocab, tgt_vocab = post
    model = post_model(post)
    history = il.train(model, pairs, src_vocab, tgt_vocab, progress=False, device="cpu",
                       **il.SETTINGS["post"]["train"])
    assert history.steps == il.SETTINGS["post"]["train"]["steps"]
    assert history.loss[-1] < 0.05 * history.loss[0]
    assert history.accuracy[-1] == 1.0
    assert all(b >= a for a, b in zip(history.seconds, history.seconds[1:]))
    assert il.exact_match(model, pairs, src_vocab, tgt_vocab) == 1.0
    assert il.translate(model, ["je suis étudiant", "merci"], src_vocab, tgt_vocab,
                        beam_size=2) == ["i am a student", "thanks"]


def test_training_is_deterministic(post):
    pairs, src_vocab, tgt_vocab = post
    losses = []
    for _ in range(2):
        model = post_model(post)
        losses.append(il.train(model, pairs, src_vocab, tgt_vocab, steps=5, progress=False,
                               device="cpu").loss)
    assert losses[0] == losses[1]


def test_exploding_learning_rate_stops_and_restores(post):
    pairs, src_vocab, tgt_vocab = post
    model = post_model(post)
    with pytest.raises(il.TrainingDiverged, match="lr: the loss became") as info:
        il.train(model, pairs, src_vocab, tgt_vocab, steps=50, lr=1e30, warmup=0,
                 progress=False, device="cpu")
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert all(math.isfinite(v) for v in info.value.history.loss)


def test_divergence_restores_the_weights_from_before_the_step_that_broke_them(post):
    """lr=1e30 sends the weights to ~1e30 (still finite) at step 1, and the loss becomes
    infinite at step 2: the update of step 1 broke the model, which comes back with exactly
    the weights it had before it (the message says so)."""
    pairs, src_vocab, tgt_vocab = post
    model = post_model(post)
    snapshots = {0: {k: v.clone() for k, v in model.state_dict().items()}}

    def keep(step, history):
        snapshots[step] = {k: v.clone() for k, v in model.state_dict().items()}

    with pytest.raises(il.TrainingDiverged) as info:
        il.train(model, pairs, src_vocab, tgt_vocab, steps=50, lr=1e30, warmup=0,
                 progress=False, device="cpu", callback=keep)
    done = info.value.history.steps
    assert done >= 1 and sorted(snapshots) == list(range(done + 1))
    assert f"at step {done + 1} " in str(info.value)
    assert f"restored to its weights before step {done}." in str(info.value)
    for name, weight in model.state_dict().items():
        assert torch.equal(weight, snapshots[done - 1][name]), name
    assert any(not torch.equal(w, snapshots[done][k]) for k, w in model.state_dict().items())


@pytest.mark.parametrize("grad_accum_steps", [1, 2])
def test_the_loss_leaves_out_padded_positions(grad_accum_steps):
    """Targets of 1 to 4 words in one batch: the reported loss is the mean cross-entropy over
    the real target tokens (and <eos>), <pad> left out, on both paths (plain and accumulated)."""
    from illustrated.data import collate, encode_pairs
    from illustrated.data.pairs_file import build_vocab
    pairs = [("a b c d", "w"), ("a b", "w x y z"), ("c", "x y"), ("d a", "z w x")]
    src, tgt = build_vocab([s for s, _ in pairs]), build_vocab([t for _, t in pairs])
    il.set_seed(0)
    model = il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src),
                                           tgt_vocab_size=len(tgt), dropout=0.0))
    batch = collate(encode_pairs(pairs, src, tgt), src, tgt)
    assert (batch.tgt_out == tgt.pad_id).sum() == 6  # padding there is
    with torch.no_grad():
        logits = model(batch.src, batch.tgt_in)
        keep = batch.tgt_out != tgt.pad_id
        expected = torch.nn.functional.cross_entropy(logits[keep], batch.tgt_out[keep])
        right = int((logits.argmax(-1) == batch.tgt_out)[keep].sum())
    history = il.train(model, pairs, src, tgt, steps=1, batch_size=4, device="cpu",
                       progress=False, grad_accum_steps=grad_accum_steps)
    assert history.loss[0] == pytest.approx(float(expected), rel=1e-5)
    assert history.accuracy[0] == right / 14 and 0 < right < 14  # 10 words and 4 <eos>


@pytest.mark.parametrize("kwargs, match", [({"lr": -1.0}, "lr"), ({"steps": 0}, "steps"),
                                           ({"label_smoothing": 1.0}, "label_smoothing"),
                                           ({"device": "tpu"}, "device")])
def test_train_bad_arguments(post, kwargs, match):
    pairs, src_vocab, tgt_vocab = post
    with pytest.raises(ValueError, match=match):
        il.train(post_model(post), pairs, src_vocab, tgt_vocab, progress=False, **kwargs)


def test_vocab_must_fit_the_model(post):
    pairs, src_vocab, tgt_vocab = post
    _, other_src, _ = il.data.load_corpus("copy")
    with pytest.raises(ValueError, match="src_vocab"):
        il.train(post_model(post), pairs, other_src, tgt_vocab, progress=False)


def test_checkpoint_round_trip(tmp_path, post):
    pairs, src_vocab, tgt_vocab = post
    model = post_model(post)
    path = tmp_path / "m.pt"
    il.save_checkpoint(path, model, (src_vocab, tgt_vocab), model.cfg)
    loaded, (s, t), cfg = il.load_checkpoint(path)
    assert cfg == model.cfg and s == src_vocab and t == tgt_vocab
    src, tgt = torch.tensor([[4, 5, 6]]), torch.tensor([[t.bos_id, 0]])
    assert torch.equal(loaded(src, tgt), model.eval()(src, tgt))


def test_foreign_checkpoints_are_refused(tmp_path):
    evil = tmp_path / "evil.pt"
    torch.save({"payload": object()}, evil)  # needs full unpickling: refused
    with pytest.raises(ValueError, match="not an illustrated checkpoint"):
        il.load_checkpoint(evil)
    plain = tmp_path / "plain.pt"
    torch.save({"state_dict": {}}, plain)
    with pytest.raises(ValueError, match="expected format"):
        il.load_checkpoint(plain)
    with pytest.raises(ValueError, match="no checkpoint file"):
        il.load_checkpoint(tmp_path / "missing.pt")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "illustrated", *args], capture_output=True,
                          text=True, timeout=300)


def test_preload_optimizer_imports_what_the_first_optimizer_needs():
    seconds = il.training.loop.preload_optimizer()
    assert isinstance(seconds, float) and seconds >= 0.0
    assert "torch._dynamo" in sys.modules  # what the first torch.optim optimizer imports


def test_cli_train_and_translate(tmp_path):
    out = tmp_path / "post.pt"
    result = run_cli("train", "--corpus", "post", "--device", "cpu", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "exact_match 100.0 %" in result.stdout
    assert "torch.optim's one-time import" in result.stdout  # reported apart from training time
    result = run_cli("translate", "--model", str(out), "je suis étudiant", "--beam-size", "2",
                     "--top-beams", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("je suis étudiant  ->  i am a student")


@pytest.mark.parametrize("args, match", [
    (("train", "--corpus", "klingon"), "invalid choice"),
    (("translate", "--model", "missing.pt", "merci"), "no checkpoint file"),
])
def test_cli_bad_input_one_line(args, match):
    result = run_cli(*args)
    assert result.returncode != 0
    assert match in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_output_cut_short_by_a_closed_pipe_is_not_an_error(tmp_path):
    """`python -m illustrated translate ... | head -c 1`: no traceback, exit code 0."""
    out = tmp_path / "post.pt"
    assert run_cli("train", "--corpus", "post", "--steps", "5", "--device", "cpu",
                   "--out", str(out)).returncode == 0
    sentences = ["je suis étudiant"] * 2000  # more output than a pipe's buffer holds
    process = subprocess.Popen([sys.executable, "-m", "illustrated", "translate", "--model", str(out),
                                *sentences], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdout.read(1)
        process.stdout.close()
        stderr = process.stderr.read().decode()
        code = process.wait(timeout=300)
    finally:  # a failing read must not leave the child behind
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")  # nn.Transformer's own
def test_the_benchmarks_peer_trains_and_decodes_with_the_same_loop():
    """benchmarks/ trains torch.nn.Transformer (wrapped with our cfg/encode/decode/generator) with
    il.train and scores it with il.exact_match: the argument checks must let it through, and
    still refuse a module without that contract."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from torch_reference import TorchTransformer

    pairs, src_vocab, tgt_vocab = il.data.load_corpus("post")
    peer = TorchTransformer(il.pretrained_models.make_config("post", src_vocab, tgt_vocab))
    history = il.train(peer, pairs, src_vocab, tgt_vocab, steps=2, device="cpu", progress=False)
    assert history.steps == 2
    assert 0.0 <= il.exact_match(peer, pairs, src_vocab, tgt_vocab) <= 1.0
    with pytest.raises(TypeError, match="^model: expected an illustrated Transformer"):
        il.train(torch.nn.Linear(2, 2), pairs, src_vocab, tgt_vocab, steps=1, progress=False)
