"""A set of files is one transaction (illustrated.files.file_set): the shipped weights and their
manifest, an ONNX export's graphs, vocabularies and index. A fault (a full disk: ENOSPC) or
Ctrl-C is injected at every write point of the set in turn (each write, fsync and rename of each
file, the rename's aftermath, each removal of an old file); afterwards the reader sees the whole
old set or the whole new one, never a mix, no temporary file is left, and what the command says
is true: "nothing changed" only when the old set is in place, "already in place" only when the
new one is."""
import json
import os

import pytest
import torch

import illustrated as il
from illustrated import pretrained_models
from illustrated.files import atomic as _atomic
from illustrated.files import file_set as _file_set
from illustrated.commands import onnx_export
from illustrated.commands import shipped

KINDS = ("write", "fsync", "replace", "replaced", "unlink")


class Faults:
    """Counts the set writer's file operations; with ``at``, the ``at``-th one fails with
    ``fault`` ("replaced": Ctrl-C just after a rename happened, as a signal during rename(2)
    arrives)."""

    def __init__(self, monkeypatch, at=None, fault=None):
        self.events, self.at, self.fault = [], at, fault
        real = {name: getattr(os, name) for name in ("fsync", "replace", "fdopen")}
        unlink = _file_set.Path.unlink

        def step(kind):
            self.events.append(kind)
            if len(self.events) - 1 == self.at and kind != "replaced":
                raise self.fault

        def fsync(fd):
            step("fsync")
            real["fsync"](fd)

        def replace(src, dst):
            step("replace")
            real["replace"](src, dst)
            self.events.append("replaced")
            if len(self.events) - 1 == self.at:
                raise KeyboardInterrupt

        def fdopen(*args, **kwargs):
            file = real["fdopen"](*args, **kwargs)
            write = file.write

            def counted(data):
                step("write")
                return write(data)
            file.write = counted
            return file

        def remove(path, *args, **kwargs):
            step("unlink")
            unlink(path, *args, **kwargs)

        monkeypatch.setattr(_atomic.os, "fsync", fsync)
        monkeypatch.setattr(_atomic.os, "replace", replace)
        monkeypatch.setattr(_atomic.os, "fdopen", fdopen)
        monkeypatch.setattr(_file_set.Path, "unlink", remove)


FAULTS = {"ENOSPC": OSError(28, "No space left on device"), "Ctrl-C": KeyboardInterrupt()}


def cases(points):
    """(index, kind, fault) for every point and fault; after a rename only a signal can come."""
    return [pytest.param(at, kind, FAULTS[name], id=f"{at}-{kind}-{name}")
            for at, kind in points for name in FAULTS
            if not (kind == "replaced" and name == "ENOSPC")]


def hidden(folder):
    """Hidden files left in ``folder`` (temporary files), less the set's lock file, which stays."""
    return sorted(p.name for p in folder.iterdir()
                  if p.name.startswith(".") and p.name != _file_set.LOCK)


# ---- the transaction itself, on a set of three made-up files

def write_set(folder, generation, kind=None):
    """Three made-up members and their index; with ``kind``, a set of that kind (its format)."""
    with _file_set.SetWriter(folder, "index.json", owned=lambda n: n.startswith("part"),
                             name="--out", kind=kind) as writer:
        entries = {n: writer.add(f"{n}.bin", f"{n} of generation {generation}".encode() * 50)
                   for n in ("part-a", "part-b", "part-c")}
        index = {"format": kind, **entries} if kind else entries
        writer.commit(json.dumps(index).encode(), [e["file"] for e in entries.values()])


def read_set(folder):
    """The generation every file of the set belongs to; the set must be whole and agree."""
    entries = json.loads((folder / "index.json").read_text())
    entries.pop("format", None)
    generations = set()
    for name, entry in entries.items():
        path = _file_set.member(folder, entry, "--out", name)
        generations.add(path.read_bytes().decode().split(" of generation ")[1][0])
    assert len(generations) == 1, generations
    named = {e["file"] for e in entries.values()} | {"index.json"}
    return generations.pop(), named


def outcome_of(write):
    """What ``write()`` said: "done", "in place" (Ctrl-C once the new set was in place),
    "interrupted" (before) or "failed" (one ValueError line naming --out and the folder)."""
    try:
        write()
        return "done"
    except _atomic.InterruptedAfterWrite:
        return "in place"
    except KeyboardInterrupt:
        return "interrupted"
    except ValueError as error:
        assert "\n" not in str(error) and str(error).startswith("--out: ")
        return "failed"


def first_set(tmp_path, kind=None):
    """A folder holding generation 1 of write_set's set."""
    folder = tmp_path / "set"
    folder.mkdir()
    write_set(folder, 1, kind)
    return folder


@pytest.fixture
def folder(tmp_path):
    return first_set(tmp_path)


def generic_points():
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        folder = Path(tmp)
        write_set(folder, 1)
        faults = Faults(patch)
        write_set(folder, 2)
    return list(enumerate(faults.events))


GENERIC = generic_points()


def test_the_points_cover_every_file_of_the_set():
    kinds = [kind for _, kind in GENERIC]
    assert kinds.count("replace") == 4 and kinds.count("replaced") == 4  # 3 members, the index
    assert kinds.count("unlink") == 3  # the old members, after the switch
    assert kinds.count("fsync") == 8  # each file and its directory entry


@pytest.mark.parametrize("at, kind, fault", cases(GENERIC))
def test_a_fault_at_any_point_leaves_the_old_set_or_the_new_one(folder, monkeypatch, at, kind,
                                                                fault):
    Faults(monkeypatch, at, fault)
    outcome = outcome_of(lambda: write_set(folder, 2))
    monkeypatch.undo()
    generation, named = read_set(folder)
    files = {p.name for p in folder.iterdir()} - {_file_set.LOCK}
    assert hidden(folder) == []
    if outcome in ("interrupted", "failed"):  # said: nothing changed
        assert generation == "1" and files == named  # and the new members are gone
    else:  # said: the new set is complete
        assert generation == "2" and files >= named
        assert all(name.startswith("part") for name in files - named)  # old ones, unnamed
    if kind == "unlink":  # the switch had happened: the clean-up is best effort
        assert outcome in ("done", "in place")


def test_a_member_that_does_not_match_the_index_is_refused_in_one_line(folder):
    entries = json.loads((folder / "index.json").read_text())
    path = folder / entries["part-b"]["file"]
    path.write_bytes(path.read_bytes()[:-1] + b"X")
    with pytest.raises(ValueError) as info:
        read_set(folder)
    assert str(info.value) == (f"--out: part-b '{path}' does not match the index (another size "
                               f"or sha256: not the set it names)")


# ---- python -m illustrated.commands.shipped: weights and manifest

def shifted_training(state):
    """A ``train_corpus`` for shipped: the shipped models with their weights shifted by
    ``state["generation"]``, trained in no time."""
    def train_corpus(corpus, **kwargs):
        model, src_vocab, tgt_vocab = il.pretrained(corpus)
        with torch.no_grad():
            model.generator.proj.bias.add_(state["generation"])
        return model, src_vocab, tgt_vocab, None
    return train_corpus


@pytest.fixture
def fake_training(monkeypatch):
    """shipped.make_models on the shipped models shifted by ``generation``."""
    state = {"generation": 0}
    monkeypatch.setattr(shipped, "train_corpus", shifted_training(state))
    monkeypatch.setattr(shipped, "evaluate", lambda *a, **k: {"exact_match": 1.0,
                                                              "pronoun_accuracy": 1.0})
    return state


def shipped_generation(folder):
    """Which generation il.pretrained finds in ``folder``, each file checked against the
    manifest; the whole set must agree."""
    base = {c: il.pretrained(c)[0].generator.proj.bias[0].item() for c in SHIPPED_CORPORA}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pretrained_models, "_weights_dir", lambda: folder)
        found = {round(il.pretrained(c)[0].generator.proj.bias[0].item() - base[c])
                 for c in pretrained_models.manifest()["models"]}
    assert len(found) == 1, found
    return found.pop()


SHIPPED_CORPORA = ["post", "copy"]


def shipped_points():
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        folder = Path(tmp)
        state = {"generation": 1}
        patch.setattr(shipped, "train_corpus", shifted_training(state))
        patch.setattr(shipped, "evaluate", lambda *a, **k: {"exact_match": 1.0})
        shipped.make_models(folder, SHIPPED_CORPORA)
        state["generation"] = 2
        faults = Faults(patch)
        shipped.make_models(folder, SHIPPED_CORPORA)
    return list(enumerate(faults.events))


SHIPPED_POINTS = shipped_points()


@pytest.mark.parametrize("at, kind, fault", cases(SHIPPED_POINTS))
def test_shipped_weights_and_manifest_change_together(tmp_path, monkeypatch, fake_training,
                                                      capsys, at, kind, fault):
    folder = tmp_path / "weights"
    fake_training["generation"] = 1
    assert shipped.main(["--corpora", *SHIPPED_CORPORA, "--out", str(folder)]) == 0
    fake_training["generation"] = 2
    with pytest.MonkeyPatch.context() as patch:
        Faults(patch, at, fault)
        code = shipped.main(["--corpora", *SHIPPED_CORPORA, "--out", str(folder)])
    err = capsys.readouterr().err
    generation = shipped_generation(folder)
    assert hidden(folder) == [] and err.count("\n") <= 1
    if code == 0:
        assert generation == 2 and err == ""
    elif code == 2:
        assert generation == 1 and err.startswith("error: path: could not write ")
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [*(e["file"] for e in pretrained_models.read_manifest(folder / "manifest.json")["models"]
               .values()), "manifest.json", _file_set.LOCK])  # the new weights files are gone
    else:
        assert code == 130
        if "nothing changed" in err:
            assert generation == 1
        else:
            assert "already in place" in err and generation == 2


# ---- python -m illustrated.commands.onnx_export: graphs, vocabularies and index

@pytest.fixture
def quick_export(monkeypatch):
    """Made-up graph bytes that carry a generation: these tests are about the files."""
    state = {"generation": 1}
    monkeypatch.setattr(onnx_export, "_export", lambda graph, args, name, *rest: (
        f"graph {name} of generation {state['generation']}".encode()))
    monkeypatch.setattr(onnx_export, "_onnx", lambda: None)
    return state


def export_generation(folder):
    index = onnx_export.read_export(folder)  # every file checked against the index
    found = {(folder / name).read_bytes().decode().rsplit(" ", 1)[1]
             for entry in index["models"].values()
             for kind, name in entry["files"].items() if kind != "vocab"}
    assert len(found) == 1, found
    return int(found.pop())


def export_points():
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        state = {"generation": 1}
        patch.setattr(onnx_export, "_export", lambda graph, args, name, *rest: (
            f"graph {name} of generation {state['generation']}".encode()))
        onnx_export.export_all(Path(tmp), ("post",))
        state["generation"] = 2
        faults = Faults(patch)
        onnx_export.export_all(Path(tmp), ("post",))
    return list(enumerate(faults.events))


EXPORT_POINTS = export_points()


@pytest.mark.parametrize("at, kind, fault", cases(EXPORT_POINTS))
def test_an_export_changes_as_a_whole(tmp_path, quick_export, capsys, at, kind, fault):
    folder = tmp_path / "models"
    assert onnx_export.main(["--out", str(folder), "--corpus", "post"]) == 0
    quick_export["generation"] = 2
    with pytest.MonkeyPatch.context() as patch:
        Faults(patch, at, fault)
        code = onnx_export.main(["--out", str(folder), "--corpus", "post"])
    captured = capsys.readouterr()
    generation = export_generation(folder)
    assert hidden(folder) == [] and captured.err.count("\n") <= 1
    if code == 0:
        assert generation == 2
    elif code == 2:
        assert generation == 1 and captured.err.startswith("error: --out: could not write ")
    else:
        assert code == 130
        if "nothing changed" in captured.err:
            assert generation == 1
        else:
            assert "already in place" in captured.err and generation == 2


def test_an_export_whose_graph_does_not_match_its_index_is_refused(tmp_path, quick_export):
    folder = tmp_path / "models"
    assert onnx_export.main(["--out", str(folder), "--corpus", "post"]) == 0
    index = json.loads((folder / "index.json").read_text())
    decoder = folder / index["models"]["post"]["files"]["decoder"]
    decoder.write_bytes(b"graph post.decoder.onnx of generation 9")  # another export's graph
    with pytest.raises(ValueError) as info:
        onnx_export.read_export(folder)
    assert str(info.value) == (f"--out: the decoder file of 'post' '{decoder}' does not match "
                               f"index.json (another size or sha256: not the set it names)")


def test_files_the_set_does_not_own_are_never_removed(folder):
    (folder / "notes.txt").write_text("mine")
    (folder / "part-a.unrelated").write_text("not a member's name, but owned by the pattern")
    write_set(folder, 2)
    assert (folder / "notes.txt").read_text() == "mine"
    assert read_set(folder)[0] == "2"
