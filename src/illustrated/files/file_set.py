"""Several files that must agree, written as one transaction: an index written last names them.

The shipped weights and their ``manifest.json``, an ONNX export's graphs, vocabularies and
``index.json``: a reader that took a new graph beside an old one would translate nonsense. So
each member is written under a name that holds its content's sha256 (``post.3f2a9c1e0b7d4a65.pt``),
beside the old members, which nothing touches; then the index, naming every member with its
sha256 and size, replaces the old index in one atomic rename (:mod:`illustrated.files.atomic`): that
rename is the switch from the old set to the new one. Interrupted or failed at any point before
it, the old index still names the old files, whole, and the new files written so far are removed;
after it, the new set is complete and the old members are removed (a member left behind by an
interrupted clean-up is named by no index and removed by the next write). Readers check each
member they read against the index (:func:`member`): a set that does not match is refused in
one line.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from typing import Callable

from .atomic import InterruptedAfterWrite, check_writable, write_bytes
from .bounded import read_bytes, regular_file_size

__all__ = ["SetWriter", "hashed_name", "member", "sha256_bytes"]

#: Hex digits of the sha256 in a member's name (64 bits: no two contents meet by chance).
NAME_DIGITS = 16

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def hashed_name(name: str, digest: str) -> str:
    """``name`` with the first NAME_DIGITS hex digits of ``digest`` before its last suffix:
    ``hashed_name("post.encoder.onnx", "3f2a...")`` is ``"post.encoder.3f2a....onnx"``."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.{digest[:NAME_DIGITS]}.{suffix}" if dot else f"{name}.{digest[:NAME_DIGITS]}"


class SetWriter:
    """Write the members of a set into ``directory``, then switch to it by writing its index.

    Use as a context manager: :meth:`add` each member (written at once, under its hashed
    name), then :meth:`commit` the index. Leaving the block without a commit (an error,
    Ctrl-C) removes the members this writer created and leaves the old set as it was.

    Parameters
    ----------
    directory : the set's folder (it must exist).
    index : the index's file name in it (``manifest.json``, ``index.json``).
    owned : tells whether a file name in ``directory`` belongs to such a set (old members are
        removed after the switch only if it says so: nothing else in the folder is touched).
    name : the caller's name for the folder in messages (``--out``, ``path``).
    """

    def __init__(self, directory: str | os.PathLike, index: str, *, owned: Callable[[str], bool],
                 name: str = "path") -> None:
        self.directory, self.index, self.owned, self.name = Path(directory), index, owned, name
        self.created: list[Path] = []
        self.committed = False

    def __enter__(self) -> "SetWriter":
        check_writable(self.directory / self.index, self.name)  # before any member is made
        return self

    def check(self, member: str, need_bytes: int) -> None:
        """Refuse, before the work that makes it, a member that could not be written
        (:func:`illustrated.files.atomic.check_writable`, with room for ``need_bytes``)."""
        check_writable(self.directory / member, self.name, need_bytes=need_bytes)

    def add(self, member: str, data: bytes) -> dict:
        """Write ``data`` as a member called ``member`` (stored under its hashed name); returns
        its index entry ``{"file", "sha256", "bytes"}``. Raises ValueError as
        :func:`illustrated.files.atomic.write_bytes` (one line naming the file)."""
        digest = sha256_bytes(data)
        path = self.directory / hashed_name(member, digest)
        if not path.exists():  # a file of this name holds this content: it stays if we fail
            self.created.append(path)
        try:
            write_bytes(path, data, name=self.name)
        except InterruptedAfterWrite:  # a member in place is not the set in place
            raise KeyboardInterrupt from None
        return {"file": path.name, "sha256": digest, "bytes": len(data)}

    def add_group(self, files: dict[str, tuple[str, bytes]]) -> dict:
        """:meth:`add` each of ``files`` (``{kind: (member, data)}``); returns the group's index
        entry ``{"files": {kind: file}, "bytes": {kind: n}, "sha256": {kind: hex}}`` (the
        exports' ``index.json``). Raises as :meth:`add`."""
        entries = {kind: self.add(member, data) for kind, (member, data) in files.items()}
        return {key: {kind: entry[field] for kind, entry in entries.items()}
                for key, field in (("files", "file"), ("bytes", "bytes"), ("sha256", "sha256"))}

    def commit(self, index_bytes: bytes, members: list[str]) -> None:
        """Write the index (the switch to the new set), then remove the files of earlier sets
        that ``members`` (the new index's file names) leaves out.

        Raises ValueError if the index cannot be written (the old set stays, this writer's
        members are removed on the way out); InterruptedAfterWrite after Ctrl-C once the new
        index is in place.
        """
        try:
            write_bytes(self.directory / self.index, index_bytes, name=self.name)
        except InterruptedAfterWrite:
            self.committed = True
            raise
        self.committed = True
        keep = {self.index, *members}
        try:
            for path in self.directory.iterdir():
                if path.name not in keep and self.owned(path.name) and path.is_file():
                    with contextlib.suppress(OSError):
                        path.unlink()
        except KeyboardInterrupt:
            raise InterruptedAfterWrite(self.directory / self.index) from None
        except OSError:  # the clean-up is best effort: unnamed files harm no reader
            pass

    def __exit__(self, kind, error, trace) -> None:
        if not self.committed:
            for path in self.created:
                with contextlib.suppress(OSError):
                    path.unlink()


def member(directory: str | os.PathLike, entry: object, name: str, what: str, *,
           index: str = "the index", hint: str = "") -> Path:
    """The member an index entry ``{"file", "sha256", "bytes", ...}`` names, checked: a plain
    file name in ``directory``, a regular file of that size whose bytes have that sha256.

    Raises ValueError naming ``name``, the file and ``index`` (ending with ``hint``): a
    malformed entry, a missing member, or one that does not match (another size or sha256).
    """
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
            or not _PLAIN_NAME.fullmatch(entry["file"]) \
            or not isinstance(entry.get("sha256"), str) or len(entry["sha256"]) != 64 \
            or not isinstance(entry.get("bytes"), int) or entry["bytes"] < 0:
        raise ValueError(f"{name}: {index}'s entry of {what} is malformed (expected a plain "
                         f"file name, its sha256 and its size){hint}")
    path = Path(directory) / entry["file"]
    size = regular_file_size(path, name, what)
    data = read_bytes(path, name, what, limit=entry["bytes"]) if size == entry["bytes"] else b""
    if size != entry["bytes"] or sha256_bytes(data) != entry["sha256"]:
        raise ValueError(f"{name}: {what} {str(path)!r} does not match {index} (another size or "
                         f"sha256: not the set it names){hint}")
    return path
