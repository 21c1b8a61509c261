"""The one writer of every file the package writes (illustrated.files.atomic): a failed, full or
interrupted write leaves the earlier file byte for byte and no temporary file, in one line naming
the file; Ctrl-C once the new file is in place says so (InterruptedAfterWrite); read-only files
and file systems are refused, each named as what it is; symbolic links are followed; a disk
without room for the file is refused before anything is written; any legal file name is
accepted (the temporary name is cut to fit)."""
import os
import shutil
import stat

import pytest
import torch

from illustrated.files import atomic as _atomic

from illustrated.files import bounded as _bounded


def leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.fixture
def old(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"the earlier file")
    return path


def raiser(error):
    def fail(*args, **kwargs):
        raise error
    return fail


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_full_disk_is_one_line_naming_the_file_and_the_old_file_stays(old, monkeypatch, step):
    monkeypatch.setattr(_atomic.os, step, raiser(OSError(28, "No space left on device")))
    with pytest.raises(ValueError) as info:
        _atomic.write_bytes(old, b"new bytes", name="--out")
    assert str(info.value) == (f"--out: could not write '{old}' (No space left on device); any "
                               f"previous file there is unchanged")
    assert old.read_bytes() == b"the earlier file" and leftovers(old.parent) == []


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_ctrl_c_at_any_step_leaves_the_old_file(old, monkeypatch, step):
    monkeypatch.setattr(_atomic.os, step, raiser(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        _atomic.write_bytes(old, b"new bytes")
    assert old.read_bytes() == b"the earlier file" and leftovers(old.parent) == []


def test_an_error_inside_the_block_leaves_the_old_file(old):
    with pytest.raises(RuntimeError, match="boom"):
        with _atomic.atomic_write(old) as file:
            file.write(b"half of it")
            raise RuntimeError("boom")
    assert old.read_bytes() == b"the earlier file" and leftovers(old.parent) == []


def test_a_successful_write_replaces_and_keeps_the_mode(old):
    old.chmod(0o640)
    assert _atomic.write_text(old, "héllo\n") == old
    assert old.read_bytes() == "héllo\n".encode() and leftovers(old.parent) == []
    assert old.stat().st_mode & 0o777 == 0o640
    new = old.parent / "new.txt"
    _atomic.write_text(new, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600


def test_a_read_only_file_is_refused_not_replaced(old):
    """0444: the process (root included, which could) must not silently replace it."""
    old.chmod(0o444)
    with pytest.raises(ValueError) as info:
        _atomic.write_bytes(old, b"new", name="--out")
    assert str(info.value) == (f"--out: '{old}' is read-only (mode 444); expected a file that "
                               f"may be replaced (chmod u+w, or choose another path)")
    assert old.read_bytes() == b"the earlier file"


def test_a_symbolic_link_is_followed_and_stays_a_link(old, tmp_path):
    link = tmp_path / "link.pt"
    link.symlink_to(old)
    assert _atomic.write_bytes(link, b"through the link") == old
    assert link.is_symlink() and os.readlink(link) == str(old)
    assert old.read_bytes() == b"through the link"
    dangling = tmp_path / "dangling.pt"
    dangling.symlink_to(tmp_path / "not-yet.pt")
    _atomic.write_bytes(dangling, b"created")
    assert dangling.is_symlink() and (tmp_path / "not-yet.pt").read_bytes() == b"created"
    old.chmod(0o444)  # a link to a read-only file: refused like the file
    with pytest.raises(ValueError, match="is read-only"):
        _atomic.write_bytes(link, b"no")


def test_a_link_loop_and_special_files_are_refused(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ValueError, match=r"^path: '.*loop' is a symbolic link that cannot be "
                                         r"followed \(a loop\)"):
        _atomic.write_bytes(loop, b"x")
    with pytest.raises(ValueError, match=r"^path: expected a regular file to replace, got "
                                         r"'/dev/null'"):
        _atomic.write_bytes("/dev/null", b"x")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


@pytest.mark.parametrize("free, ok", [(0, False), (8, False), (9, True)])
def test_the_disk_must_have_room_for_the_file(old, monkeypatch, free, ok):
    monkeypatch.setattr(_atomic.shutil, "disk_usage",
                        lambda path: shutil._ntuple_diskusage(10**9, 10**9, free))
    if ok:
        _atomic.write_bytes(old, b"123456789")
        assert old.read_bytes() == b"123456789"
        return
    with pytest.raises(ValueError) as info:
        _atomic.write_bytes(old, b"123456789", name="--out")
    assert str(info.value) == (f"--out: expected 9 bytes free for '{old}', but '{old.parent}' "
                               f"has {free} bytes free")
    assert old.read_bytes() == b"the earlier file"


@pytest.mark.parametrize("count, text", [(0, "0 bytes"), (999, "999 bytes"), (1000, "1.0 kB"),
                                         (812_345, "812.3 kB"), (1_234_567, "1.2 MB"),
                                         (4_294_967_296, "4.3 GB")])
def test_sizes_in_messages(count, text):
    assert _bounded.size_text(count) == text


@pytest.mark.parametrize("path, match", [
    ("", "expected a file path, got ''"),
    ("dir/", "expected a file path, got 'dir/'"),
    (b"x.pt", "expected a file path \\(str or os.PathLike\\), got bytes"),
    (3, "expected a file path \\(str or os.PathLike\\), got int"),
])
def test_bad_paths_are_refused_by_name(path, match):
    with pytest.raises(ValueError, match=f"^out: {match}"):
        _atomic.check_writable(path, "out")


def test_serialize_turns_torchs_wrapped_interrupt_back_into_one(monkeypatch):
    def wrapped(obj, file):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos") \
                from None

    monkeypatch.setattr(torch, "save", wrapped)
    with pytest.raises(KeyboardInterrupt):
        _atomic.serialize({"a": 1})
    monkeypatch.setattr(torch, "save", raiser(RuntimeError("another failure")))
    with pytest.raises(RuntimeError, match="another failure"):
        _atomic.serialize({"a": 1})


def test_atomic_save_round_trips(tmp_path):
    path = tmp_path / "t.pt"
    _atomic.atomic_save({"w": torch.arange(5.0)}, path)
    assert torch.equal(torch.load(path, weights_only=True)["w"], torch.arange(5.0))


# ---- Ctrl-C once the new file is in place: the message must not say "not written"

def test_ctrl_c_at_the_rename_after_it_happened_says_the_new_file_is_in_place(old, monkeypatch):
    """The signal arrives while rename(2) runs: Python raises KeyboardInterrupt once it returns."""
    replace = os.replace

    def rename_then_interrupt(src, dst):
        replace(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(_atomic.os, "replace", rename_then_interrupt)
    with pytest.raises(_atomic.InterruptedAfterWrite) as info:
        _atomic.write_bytes(old, b"new bytes")
    assert isinstance(info.value, KeyboardInterrupt) and info.value.path == old
    assert old.read_bytes() == b"new bytes" and leftovers(old.parent) == []


def test_ctrl_c_at_the_directory_fsync_says_the_new_file_is_in_place(old, monkeypatch):
    fsync, calls = os.fsync, []

    def second_fsync_interrupted(fd):
        calls.append(fd)
        if len(calls) == 2:  # the first flushes the file, the second its directory entry
            raise KeyboardInterrupt
        fsync(fd)

    monkeypatch.setattr(_atomic.os, "fsync", second_fsync_interrupted)
    with pytest.raises(_atomic.InterruptedAfterWrite):
        _atomic.write_bytes(old, b"new bytes")
    assert old.read_bytes() == b"new bytes" and leftovers(old.parent) == []


def test_ctrl_c_at_the_rename_before_it_happened_leaves_the_old_file(old, monkeypatch):
    monkeypatch.setattr(_atomic.os, "replace", raiser(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt) as info:
        _atomic.write_bytes(old, b"new bytes")
    assert not isinstance(info.value, _atomic.InterruptedAfterWrite)
    assert old.read_bytes() == b"the earlier file" and leftovers(old.parent) == []


# ---- names, file systems, special files

@pytest.mark.parametrize("name", ["a" * 250, "é" * 127, "m" * 255])
def test_every_legal_file_name_is_accepted(tmp_path, name):
    """Before: a 250-byte --out was refused as too long: the temporary name was."""
    path = tmp_path / name
    _atomic.write_bytes(path, b"x")
    assert path.read_bytes() == b"x" and leftovers(tmp_path) == []
    _atomic.write_bytes(path, b"y")  # and replaced
    assert path.read_bytes() == b"y"


def test_a_name_longer_than_the_file_system_takes_is_refused_before_anything(tmp_path):
    path = tmp_path / ("a" * 256)
    with pytest.raises(ValueError) as info:
        _atomic.check_writable(path, "--out")
    assert str(info.value) == (f"--out: expected a file name of at most 255 bytes, got 256 "
                               f"bytes in '{path}'")


def test_a_read_only_file_system_is_named_as_such_not_as_a_file_mode(old, monkeypatch):
    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(_atomic.os, "statvfs", lambda path: ReadOnly())
    monkeypatch.setattr(_atomic.os, "access", lambda path, mode: False)
    with pytest.raises(ValueError) as info:
        _atomic.write_bytes(old, b"new", name="--out")
    assert str(info.value) == (f"--out: '{old}' is on a read-only file system; expected a path "
                               f"on one that may be written (choose another path)")
    assert "chmod" not in str(info.value) and old.read_bytes() == b"the earlier file"


def test_a_fifo_or_a_device_to_replace_is_named_as_what_it_is(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"^path: expected a regular file to replace, got "
                                         r"'.*pipe', which is a FIFO \(named pipe\)$"):
        _atomic.write_bytes(fifo, b"x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(ValueError, match=r"which is a character device$"):
        _atomic.write_bytes("/dev/null", b"x")


def test_the_temporary_file_is_made_beside_the_target(old, tmp_path, monkeypatch):
    """The rename that puts the new file in place stays in one directory, so on one file system
    (a rename across file systems fails, and the atomic promise with it): never in $TMPDIR."""
    elsewhere = tmp_path / "system-tmp"
    elsewhere.mkdir()
    monkeypatch.setenv("TMPDIR", str(elsewhere))
    monkeypatch.setattr(_atomic.tempfile, "tempdir", str(elsewhere))
    renames, real = [], os.replace

    def replace(src, dst):
        renames.append((os.path.dirname(os.path.abspath(src)), os.path.dirname(dst)))
        real(src, dst)
    monkeypatch.setattr(_atomic.os, "replace", replace)
    _atomic.write_bytes(old, b"the new file")
    assert old.read_bytes() == b"the new file"
    assert renames == [(str(old.parent), str(old.parent))]
    assert list(elsewhere.iterdir()) == [] and leftovers(old.parent) == []


def test_an_output_name_that_is_not_utf8_is_refused(tmp_path):
    path = str(tmp_path) + "/model-\udcff.pt"  # the byte 0xff, as the system hands it over
    with pytest.raises(ValueError) as info:
        _atomic.check_writable(path, "--out")
    assert str(info.value) == (f"--out: expected a path in UTF-8, got {ascii(path)} (a byte that "
                               f"is not UTF-8: rename it)")
    assert str(info.value).isascii()
