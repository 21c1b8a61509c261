"""Helpers of the file-set tests: a fault injected at any of the set writer's file operations,
a made-up set of three members, and a stand-in training for the shipped models."""
import json
import os

import pytest
import torch

import illustrated as il
from illustrated.files import atomic as _atomic
from illustrated.files import file_set as _file_set

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


def shifted_training(state):
    """A ``train_corpus`` for shipped: the shipped models with their weights shifted by
    ``state["generation"]``, trained in no time."""
    def train_corpus(corpus, **kwargs):
        model, src_vocab, tgt_vocab = il.pretrained(corpus)
        with torch.no_grad():
            model.generator.proj.bias.add_(state["generation"])
        return model, src_vocab, tgt_vocab, None
    return train_corpus
