"""The command line under faults: --out checked before training (never one of the inputs), Ctrl-C
at any moment exits 130 with one line that says what is on disk, bad input is one line, never a
traceback, and every process a test starts is ended in a `finally`."""
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch

import illustrated as il
from illustrated.commands import cli
from illustrated.data.pairs_file import MAX_LINE_BYTES
from illustrated.files.training_state import load_training_state


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


def _ctrl_c_as_in_a_terminal():
    """In the child: SIGINT's default action, as a terminal gives it. (A test run started in
    the background by a shell inherits SIGINT ignored, and would pass that on.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def started(*args):
    """``python -m illustrated ARGS`` as a child process, killed on the way out whatever
    happens (a failing assertion must not leave a 1,000,000-step run behind)."""
    process = subprocess.Popen([sys.executable, "-m", "illustrated", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_ctrl_c_as_in_a_terminal)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=60)


def test_ctrl_c_during_training_exits_130_with_one_line_and_keeps_the_old_file(trained):
    before = trained.read_bytes()
    with started("train", "--corpus", "fr-en", "--steps", "1000000", "--device", "cpu",
                 "--out", str(trained)) as process:
        first = process.stdout.readline()  # printed, flushed, just before training starts
        assert first.startswith("training fr-en"), first
        warning = process.stderr.readline()  # a million steps: the run is announced as long
        assert warning.startswith("warning: this run would take about "), warning
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert [line for line in stderr.splitlines() if not line.startswith("warning: ")] == [
        f"interrupted: training stopped; {trained} was not written (any previous file is "
        f"unchanged)"], stderr
    assert "Traceback" not in stdout
    assert trained.read_bytes() == before


def test_a_failing_test_leaves_no_child_running():
    """The helper above kills its child when the block fails."""
    with pytest.raises(AssertionError):
        with started("train", "--corpus", "fr-en", "--steps", "1000000", "--device", "cpu",
                     "--out", os.devnull + ".pt") as process:
            raise AssertionError("a failing check")
    assert process.poll() is not None  # ended, not left behind


def _wait_until_loaded(process, library, timeout=60.0):
    """Wait until the child has mapped ``library`` (it is importing it, or has): then its
    import of the package, NumPy or torch is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{process.pid}/maps") as maps:
                if library in maps.read():
                    return
        except OSError:
            return
        time.sleep(0.002)
    raise AssertionError(f"{library} was not loaded within {timeout} s")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc/PID/maps")
@pytest.mark.parametrize("library, delay", [("numpy", 0.0), ("libtorch", 0.0),
                                            ("libtorch", 0.3), ("libtorch", 0.8),
                                            ("libtorch", 1.5)])
def test_ctrl_c_at_any_moment_exits_130_with_one_line(tmp_path, library, delay):
    """While the package, NumPy or torch is imported, torch.optim's start-up, the measured step
    or training. Before: a traceback from the import machinery, or exit code -2 (CPython
    believed a KeyboardInterrupt raised under torch's C++ unhandled)."""
    with started("train", "--corpus", "fr-en", "--steps", "1000000", "--device", "cpu",
                 "--out", str(tmp_path / "m.pt")) as process:
        _wait_until_loaded(process, library)
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("warning: this run")]
    assert len(lines) == 1 and lines[0].startswith("interrupted"), stderr
    assert "Traceback" not in stderr + stdout
    assert not (tmp_path / "m.pt").exists()


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

from illustrated.files import atomic as _atomic  # noqa: E402


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
    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", lambda *a, **k: pytest.fail("trained"))
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

    monkeypatch.setattr(il.pretrained_models, "evaluate", broken)
    out = tmp_path / "m.pt"
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 2 and result.stderr == "error: an evaluation that fails\n"
    assert f"saved {out}" in result.stdout
    il.load_checkpoint(out)


def test_ctrl_c_while_testing_says_the_model_was_saved(main, tmp_path, monkeypatch):
    monkeypatch.setattr(il.pretrained_models, "evaluate", lambda *a, **k: (_ for _ in ()).throw(
        KeyboardInterrupt))
    out = tmp_path / "m.pt"
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 130
    assert result.stderr == f"interrupted: testing stopped; the trained model was saved to {out}\n"
    il.load_checkpoint(out)


# ---- an input is never an output

PAIRS_TEXT = "".join(f"{s} {v} .\t{t} {w} .\n" for s, t in (("je", "i"), ("il", "he"))
                     for v, w in (("mange", "eat"), ("voit", "see"), ("dort", "sleep")))


@pytest.fixture
def pairs_file(tmp_path):
    path = tmp_path / "data.tsv"
    path.write_text(PAIRS_TEXT, encoding="utf-8")
    return path


def _out_forms(pairs_file):
    """The same file as --pairs, named five ways."""
    folder = pairs_file.parent
    (folder / "link.tsv").symlink_to(pairs_file)
    os.link(pairs_file, folder / "hard.tsv")
    (folder / "sub").mkdir()
    return {"same path": str(pairs_file), "symbolic link": str(folder / "link.tsv"),
            "hard link": str(folder / "hard.tsv"),
            "another spelling": str(folder / "sub" / ".." / "data.tsv")}


@pytest.mark.parametrize("form", ["same path", "symbolic link", "hard link", "another spelling"])
@pytest.mark.parametrize("extra", [(), ("--checkpoint-every", "1")], ids=["final save",
                                                                            "first checkpoint"])
def test_the_pairs_file_is_never_replaced_by_the_model(main, pairs_file, monkeypatch, form,
                                                       extra):
    """Before: `train --pairs data.tsv --out data.tsv` trained, replaced the corpus with the
    checkpoint and exited 0 (also through a link, and at the first --checkpoint-every save)."""
    out = _out_forms(pairs_file)[form]
    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", lambda *a, **k: pytest.fail("trained"))
    result = main("train", "--pairs", str(pairs_file), "--steps", "2", "--device", "cpu",
                  "--out", out, *extra)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"error: --out: expected a file other than --pairs "
                             f"'{pairs_file}', got '{out}', the same file (it would be "
                             f"replaced)\n")
    assert pairs_file.read_text(encoding="utf-8") == PAIRS_TEXT


def test_a_corpus_file_is_never_replaced_by_the_model(main, monkeypatch):
    from illustrated.files.clash import corpus_files
    corpus = corpus_files(["post"])[0][1]
    before = corpus.read_bytes()
    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", lambda *a, **k: pytest.fail("trained"))
    result = main("train", "--corpus", "post", "--device", "cpu", "--out", str(corpus))
    assert result.returncode == 2
    assert result.stderr == (f"error: --out: expected a file other than --corpus '{corpus}', got "
                             f"'{corpus}', the same file (it would be replaced)\n")
    assert corpus.read_bytes() == before


@pytest.fixture
def run_to_resume(tmp_path, pairs_file, main):
    out = tmp_path / "run.pt"
    result = main("train", "--pairs", str(pairs_file), "--steps", "2", "--batch-size", "4",
                  "--device", "cpu", "--checkpoint-every", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def test_resume_into_its_own_file_needs_checkpoint_every(main, pairs_file, run_to_resume):
    """Without --checkpoint-every the finished model would replace the state to resume from;
    with it, the run goes on in place (the README's recipe)."""
    before = run_to_resume.read_bytes()
    link = run_to_resume.parent / "same.pt"
    link.symlink_to(run_to_resume)
    common = ("train", "--pairs", str(pairs_file), "--steps", "4", "--batch-size", "4",
              "--device", "cpu", "--resume", str(run_to_resume))
    result = main(*common, "--out", str(link))
    assert result.returncode == 2
    assert result.stderr == (f"error: --out: expected a file other than --resume "
                             f"'{run_to_resume}', got '{link}', the same file (the finished "
                             f"model would replace the state to resume from; add "
                             f"--checkpoint-every N to go on in place)\n")
    assert run_to_resume.read_bytes() == before
    result = main(*common, "--out", str(run_to_resume), "--checkpoint-every", "2")
    assert result.returncode == 0, result.stderr
    assert load_training_state(run_to_resume)[3]["step"] == 4


# ---- Ctrl-C once the model is in place: the message says so

def test_ctrl_c_at_the_final_rename_says_the_model_was_saved(main, tmp_path, monkeypatch):
    replace = os.replace

    def rename_then_interrupt(src, dst):
        replace(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(_atomic.os, "replace", rename_then_interrupt)
    out = tmp_path / "m.pt"
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 130
    assert result.stderr == f"interrupted: the trained model was saved to {out}\n"
    il.load_checkpoint(out)  # true: the model is there, whole


def test_ctrl_c_at_a_checkpoints_directory_fsync_says_the_checkpoint_is_there(main, tmp_path,
                                                                             monkeypatch):
    fsync, calls = os.fsync, []

    def interrupted_at_the_directory(fd):
        calls.append(fd)
        if len(calls) == 2:  # the first checkpoint's file, then its directory entry
            raise KeyboardInterrupt
        fsync(fd)

    monkeypatch.setattr(_atomic.os, "fsync", interrupted_at_the_directory)
    out = tmp_path / "run.pt"
    result = main("train", "--corpus", "post", "--steps", "3", "--device", "cpu",
                  "--checkpoint-every", "1", "--out", str(out))
    assert result.returncode == 130
    assert result.stderr == (f"interrupted: training stopped; {out} holds the checkpoint just "
                             f"written (go on with --resume)\n")
    assert load_training_state(out)[3]["step"] == 1


# ---- names, file systems

def test_a_legal_250_byte_out_name_is_accepted(main, tmp_path):
    """Before: refused as too long (the temporary name was, not the name)."""
    out = tmp_path / ("m" * 247 + ".pt")
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 0, result.stderr
    il.load_checkpoint(out)


def test_a_read_only_file_system_is_named_as_such(main, tmp_path, monkeypatch):
    out = tmp_path / "m.pt"
    out.write_bytes(b"an earlier model")

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(_atomic.os, "statvfs", lambda path: ReadOnly())
    monkeypatch.setattr(_atomic.os, "access", lambda path, mode: False)
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(out))
    assert result.returncode == 2
    assert result.stderr == (f"error: --out: '{out}' is on a read-only file system; expected a "
                             f"path on one that may be written (choose another path)\n")


# ---- a run that would take more than a few minutes says so first

def test_a_long_run_is_announced_with_an_estimate_before_it_starts(main, pairs_file, tmp_path,
                                                                   monkeypatch):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(il.training.loop, "train", stop)  # what matters is said before it
    result = main("train", "--pairs", str(pairs_file), "--preset", "small", "--steps",
                  "1000000", "--device", "cpu", "--out", str(tmp_path / "m.pt"))
    assert result.returncode == 130
    warning, interrupted = result.stderr.splitlines()
    step = float(re.search(r"\(1000000 steps of (\S+) s, measured after a warm-up step\)", warning).group(1))
    assert step > 0 and warning.startswith("warning: this run would take about ")
    assert warning.endswith("; Ctrl-C stops it, fewer --steps or a smaller model take less")
    assert interrupted.startswith("interrupted: training stopped")


def test_a_short_run_is_not_announced(main, tmp_path):
    result = main("train", "--corpus", "post", "--steps", "2", "--device", "cpu", "--out",
                  str(tmp_path / "m.pt"))
    assert result.returncode == 0 and result.stderr == ""


@pytest.mark.parametrize("seconds, text", [(200, "3 min"), (3 * 3600, "3.0 h"),
                                           (5 * 86400, "5.0 days")])
def test_durations_in_the_announcement(seconds, text):
    assert cli._duration(seconds) == text


def test_the_estimate_leaves_out_what_only_the_first_step_pays(monkeypatch):
    """The first step of a run pays one-time costs (torch.optim's import, Adam's state): timed
    alone, it made chapter 10's 11-second run announce "about 10 min" (300 steps of 2.02 s)."""
    pairs, src, tgt = il.data.load_corpus("post")
    cfg = il.pretrained_models.make_config("post", src, tgt)
    step = il.training.loop._loss_and_accuracy
    calls = []

    def first_one_slow(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            time.sleep(1.0)
        return step(*args, **kwargs)

    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", first_one_slow)
    seconds = il.training.loop.seconds_per_step(cfg, pairs, src, tgt, batch_size=2, device="cpu")
    assert len(calls) == 2 and 0 < seconds < 1.0


def test_the_measured_step_leaves_the_callers_random_state(post_vocabs=None):
    pairs, src, tgt = il.data.load_corpus("post")
    cfg = il.pretrained_models.make_config("post", src, tgt)
    torch.manual_seed(3)
    state = torch.get_rng_state()
    seconds = il.training.loop.seconds_per_step(cfg, pairs, src, tgt, batch_size=2, device="cpu")
    assert seconds > 0 and torch.equal(torch.get_rng_state(), state)


# ---- a pairs file's lines are bounded in tokens before any tensor is made

@pytest.mark.parametrize("words, side", [(4995, "source"), (1000, "source"), (300, "target")])
def test_a_line_of_too_many_tokens_is_refused_in_one_line_before_training(main, tmp_path,
                                                                          monkeypatch, words,
                                                                          side):
    """Before: a line of exactly the reader's 10,000-byte limit, of one-letter words, ended in
    torch's allocator asking 14.8 GB; a 1,000-word line made `--steps 2` take 17 minutes."""
    long, short = " ".join(["a"] * words), "x" * 10
    line = f"{long}\t{short}" if side == "source" else f"{short}\t{long}"
    if words == 4995:
        assert len(line.encode()) == MAX_LINE_BYTES  # exactly the limit
    lines = PAIRS_TEXT + line + "\n"
    path = tmp_path / "long.tsv"
    path.write_text(lines, encoding="utf-8")
    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", lambda *a, **k: pytest.fail("trained"))
    result = main("train", "--pairs", str(path), "--steps", "2", "--device", "cpu", "--out",
                  str(tmp_path / "m.pt"))
    assert result.returncode == 2
    assert result.stderr == (f"error: {path}:7: expected a {side} of at most 256 tokens, got "
                             f"{words} (every batch is sized for the longest sentence: split or "
                             f"drop this line)\n")
