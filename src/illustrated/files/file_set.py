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

A set has one writer at a time: the writer holds an exclusive ``fcntl.flock`` on the lock file
``.illustrated.lock`` beside the index from before it reads the old index until its clean-up is
done, so a second writer into the same folder is refused in one line naming the folder (or,
given ``wait`` seconds, waits for the first); the second then starts from the first one's set.
A folder holds one kind of set: the index names its kind (its ``format``), and a writer refuses
a folder whose index (``index.json`` or ``manifest.json``) is another kind's, or no set's.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import time
from pathlib import Path
from typing import Callable

from .atomic import InterruptedAfterWrite, check_writable, write_bytes
from .bounded import read_bytes, read_json, regular_file_size

__all__ = ["SetWriter", "LOCK", "INDEXES", "KINDS", "hashed_name", "member", "sha256_bytes",
           "check_wait", "read_group_index"]

#: The lock file of a set's folder, beside its index (never removed: removing a lock file
#: while another process waits on it would give two writers two locks).
LOCK = ".illustrated.lock"

#: The index names of the package's sets: a folder holding one of them holds that set.
INDEXES = ("index.json", "manifest.json")

#: The kinds of set (their index's ``format``), as messages name them.
KINDS = {"illustrated-shipped-models/1": "the shipped models (python -m illustrated.commands.shipped)",
         "illustrated-safetensors/1": "a page export (python -m illustrated.commands.web_export)",
         "illustrated-onnx/1": "an ONNX export (python -m illustrated.commands.onnx_export)"}

#: Seconds between two tries of a held lock while waiting for it.
POLL = 0.05

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
    kind : the ``format`` the index names (a key of :data:`KINDS`); None for a set of no kind
        (tests). A folder whose index is another kind's, or not a set's index, is refused.
    wait : seconds to wait for another writer's lock (0: refuse at once).

    Entering takes the folder's lock (:data:`LOCK`) and checks the kind; it raises ValueError in
    one line naming ``name`` and the folder: another writer holds the lock (after ``wait``
    seconds), the lock cannot be taken, or the folder holds another kind of set.
    """

    def __init__(self, directory: str | os.PathLike, index: str, *, owned: Callable[[str], bool],
                 name: str = "path", kind: str | None = None, wait: float = 0) -> None:
        self.directory, self.index, self.owned, self.name = Path(directory), index, owned, name
        self.kind, self.wait = kind, wait
        self.created: list[Path] = []
        self.committed = False
        self.lock: int | None = None

    def __enter__(self) -> "SetWriter":
        check_writable(self.directory / self.index, self.name)  # before any member is made
        self.lock = _lock(self.directory, self.name, self.wait)
        try:
            self._check_kind()
        except BaseException:
            self._unlock()
            raise
        return self

    def _check_kind(self) -> None:
        """ValueError if the folder holds an index of another kind (or one that is no set's)."""
        if self.kind is None:
            return
        for index in INDEXES:
            path = self.directory / index
            if not os.path.lexists(path):
                continue
            data = read_json(path, self.name, "a set's index")  # unreadable: one line, as is
            found = data.get("format") if isinstance(data, dict) else None
            if found != self.kind or index != self.index:
                what = KINDS.get(found, "no set this package writes")
                raise ValueError(f"{self.name}: expected a folder for {KINDS[self.kind]} or a "
                                 f"new one, got {str(self.directory)!r}, whose {index} is of "
                                 f"{what} (one kind of set per folder)")

    def _unlock(self) -> None:
        if self.lock is not None:
            with contextlib.suppress(OSError):
                os.close(self.lock)  # closing the descriptor releases the flock
            self.lock = None

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
        try:
            if not self.committed:
                for path in self.created:
                    with contextlib.suppress(OSError):
                        path.unlink()
        finally:
            self._unlock()


def check_wait(text: str) -> float:
    """``--wait SECONDS``: a finite number of seconds, 0 to a day (argparse type)."""
    import argparse
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds <= 86400:
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 86400, got {text!r}")
    return seconds


def _lock(directory: Path, name: str, wait: float) -> int:
    """A descriptor of ``directory``'s lock file holding its exclusive flock, taken within
    ``wait`` seconds; ValueError in one line naming ``name`` and the folder otherwise."""
    path = directory / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as error:
        raise ValueError(f"{name}: cannot lock {str(directory)!r} to write in it (its lock file "
                         f"{LOCK}: {error.strerror or error})") from None
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError as error:
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise ValueError(f"{name}: cannot lock {str(directory)!r} to write in it "
                                     f"({error.strerror or error})") from None
            if time.monotonic() >= deadline:
                raise ValueError(f"{name}: another writer is changing the set in "
                                 f"{str(directory)!r} (it holds {LOCK}; waited {wait:g} s); "
                                 f"expected a folder no other command writes (or --wait "
                                 f"SECONDS)")
            time.sleep(POLL)
    except BaseException:
        os.close(fd)
        raise


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


def read_group_index(directory: str | os.PathLike, index: str, kind: str, members: tuple,
                     name: str = "--out") -> dict:
    """The index ``index`` of format ``kind`` in ``directory`` whose entries are groups
    (:meth:`SetWriter.add_group`), after checking each of ``members`` of every group with
    :func:`member`: the set the index names, whole.

    Raises ValueError in one line naming ``name`` and the file: a missing or damaged index,
    another format, a malformed entry, or a member that does not match."""
    path = Path(directory) / index
    data = read_json(path, name, "a set's index")
    if not isinstance(data, dict) or data.get("format") != kind \
            or not isinstance(data.get("models"), dict):
        raise ValueError(f"{name}: {str(path)!r} is not an index of format {kind!r}")
    for group, entry in data["models"].items():
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), dict)
                                                  for k in ("files", "bytes", "sha256")):
            raise ValueError(f"{name}: {str(path)!r} has a malformed entry for {group!r}")
        for part in members:
            member(directory, {"file": entry["files"].get(part),
                               "bytes": entry["bytes"].get(part),
                               "sha256": entry["sha256"].get(part)}, name,
                   f"the {part} file of {group!r}", index=index)
    return data
