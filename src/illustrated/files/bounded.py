"""The one reader of every file the package reads: its type, size and shape checked before parsing.

A file is opened without blocking (a FIFO would otherwise wait for a writer forever) and refused
unless it is a regular file (a device such as ``/dev/zero``, a FIFO, a socket or a directory is
named as what it is); at most ``limit`` bytes are ever read (a bigger file is refused, not read);
JSON is scanned for its nesting depth before ``json.loads`` sees it (a manifest nested 100,000
deep would otherwise end in a RecursionError). Every refusal is one ValueError naming the file.
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
from typing import Any

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "describe_type", "regular_file_size",
           "read_bytes", "json_depth", "read_json", "size_text"]

#: Largest JSON file read (a manifest, an export's index or vocabulary): 16 MiB.
MAX_JSON_BYTES = 16 << 20

#: Deepest nesting of arrays and objects a JSON file may have (ours have at most 4).
MAX_JSON_DEPTH = 32

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def describe_type(mode: int) -> str:
    """'a directory', 'a character device', ... for a file mode that is not a regular file."""
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def size_text(count: int) -> str:
    """A byte count for a message: '0 bytes', '812.3 kB', '1.2 MB', '4.3 GB'."""
    if count < 1000:
        return f"{count} byte{'' if count == 1 else 's'}"
    if count < 1_000_000:
        return f"{count / 1e3:.1f} kB"
    return f"{count / 1e6:.1f} MB" if count < 1_000_000_000 else f"{count / 1e9:.1f} GB"


def _open(path: str | os.PathLike, name: str, what: str) -> tuple[int, os.stat_result]:
    """A read-only descriptor of a regular file (links followed) and its stat; ValueError else."""
    shown = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        try:
            mode = os.stat(path).st_mode
        except OSError:  # missing, or a link to nothing
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise ValueError(f"{name}: {shown!r} is {describe_type(mode)}, expected "
                             f"{what}") from None
        if mode is None and error.errno == errno.ENOENT:
            raise ValueError(f"{name}: no file at {shown!r} (expected {what})") from None
        raise ValueError(f"{name}: cannot read {shown!r} ({error.strerror or error})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ValueError(f"{name}: {shown!r} is {describe_type(info.st_mode)}, expected {what}")
    return fd, info


def regular_file_size(path: str | os.PathLike, name: str, what: str = "a file", *,
                      limit: int | None = None) -> int:
    """The size in bytes of the regular file ``path`` (a link followed), checked against ``limit``.

    Raises ValueError naming ``name`` and the path: missing, a directory, a device, a FIFO or a
    socket (named as such), unreadable, or over ``limit`` bytes.
    """
    fd, info = _open(path, name, what)
    os.close(fd)
    _check_size(path, name, info.st_size, limit)
    return info.st_size


def _check_size(path: str | os.PathLike, name: str, size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise ValueError(f"{name}: {os.fspath(path)!r} is {size_text(size)}, more than the "
                         f"{size_text(limit)} such a file may have")


def read_bytes(path: str | os.PathLike, name: str, what: str = "a file", *, limit: int) -> bytes:
    """The bytes of the regular file ``path``, never more than ``limit`` of them read.

    Raises ValueError as :func:`regular_file_size`, also for a file that grows past ``limit``
    while it is read.
    """
    fd, info = _open(path, name, what)
    try:
        _check_size(path, name, info.st_size, limit)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    except OSError as error:
        raise ValueError(f"{name}: cannot read {os.fspath(path)!r} "
                         f"({error.strerror or error})") from None
    finally:
        os.close(fd)
    _check_size(path, name, len(data), limit)
    return data


# A JSON string (an unterminated one runs to the end: each character is looked at once, and the
# repetition is possessive, so no backtracking state is kept per character) or a
# bracket: the brackets outside strings give the nesting depth.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)|[\[\]{}]', re.S)


def json_depth(text: str, limit: int) -> int:
    """The deepest nesting of ``text``'s arrays and objects, counted up to ``limit + 1``."""
    depth = deepest = 0
    for match in _JSON_TOKEN.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif char in "]}":
            depth -= 1
    return deepest


def read_json(path: str | os.PathLike, name: str, what: str = "a JSON file", *,
              limit: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A UTF-8 JSON file, its type, size (``limit`` bytes) and depth (``max_depth``) checked first.

    Raises ValueError naming ``name`` and the path: as :func:`read_bytes`, not UTF-8, nested
    deeper than ``max_depth``, or not JSON (with json's own reason).
    """
    shown = os.fspath(path)
    data = read_bytes(path, name, what, limit=limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{name}: cannot read {shown!r} ({error})") from None
    if json_depth(text, max_depth) > max_depth:
        raise ValueError(f"{name}: {shown!r} is nested more than {max_depth} levels deep, "
                         f"expected {what}")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"{name}: cannot read {shown!r} ({reason})") from None
