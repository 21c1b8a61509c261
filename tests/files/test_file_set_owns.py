"""A set writer removes only files its old index named; readers check every member the index
names; the lock file is never made through a link (illustrated.files.file_set and its three
writers: shipped, web_export, onnx_export)."""
import json
import os
import subprocess
import sys

import pytest

import illustrated as il
from illustrated.commands import onnx_export, shipped, web_export
from illustrated.files import file_set as _file_set


def files_of(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def write_parts(folder, generation, owned=lambda n: n.startswith("part")):
    with _file_set.SetWriter(folder, "index.json", owned=owned, name="--out") as writer:
        entries = {n: writer.add(f"{n}.bin", f"{n} of generation {generation}".encode())
                   for n in ("part-a", "part-b")}
        writer.commit(json.dumps(entries).encode(), [e["file"] for e in entries.values()])
    return entries


# ---- the writer: what it removes

def test_a_folder_without_an_index_owns_nothing(tmp_path):
    mine = {"part-a.bin": b"the user's", "part-b.0123456789abcdef.bin": b"also the user's",
            "part-x": b"a name the pattern claims"}
    for name, data in mine.items():
        (tmp_path / name).write_bytes(data)
    entries = write_parts(tmp_path, 1)
    after = files_of(tmp_path)
    assert {n: after[n] for n in mine} == mine
    assert {e["file"] for e in entries.values()} <= set(after)


def test_only_the_old_index_members_are_removed_after_the_switch(tmp_path):
    first = write_parts(tmp_path, 1)
    (tmp_path / "part-c.0123456789abcdef.bin").write_bytes(b"a member's name, no index's")
    second = write_parts(tmp_path, 2)
    names = set(files_of(tmp_path))
    assert not {e["file"] for e in first.values()} & names  # the old set is gone
    assert {e["file"] for e in second.values()} | {"part-c.0123456789abcdef.bin"} <= names


def test_an_index_naming_files_outside_the_pattern_or_folder_removes_none(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep")
    (folder / "index.json").write_text(json.dumps({
        "a": {"file": "notes.txt"}, "b": {"file": "../outside.txt"},
        "c": {"files": {"x": str(outside)}}}))
    write_parts(folder, 1)
    assert (folder / "notes.txt").read_text() == "keep" and outside.read_text() == "keep"


def test_a_file_of_a_member_name_holding_other_bytes_is_refused_in_one_line(tmp_path):
    data = b"part-a of generation 1"
    name = _file_set.hashed_name("part-a.bin", _file_set.sha256_bytes(data))
    (tmp_path / name).write_bytes(b"the user's own bytes")
    with pytest.raises(ValueError) as info:
        write_parts(tmp_path, 1)
    assert str(info.value) == (f"--out: '{tmp_path / name}' is a file this set's index does not "
                               f"name, expected no file of that name (a member's; move it away)")
    assert (tmp_path / name).read_bytes() == b"the user's own bytes"
    assert not (tmp_path / "index.json").exists()


# ---- the three data-loss cases, through the commands

@pytest.fixture
def quick_shipped(monkeypatch):
    """shipped's training replaced by the shipped model itself (these tests are about files)."""
    monkeypatch.setattr(shipped, "train_corpus", lambda corpus, **kw: (*il.pretrained(corpus),
                                                                       None))
    monkeypatch.setattr(shipped, "evaluate", lambda *a, **k: {"exact_match": 1.0})


@pytest.fixture
def quick_onnx(monkeypatch):
    monkeypatch.setattr(onnx_export, "_export", lambda graph, args, name, *rest: b"graph " +
                        name.encode())
    monkeypatch.setattr(onnx_export, "_onnx", lambda: None)


def test_shipped_keeps_a_model_trained_into_its_folder(tmp_path, quick_shipped, capsys):
    folder = tmp_path / "M"
    folder.mkdir()
    done = subprocess.run([sys.executable, "-m", "illustrated", "train", "--corpus", "post",
                           "--steps", "3", "--out", str(folder / "post.pt")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    mine = (folder / "post.pt").read_bytes()
    assert shipped.main(["--corpora", "copy", "--out", str(folder)]) == 0
    assert (folder / "post.pt").read_bytes() == mine
    il.load_checkpoint(folder / "post.pt")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert list(manifest["models"]) == ["copy"] and (folder / manifest["models"]["copy"]["file"]
                                                     ).is_file()


def test_web_export_keeps_a_downloaded_model_and_its_namesakes(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(web_export, "SETTINGS", {"post": web_export.SETTINGS["post"]})
    folder = tmp_path / "downloads"
    folder.mkdir()
    model, src_vocab, tgt_vocab = il.pretrained("post")
    web_export.save_model(folder / "post.safetensors", model, (src_vocab, tgt_vocab))
    (folder / "post.json").write_text('{"mine": 1}')
    (folder / "recipe.json").write_text('{"mine": 2}')
    mine = files_of(folder)
    assert web_export.main(["--out", str(folder)]) == 0
    after = files_of(folder)
    assert {n: after[n] for n in mine} == mine
    index = web_export.read_site(folder)
    assert index["recipe"]["file"] != "recipe.json"


def test_onnx_export_keeps_files_named_like_its_members(tmp_path, quick_onnx, capsys):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "post.json").write_text('{"mine": 1}')
    (folder / "copy.onnx").write_bytes(b"my own graph")
    mine = files_of(folder)
    assert onnx_export.main(["--corpus", "copy", "--out", str(folder)]) == 0
    after = files_of(folder)
    assert {n: after[n] for n in mine} == mine
    assert list(onnx_export.read_export(folder)["models"]) == ["copy"]


def test_a_second_export_removes_the_first_ones_members_only(tmp_path, quick_onnx, capsys):
    folder = tmp_path / "models"
    assert onnx_export.main(["--corpus", "post", "--out", str(folder)]) == 0
    first = set(files_of(folder))
    (folder / "post.json").write_text('{"mine": 1}')
    assert onnx_export.main(["--corpus", "copy", "--out", str(folder)]) == 0
    left = set(files_of(folder))
    assert first - left == {f for f in first if f.startswith("post.")}  # the old set's members
    assert "post.json" in left


# ---- the readers: every member checked, a switch met once

@pytest.fixture
def export(tmp_path, monkeypatch):
    monkeypatch.setattr(web_export, "SETTINGS", {"post": web_export.SETTINGS["post"]})
    folder = tmp_path / "site"
    web_export.export_site(folder, ("post",))
    return folder


def rewrite(folder, change):
    index = json.loads((folder / "index.json").read_text())
    change(index)
    (folder / "index.json").write_text(json.dumps(index))


def append_to_recipe(folder):
    path = folder / json.loads((folder / "index.json").read_text())["recipe"]["file"]
    path.write_bytes(path.read_bytes() + b" ")
    return f"the recipe file '{path}' does not match index.json"


def remove_recipe(folder):
    path = folder / json.loads((folder / "index.json").read_text())["recipe"]["file"]
    path.unlink()
    return f"no file at '{path}' (expected the recipe file)"


def unindex_recipe(folder):
    rewrite(folder, lambda index: index.pop("recipe"))
    return "has no entry 'recipe', expected one naming its recipe file"


def recipe_outside(folder):
    rewrite(folder, lambda index: index["recipe"].update(file="../../etc/passwd"))
    return "index.json's entry of the recipe file is malformed (expected a plain file name"


def absolute_member(folder):
    rewrite(folder, lambda index: index["models"]["post"]["files"].update(vocab="/etc/passwd"))
    return "index.json's entry of the vocab file of 'post' is malformed"


def extra_member(folder):
    rewrite(folder, lambda index: [index["models"]["post"][k].update(extra=v) for k, v in (
        ("files", "x.json"), ("bytes", 1), ("sha256", "0" * 64))])
    return "entry for 'post' has files ['extra', 'model', 'train', 'vocab'], expected exactly"


def missing_member(folder):
    rewrite(folder, lambda index: [index["models"]["post"][k].pop("train") for k in (
        "files", "bytes", "sha256")])
    return "entry for 'post' has files ['model', 'vocab'], expected exactly"


def extra_entry(folder):
    rewrite(folder, lambda index: index.update(more={"file": "post.json"}))
    return "has an entry 'more', expected only format, corpora, models, recipe"


def linked_member(folder):
    index = json.loads((folder / "index.json").read_text())
    path = folder / index["models"]["post"]["files"]["vocab"]
    target = folder.parent / "elsewhere.json"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    return "is a symbolic link, expected a file in the folder"


@pytest.mark.parametrize("tamper", [append_to_recipe, remove_recipe, unindex_recipe,
                                    recipe_outside, absolute_member, extra_member,
                                    missing_member, extra_entry, linked_member])
def test_read_site_refuses_any_tampering_in_one_line(export, tamper):
    web_export.read_site(export)
    expected = tamper(export)
    with pytest.raises(ValueError) as info:
        web_export.read_site(export)
    assert "\n" not in str(info.value) and str(info.value).startswith("--out: ")
    assert expected in str(info.value)


def test_a_reader_meeting_a_switch_reads_the_index_once_more(tmp_path, quick_onnx, monkeypatch,
                                                             capsys):
    folder = tmp_path / "models"
    assert onnx_export.main(["--corpus", "post", "--out", str(folder)]) == 0
    real, calls = _file_set.member, []

    def member_during_a_switch(*args, **kwargs):
        if not calls:  # the index was read; another export switches before its members are
            monkeypatch.setattr(onnx_export, "_export", lambda graph, args, name, *rest:
                                b"new graph " + name.encode())
            assert onnx_export.main(["--corpus", "post", "--out", str(folder)]) == 0
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(_file_set, "member", member_during_a_switch)
    index = onnx_export.read_export(folder)
    decoder = folder / index["models"]["post"]["files"]["decoder"]
    assert decoder.read_bytes() == b"new graph post.decoder.onnx"
    assert len(calls) == 1 + 3  # the first reading stopped at its first member


def test_a_damaged_member_is_still_refused_after_the_second_reading(tmp_path, quick_onnx,
                                                                    capsys):
    folder = tmp_path / "models"
    assert onnx_export.main(["--corpus", "post", "--out", str(folder)]) == 0
    index = json.loads((folder / "index.json").read_text())
    (folder / index["models"]["post"]["files"]["encoder"]).write_bytes(b"other")
    with pytest.raises(ValueError, match="does not match index.json"):
        onnx_export.read_export(folder)


# ---- the lock file

def test_a_lock_file_that_is_a_link_is_refused_and_nothing_made_outside(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    target = tmp_path / "elsewhere"
    os.symlink(target, folder / _file_set.LOCK)
    with pytest.raises(ValueError) as info:
        write_parts(folder, 1)
    assert str(info.value) == (f"--out: expected {_file_set.LOCK} in '{folder}' to be a plain "
                               f"file (the lock), got a symbolic link to '{target}' (remove it)")
    assert not target.exists() and not os.path.lexists(folder / "index.json")


def test_a_lock_file_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / _file_set.LOCK)
    with pytest.raises(ValueError, match=r"got a FIFO \(named pipe\) \(remove it\)$"):
        write_parts(tmp_path, 1)


def test_an_export_into_a_folder_with_a_linked_lock_exits_2(tmp_path, quick_onnx, capsys):
    folder = tmp_path / "models"
    folder.mkdir()
    target = tmp_path / "made-by-the-lock"
    os.symlink(target, folder / _file_set.LOCK)
    assert onnx_export.main(["--corpus", "post", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "got a symbolic link" in err and not target.exists()

