"""A set's folder has one writer at a time and one kind of set, and the package's own files are
never an output (issue 35, items 1-3 and 7): a held lock is one line naming the folder (or a
wait), a folder of another kind is refused both ways, the package's weights, manifest and every
corpus split are refused as ``--out``; ENOSPC and Ctrl-C injected at every step of taking the
lock and checking the kind leave the old set whole, no stray file, and the lock free."""
import errno
import fcntl
import json
import os
import time

import pytest

import illustrated as il
from illustrated.files import file_set as _file_set
from illustrated.commands import onnx_export
from illustrated.commands import shipped
from illustrated.commands import web_export
from illustrated.commands.cli import main as cli
from illustrated.files.clash import corpus_files, package_folders

from test_file_set import FAULTS, first_set, outcome_of, read_set, write_set


@pytest.fixture
def folder(tmp_path):
    return first_set(tmp_path)


@pytest.fixture
def held(folder):
    """Another writer's lock on ``folder`` (a descriptor of its own: flock is per open file)."""
    fd = os.open(folder / _file_set.LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield fd
    os.close(fd)


# ---- one writer at a time

def test_a_held_lock_is_one_line_naming_the_folder(folder, held):
    with pytest.raises(ValueError) as info:
        write_set(folder, 2)
    assert str(info.value) == (f"--out: another writer is changing the set in '{folder}' (it "
                               f"holds .illustrated.lock; waited 0 s); expected a folder no "
                               f"other command writes (or --wait SECONDS)")
    assert read_set(folder)[0] == "1"


def test_wait_waits_for_the_lock_then_writes(folder, held, monkeypatch):
    sleeps = []

    def sleep(seconds):  # the other writer finishes while this one waits
        sleeps.append(seconds)
        if len(sleeps) == 3:
            os.close(held)
    monkeypatch.setattr(_file_set.time, "sleep", sleep)
    with _file_set.SetWriter(folder, "index.json", owned=lambda n: n.startswith("part"),
                             name="--out", wait=60) as writer:
        entries = {"part-a": writer.add("part-a.bin", b"part-a of generation 2" * 50)}
        writer.commit(json.dumps(entries).encode(), [entries["part-a"]["file"]])
    assert len(sleeps) == 3 and read_set(folder)[0] == "2"
    os.dup2(os.open(os.devnull, os.O_RDONLY), held)  # the fixture closes it again


def test_wait_gives_up_after_its_seconds(folder, held):
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"another writer .* waited 0.3 s"):
        with _file_set.SetWriter(folder, "index.json", owned=lambda n: False, wait=0.3):
            pass
    assert 0.3 <= time.monotonic() - start < 5


def test_the_lock_is_free_again_after_a_failure(folder):
    with pytest.raises(RuntimeError):
        with _file_set.SetWriter(folder, "index.json", owned=lambda n: False):
            raise RuntimeError("boom")
    write_set(folder, 2)  # not refused: the failed writer let go
    assert read_set(folder)[0] == "2"


@pytest.mark.parametrize("command", ["shipped", "web", "onnx"])
@pytest.mark.parametrize("value", ["-1", "nan", "inf", "1e300", "x"])
def test_a_bad_wait_is_one_line_naming_it(command, value, capsys, tmp_path):
    mains = {"shipped": shipped.main, "web": web_export.main, "onnx": onnx_export.main}
    with pytest.raises(SystemExit) as info:
        mains[command](["--out", str(tmp_path), "--wait", value])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert info.value.code == 2
    assert err.endswith(f"argument --wait: expected seconds from 0 to 86400, got '{value}'")


# ---- one kind of set per folder

@pytest.fixture
def quick_onnx(monkeypatch):
    monkeypatch.setattr(onnx_export, "_export", lambda graph, args, name, *rest: b"graph " +
                        name.encode())
    monkeypatch.setattr(onnx_export, "_onnx", lambda: None)


EXPORTS = {  # kind: (how it writes "post" into a folder through its command, its name, its reader)
    "web": (lambda out: web_export.main(["--out", str(out)]),
            "a page export (python -m illustrated.commands.web_export)", web_export.read_site),
    "onnx": (lambda out: onnx_export.main(["--out", str(out), "--corpus", "post"]),
             "an ONNX export (python -m illustrated.commands.onnx_export)", onnx_export.read_export),
}


@pytest.mark.parametrize("first, second", [("onnx", "web"), ("web", "onnx")])
def test_an_export_into_another_kinds_folder_is_refused(tmp_path, quick_onnx, capsys, monkeypatch,
                                                       first, second):
    monkeypatch.setattr(web_export, "SETTINGS", {"post": web_export.SETTINGS["post"]})
    out = tmp_path / "models"
    assert EXPORTS[first][0](out) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert EXPORTS[second][0](out) == 2
    assert capsys.readouterr().err == (
        f"error: --out: expected a folder for {EXPORTS[second][1]} or a new one, got '{out}', "
        f"whose index.json is of {EXPORTS[first][1]} (one kind of set per folder)\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    EXPORTS[first][2](out)


def test_shipped_and_an_export_never_share_a_folder(tmp_path, monkeypatch, quick_onnx):
    from test_file_set import shifted_training
    monkeypatch.setattr(shipped, "train_corpus", shifted_training({"generation": 1}))
    monkeypatch.setattr(shipped, "evaluate", lambda *a, **k: {"exact_match": 1.0})
    out = tmp_path / "weights"
    shipped.make_models(out, ("post",))
    with pytest.raises(ValueError, match=r"whose manifest.json is of the shipped models"):
        onnx_export.export_all(out, ("post",))
    exported = tmp_path / "models"
    exported.mkdir()
    onnx_export.export_all(exported, ("post",))
    with pytest.raises(ValueError, match=r"whose index.json is of an ONNX export"):
        shipped.make_models(exported, ("post",))


@pytest.mark.parametrize("text, match", [
    ('{"title": "my own page"}', r"whose index.json is of no set this package writes"),
    ("<html>", r"cannot read '.*index.json' \(Expecting value"),
])
def test_an_index_of_no_set_is_never_replaced(tmp_path, text, match):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.json").write_text(text)
    with pytest.raises(ValueError, match=match):
        web_export.export_site(out, ("post",))
    assert (out / "index.json").read_text() == text


# ---- the package's own files are never an output

def package_files():
    weights, corpora = package_folders().values()
    return [*sorted(weights.glob("*.pt")), weights / "manifest.json", *sorted(corpora.iterdir())]


@pytest.mark.parametrize("target", package_files(), ids=lambda p: p.name)
def test_train_refuses_each_of_the_package_files_as_out(target, capsys, monkeypatch):
    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", lambda *a, **k: pytest.fail("trained"))
    before = target.read_bytes()
    assert cli(["train", "--corpus", "fr-en", "--device", "cpu", "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --out: expected a ")
    assert str(target) in err and target.read_bytes() == before


def test_a_new_file_in_the_package_folders_is_refused(capsys, monkeypatch):
    monkeypatch.setattr(il.training.loop, "_loss_and_accuracy", lambda *a, **k: pytest.fail("trained"))
    for what, folder in package_folders().items():
        out = folder / "mine.pt"
        assert cli(["train", "--corpus", "post", "--device", "cpu", "--out", str(out)]) == 2
        assert capsys.readouterr().err == (f"error: --out: expected a path outside the package's "
                                           f"own files, got '{out}', in the folder of {what} "
                                           f"'{folder}'\n")
        assert not out.exists()


@pytest.mark.parametrize("split", ["train", "test"])
def test_every_split_of_the_corpus_is_an_input_even_through_a_hard_link(split, tmp_path, capsys):
    """A hard link outside the package to a split of the corpus trained on: refused as one of
    the command's inputs (--corpus), each split listed."""
    corpus = next(path for _, path in corpus_files(["post"]) if path.name == f"post.{split}.tsv")
    link = tmp_path / "link.tsv"
    try:
        os.link(corpus, link)
    except OSError as error:  # another file system: no hard link to make
        pytest.skip(f"no hard link here ({error.strerror})")
    assert cli(["train", "--corpus", "post", "--device", "cpu", "--out", str(link)]) == 2
    assert capsys.readouterr().err == (f"error: --out: expected a file other than --corpus "
                                       f"'{corpus}', got '{link}', the same file (it would be "
                                       f"replaced)\n")


@pytest.mark.parametrize("command", ["web", "onnx"])
def test_an_export_into_the_package_folders_is_refused(command, quick_onnx, capsys, monkeypatch):
    monkeypatch.setattr(_file_set.SetWriter, "add", lambda *a: pytest.fail("exported"))
    mains = {"web": web_export.main, "onnx": onnx_export.main}
    for folder in package_folders().values():
        before = sorted(p.name for p in folder.iterdir())
        assert mains[command](["--out", str(folder)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"'{folder}" in err, err
        assert sorted(p.name for p in folder.iterdir()) == before


def test_shipped_refuses_the_corpora_folder(capsys):
    corpora = package_folders()["its corpora"]
    assert shipped.main(["--corpora", "post", "--out", str(corpora)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out: expected a path outside the package's own files, got "
        f"'{corpora / 'manifest.json'}', in the folder of its corpora '{corpora}'\n")


# ---- faults while the lock is taken and the kind checked

class LockFaults:
    """Counts the steps of entering a set writer: opening the lock file, each try of the lock,
    opening the old index to read its kind; with ``at``, that step fails with ``fault``."""

    def __init__(self, monkeypatch, at=None, fault=None):
        self.events, self.at, self.fault = [], at, fault
        real_open, real_flock = os.open, fcntl.flock

        def step(kind):
            self.events.append(kind)
            if len(self.events) - 1 == self.at:
                raise self.fault

        def opener(path, flags, *args, **kwargs):
            if str(path).endswith(_file_set.LOCK):
                step("open lock")
            elif str(path).endswith("index.json") and not flags & (os.O_WRONLY | os.O_RDWR):
                step("read index")
            return real_open(path, flags, *args, **kwargs)

        def flock(fd, operation):
            step("flock")
            return real_flock(fd, operation)
        monkeypatch.setattr(os, "open", opener)
        monkeypatch.setattr(fcntl, "flock", flock)


KIND = "illustrated-onnx/1"  # a set of a kind: the kind check reads its index


def lock_points():
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        write_set(Path(tmp), 1, KIND)
        faults = LockFaults(patch)
        write_set(Path(tmp), 2, KIND)
    return list(enumerate(faults.events))


LOCK_FAULTS = {**FAULTS, "ENOLCK": OSError(errno.ENOLCK, "No locks available")}


def test_the_lock_points_are_what_entering_does():
    assert [kind for _, kind in lock_points()] == ["open lock", "flock", "read index"]


@pytest.mark.parametrize("at, kind, fault", [
    pytest.param(at, kind, LOCK_FAULTS[name], id=f"{at}-{kind}-{name}")
    for at, kind in lock_points() for name in LOCK_FAULTS])
def test_a_fault_while_locking_leaves_the_old_set_and_the_lock_free(tmp_path, monkeypatch, at,
                                                                   kind, fault):
    folder = first_set(tmp_path, KIND)
    names = sorted(p.name for p in folder.iterdir())
    with pytest.MonkeyPatch.context() as patch:
        LockFaults(patch, at, fault)
        outcome = outcome_of(lambda: write_set(folder, 2, KIND))
    assert outcome == ("interrupted" if isinstance(fault, KeyboardInterrupt) else "failed")
    assert read_set(folder)[0] == "1" and sorted(p.name for p in folder.iterdir()) == names
    write_set(folder, 2, KIND)  # the lock is free again
    assert read_set(folder)[0] == "2"
