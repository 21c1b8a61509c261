"""The command line under faults: --out checked before training, Ctrl-C exits 130 with one line
and leaves the previous checkpoint as it was, bad input is one line, never a traceback."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch

import illustrated as il
from illustrated import __main__ as cli
from illustrated.training_state import load_training_state


def run_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "illustrated", *args], capture_output=True,
                          text=True, timeout=timeout)


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def main(capsys):
    """The command line in this process (fast): main(*args) -> Result like subprocess.run's."""
    def call(*args):
        try:
            code = cli.main(list(args))
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)
    return call


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "prev.pt"
    result = run_cli("train", "--corpus", "post", "--steps", "3", "--device", "cpu",
                     "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def test_ctrl_c_during_training_exits_130_with_one_line_and_keeps_the_old_file(trained):
    before = trained.read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-m", "illustrated", "train", "--corpus", "fr-en", "--steps", "1000000",
         "--device", "cpu", "--out", str(trained)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline()  # printed, flushed, just before training starts
    assert first.startswith("training fr-en"), first + process.stderr.read()
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130
    assert stderr.splitlines() == [f"interrupted: training stopped; {trained} was not written "
                                   "(any previous file is unchanged)"]
    assert "Traceback" not in stdout
    assert trained.read_bytes() == before


def test_ctrl_c_during_the_save_keeps_the_old_file(trained, monkeypatch, capsys):
    """In-process: the interrupt arrives while torch.save is half-way through the file."""
    before = trained.read_bytes()

    def interrupted_save(obj, file):
        file.write(before[:665])
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", interrupted_save)
    code = cli.main(["train", "--corpus", "post", "--steps", "2", "--device", "cpu",
                     "--out", str(trained)])
    assert code == 130
    assert capsys.readouterr().err.count("\n") == 1
    assert trained.read_bytes() == before
    assert [p.name for p in trained.parent.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("out, match", [
    ("missing/dir/m.pt", "--out: expected a path in an existing directory, but 'missing/dir' "
                         "does not exist"),
    ("{file}/m.pt", "is a file"),
    (".", "--out: expected a file path, got the directory"),
])
def test_out_is_checked_before_training(tmp_path, out, match):
    afile = tmp_path / "afile"
    afile.write_text("x")
    start = time.perf_counter()
    result = run_cli("train", "--corpus", "fr-en", "--steps", "100000", "--device", "cpu",
                     "--out", out.format(file=afile))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {result.stderr[7:].strip()}"]
    assert match in result.stderr and "Traceback" not in result.stderr
    assert time.perf_counter() - start < 60  # 100000 steps would take far longer
    assert "training fr-en" not in result.stdout


@pytest.mark.parametrize("args, match", [
    (("train", "--corpus", "post", "--steps", "0"), "argument --steps: expected a value >= 1"),
    (("train", "--corpus", "post", "--steps", "2.5"), "argument --steps: expected an integer"),
    (("train", "--corpus", "post", "--lr", "nan"), "argument --lr: expected a finite number"),
    (("train", "--corpus", "post", "--lr", "-1"), "argument --lr: expected a value > 0"),
    (("train", "--corpus", "post", "--label-smoothing", "1"), "argument --label-smoothing"),
    (("train", "--corpus", "post", "--seed", "-1"), "argument --seed"),
    (("train", "--corpus", "post", "--d-model", "30", "--n-heads", "4"),
     "d_model: expected a multiple of n_heads=4"),
    (("train", "--corpus", "post", "--device", "quantum"), "device: expected 'auto'"),
])
def test_bad_train_arguments_are_one_message(main, tmp_path, args, match):
    result = main(*args, "--out", str(tmp_path / "m.pt"))
    assert result.returncode == 2
    assert match in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "m.pt").exists()


def test_cuda_on_a_machine_without_it_is_refused_up_front(main, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = main("train", "--corpus", "post", "--device", "cuda", "--out",
                     str(tmp_path / "m.pt"))
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: device: expected an available device")


def test_translate_with_a_broken_or_foreign_file(main, tmp_path, trained):
    raw = trained.read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(raw[:len(raw) // 2])
    text = tmp_path / "notes.txt"
    text.write_text("not a model\n")
    for path, match in ((cut, "truncated or damaged"), (text, "not an illustrated checkpoint")):
        result = main("translate", "--model", str(path), "merci")
        assert result.returncode == 2
        assert len(result.stderr.splitlines()) == 1 and match in result.stderr


def test_translate_with_non_finite_weights_fails_loudly(main, tmp_path, trained):
    """Before: the CLI printed nothing and exited 0."""
    data = torch.load(trained, weights_only=True)
    data["state_dict"]["generator.proj.weight"][0, 0] = float("nan")
    path = tmp_path / "nan.pt"
    torch.save(data, path)
    result = main("translate", "--model", str(path), "merci")
    assert result.returncode == 2 and result.stdout == ""
    assert "non-finite weights: 'generator.proj.weight'" in result.stderr


@pytest.mark.parametrize("args, match", [
    (("--beam-size", "2", "--top-beams", "3"), "--top-beams: expected at most --beam-size=2"),
    (("--beam-size", "0"), "argument --beam-size"),
    (("--alpha", "nan"), "argument --alpha: expected a finite number"),
    (("--alpha", "-0.5"), "argument --alpha"),
])
def test_bad_translate_arguments(main, trained, args, match):
    result = main("translate", "--model", str(trained), "merci", *args)
    assert result.returncode == 2 and match in result.stderr and "Traceback" not in result.stderr


def test_translate_sentences_that_cannot_be_translated(main, trained):
    result = main("translate", "--model", str(trained), "   ")
    assert result.returncode == 2 and "sentence" in result.stderr
    long = " ".join(["merci"] * 100)
    result = main("translate", "--model", str(trained), long)
    assert result.returncode == 2
    assert "has 100 tokens, more than the model's max_len=64" in result.stderr


def test_the_cli_may_decode_up_to_the_models_max_len(trained):
    model, (src, tgt), cfg = il.load_checkpoint(trained)
    [(ids, _)] = il.beam_search(model, src.encode("merci"), bos_id=tgt.bos_id,
                                eos_id=tgt.eos_id, max_len=cfg.max_len)
    assert 1 <= len(ids) <= cfg.max_len


# ---- files at the edges: read-only, links, a disk without room, a disk that fills mid-run

from illustrated import _atomic  # noqa: E402


def test_out_onto_a_read_only_file_is_refused_before_training(main, tmp_path):
    out = tmp_path / "keep.pt"
    out.write_bytes(b"do not replace me")
    out.chmod(0o444)
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 2
    assert result.stderr == (f"error: --out: '{out}' is read-only (mode 444); expected a file "
                             f"that may be replaced (chmod u+w, or choose another path)\n")
    assert out.read_bytes() == b"do not replace me" and "training" not in result.stdout


def test_out_onto_a_symbolic_link_writes_the_links_target(main, tmp_path):
    target = tmp_path / "real.pt"
    target.write_bytes(b"old")
    link = tmp_path / "link.pt"
    link.symlink_to(target)
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    il.load_checkpoint(target)  # the model went where the link points


@pytest.mark.parametrize("extra", [(), ("--checkpoint-every", "1")])
def test_a_disk_without_room_for_the_model_is_refused_before_training(main, tmp_path, monkeypatch,
                                                                      extra):
    """Before: 0 bytes free passed the check, fr-en trained 400 steps, and the model was lost."""
    monkeypatch.setattr(_atomic.shutil, "disk_usage",
                        lambda path: shutil._ntuple_diskusage(10**9, 10**9, 0))
    monkeypatch.setattr(il.training, "_loop", lambda *a, **k: pytest.fail("trained"))
    out = tmp_path / "m.pt"
    result = main("train", "--corpus", "fr-en", "--device", "cpu", "--out", str(out), *extra)
    assert result.returncode == 2
    need = "780.8 kB" if not extra else "2.4 MB"  # checkpoint.estimate_bytes
    assert result.stderr == (f"error: --out: expected {need} free for '{out}', but "
                             f"'{tmp_path}' has 0 bytes free\n")
    assert not out.exists()


def test_a_disk_that_fills_during_checkpoint_every_keeps_the_last_checkpoint(main, tmp_path,
                                                                            monkeypatch):
    """Before: torch's '[enforce fail at inline_container.cc:672] ... unexpected pos'."""
    out = tmp_path / "run.pt"
    fsync, calls = os.fsync, []

    def fills_up(fd):
        calls.append(fd)
        if len(calls) > 1:  # the second checkpoint (step 2) meets a full disk
            raise OSError(28, "No space left on device")
        fsync(fd)

    monkeypatch.setattr(_atomic.os, "fsync", fills_up)
    result = main("train", "--corpus", "post", "--steps", "4", "--device", "cpu",
                  "--checkpoint-every", "1", "--out", str(out))
    assert result.returncode == 2
    assert result.stderr == (f"error: --out: could not write '{out}' (No space left on device); "
                             f"any previous file there is unchanged; training stopped after "
                             f"step 2\n")
    _, _, _, state = load_training_state(out)  # the checkpoint of step 1, whole
    assert state["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["run.pt"]


def test_the_model_is_saved_before_anything_evaluates_it(main, tmp_path, monkeypatch):
    """Before: BLEU (sacrebleu missing in Colab) ran first, and the trained model was lost."""
    def broken(*args, **kwargs):
        raise ValueError("an evaluation that fails")

    monkeypatch.setattr(il.presets, "evaluate", broken)
    out = tmp_path / "m.pt"
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 2 and result.stderr == "error: an evaluation that fails\n"
    assert f"saved {out}" in result.stdout
    il.load_checkpoint(out)


def test_ctrl_c_while_testing_says_the_model_was_saved(main, tmp_path, monkeypatch):
    monkeypatch.setattr(il.presets, "evaluate", lambda *a, **k: (_ for _ in ()).throw(
        KeyboardInterrupt))
    out = tmp_path / "m.pt"
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 130
    assert result.stderr == f"interrupted: testing stopped; the trained model was saved to {out}\n"
    il.load_checkpoint(out)
