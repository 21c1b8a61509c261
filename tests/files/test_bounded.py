"""Every file the package reads is checked before it is parsed (illustrated.files.bounded): its type
(a device, a FIFO, a socket or a directory named as what it is), its size, and for JSON its
nesting depth; each refusal is one ValueError naming the file, never a RecursionError, a
MemoryError or a read that waits forever."""
import json
import os
import socket
import subprocess
import sys

import pytest

from illustrated.files import bounded as _bounded


def test_json_nested_100000_deep_is_refused_before_parsing(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError) as info:
        _bounded.read_json(path, "manifest")
    assert str(info.value) == (f"manifest: '{path}' is nested more than 32 levels deep, "
                               f"expected a JSON file")


@pytest.mark.parametrize("text, depth", [("{}", 1), ('{"a": [1, {"b": []}]}', 4), ("3", 0),
                                         ('["[[[[", "]]]"]', 1), ('{"k\\"[": "\\\\"}', 1),
                                         ('"unterminated [[[', 0)])
def test_the_depth_counts_brackets_outside_strings_only(text, depth):
    assert _bounded.json_depth(text, 32) == depth


def test_the_depth_scan_is_linear_on_an_unterminated_string():
    """An escaped quote after each quote, no closing one: each character looked at once."""
    text = '"' + '\\"' * 2_000_000 + "\\"
    result = subprocess.run([sys.executable, "-c", "import sys; from illustrated.files.bounded import "
                             "json_depth; print(json_depth(sys.stdin.read(), 32))"],
                            input=text, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "0", result.stderr


def test_a_link_to_dev_zero_is_refused_by_type(tmp_path):
    link = tmp_path / "manifest.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(ValueError) as info:
        _bounded.read_json(link, "manifest", "a manifest")
    assert str(info.value) == f"manifest: '{link}' is a character device, expected a manifest"


def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "index.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"is a FIFO \(named pipe\), expected a JSON file$"):
        _bounded.read_json(fifo, "--out")


def test_a_socket_and_a_directory_are_named(tmp_path):
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        with pytest.raises(ValueError, match=r"is a socket, expected a file$"):
            _bounded.read_bytes(tmp_path / "s", "path", limit=10)
    with pytest.raises(ValueError, match=r"is a directory, expected a file$"):
        _bounded.read_bytes(tmp_path, "path", limit=10)


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(["x" * 2000]))
    with pytest.raises(ValueError) as info:
        _bounded.read_json(path, "manifest", limit=1000)
    assert str(info.value) == (f"manifest: '{path}' is 2.0 kB, more than the 1.0 kB such a file "
                               f"may have")
    assert _bounded.read_json(path, "manifest", limit=2006) == ["x" * 2000]


@pytest.mark.parametrize("content, reason", [
    (b"{not json", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    (b"\xff\xfe", "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
])
def test_unreadable_json_is_one_line_with_the_reason(tmp_path, content, reason):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        _bounded.read_json(path, "manifest")
    assert str(info.value) == f"manifest: cannot read '{path}' ({reason})"


def test_missing_files_and_dangling_links(tmp_path):
    with pytest.raises(ValueError, match=r"^path: no file at '.*nope' \(expected a file\)$"):
        _bounded.regular_file_size(tmp_path / "nope", "path")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(ValueError, match=r"^path: no file at '.*dangling'"):
        _bounded.regular_file_size(tmp_path / "dangling", "path")


def test_a_file_that_grows_while_it_is_read_stops_at_the_limit(tmp_path, monkeypatch):
    """The file was 1,000 bytes when it was checked and has grown to 1 MB since (another process
    appends to it): the reader takes at most limit + 1 bytes, then refuses it."""
    path = tmp_path / "growing.json"
    path.write_bytes(b"x" * 1_000_000)
    real_fstat, real_fdopen, taken = os.fstat, os.fdopen, []

    def fstat(fd):  # the size it had when it was checked
        info = real_fstat(fd)
        return os.stat_result((*info[:6], 1000, *info[7:10]))

    def fdopen(*args, **kwargs):
        file = real_fdopen(*args, **kwargs)
        read = file.read

        def counted(*size):
            data = read(*size)
            taken.append(len(data))
            return data
        file.read = counted
        return file
    monkeypatch.setattr(_bounded.os, "fstat", fstat)
    monkeypatch.setattr(_bounded.os, "fdopen", fdopen)
    with pytest.raises(ValueError) as info:
        _bounded.read_bytes(path, "manifest", limit=1000)
    assert sum(taken) <= 1001 and taken
    assert str(info.value) == (f"manifest: '{path}' is 1.0 kB, more than the 1.0 kB such a file "
                               f"may have")
