"""Several files that must agree, written as one transaction: an index written last names them.

The shipped weights and their ``manifest.json``, an ONNX export's graphs, vocabularies and
``index.json``: a reader that took a new graph beside an old one would translate nonsense. So
each member is written under a name that holds its content's sha256 (``post.3f2a9c1e0b7d4a65.pt``),
beside the old members, which nothing touches; then the index, naming every member with its
sha256 and size, replaces the old index in one atomic rename (:mod:`illustrated.files.atomic`): that
rename is the switch from the old set to the new one. Interrupted or failed at any point before
it, the old index still names the old files, whole, and the new files written so far are removed;
after it, the new set is complete and the members of the old index that the new one leaves
out are removed. The index is the only record of what a set owns: a writer removes only files
the old index named (a folder with no index owns nothing, so files there whose names look like
members, a user's ``post.pt`` or ``post.json``, stay as they were; the new members are written
beside them under their hashed names); a member left behind by an interrupted clean-up, or by
a writer killed before its switch, is named by no index and stays, harmless. Readers check each
member they read against the index (:func:`member`): a set that does not match is refused in
one line; a reader that meets a set mid-switch (a member gone between reading the index and
reading it) reads the index once more.

A set has one writer at a time: the writer holds an exclusive ``fcntl.flock`` on the lock file
``.illustrated.lock`` beside the index (opened without following a symbolic link: a link there
is refused in one line, so the lock never creates a file outside the folder) from before it
reads the old index until its clean-up is done, so a second writer into the same folder is
refused in one line naming the folder (or, given ``wait`` seconds, waits for the first); the
second then starts from the first one's set.
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
import stat
import time
from pathlib import Path
from typing import Callable

from .atomic import InterruptedAfterWrite, check_writable, write_bytes
from .bounded import MAX_JSON_BYTES, describe_type, read_bytes, read_json, regular_file_size

__all__ = ["SetWriter", "LOCK", "INDEXES", "KINDS", "hashed_name", "member", "sha256_bytes",
           "check_wait", "read_group_index", "named_files"]

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


def _sha256_file(path: Path) -> str:
    """Hex sha256 of the file ``path``'s bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def named_files(index: object) -> list[str]:
    """Every file name an index names: the string of each ``"file"`` key and each value of a
    ``"files"`` object, at any depth (the shipped manifest's entries, an export's groups)."""
    found: list[str] = []
    if isinstance(index, dict):
        for key, value in index.items():
            if key == "file" and isinstance(value, str):
                found.append(value)
            elif key == "files" and isinstance(value, dict):
                found.extend(v for v in value.values() if isinstance(v, str))
            else:
                found.extend(named_files(value))
    elif isinstance(index, list):
        for value in index:
            found.extend(named_files(value))
    return found


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
    owned : tells whether a file name in ``directory`` may be a member of such a set: after the
        switch, a file is removed only if the old index named it and ``owned`` says so (with no
        index, the writer owns nothing in the folder: nothing else in it is touched).
    name : the caller's name for the folder in messages (``--out``, ``path``).
    kind : the ``format`` the index names (a key of :data:`KINDS`); None for a set of no kind
        (tests). A folder whose index is another kind's, or not a set's index, is refused.
    wait : seconds to wait for another writer's lock (0: refuse at once).

    Entering takes the folder's lock (:data:`LOCK`) and checks the kind; it raises ValueError in
    one line naming ``name`` and the folder: another writer holds the lock (after ``wait``
    seconds), the lock cannot be taken or is a symbolic link, or the folder holds another kind
    of set. :meth:`add` refuses, in one line naming it, a file of a member's hashed name that no
    index names and that holds other bytes (a file this writer did not write).
    """

    def __init__(self, directory: str | os.PathLike, index: str, *, owned: Callable[[str], bool],
                 name: str = "path", kind: str | None = None, wait: float = 0) -> None:
        self.directory, self.index, self.owned, self.name = Path(directory), index, owned, name
        self.kind, self.wait = kind, wait
        self.created: list[Path] = []
        self.committed = False
        self.lock: int | None = None
        self.old: set[str] = set()  # the file names the old index gives: what the set owns

    def __enter__(self) -> "SetWriter":
        check_writable(self.directory / self.index, self.name)  # before any member is made
        self.lock = _lock(self.directory, self.name, self.wait)
        try:
            self.old = self._check_kind()
        except BaseException:
            self._unlock()
            raise
        return self

    def _check_kind(self) -> set[str]:
        """The plain file names the folder's index names: what the set owns (none without an
        index). ValueError if the folder holds an index of another kind (or one that is no
        set's); for a set of no kind (tests), an unreadable index owns nothing."""
        owned: set[str] = set()
        for index in INDEXES:
            path = self.directory / index
            if not os.path.lexists(path) or (self.kind is None and index != self.index):
                continue
            try:
                data = read_json(path, self.name, "a set's index")  # unreadable: one line
            except ValueError:
                if self.kind is not None:
                    raise
                continue
            if self.kind is not None:
                found = data.get("format") if isinstance(data, dict) else None
                if found != self.kind or index != self.index:
                    what = KINDS.get(found, "no set this package writes")
                    raise ValueError(f"{self.name}: expected a folder for {KINDS[self.kind]} or "
                                     f"a new one, got {str(self.directory)!r}, whose {index} is "
                                     f"of {what} (one kind of set per folder)")
            owned = {n for n in named_files(data) if _PLAIN_NAME.fullmatch(n)}
        return owned

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
        entry = {"file": path.name, "sha256": digest, "bytes": len(data)}
        if os.path.lexists(path) and path.name not in self.old:  # not ours: never replaced
            if not path.is_symlink() and path.is_file() and _sha256_file(path) == digest:
                return entry  # these very bytes (a member an interrupted clean-up left)
            raise ValueError(f"{self.name}: {str(path)!r} is a file this set's index does not "
                             f"name, expected no file of that name (a member's; move it away)")
        if not path.exists():  # a file of this name holds this content: it stays if we fail
            self.created.append(path)
        try:
            write_bytes(path, data, name=self.name)
        except InterruptedAfterWrite:  # a member in place is not the set in place
            raise KeyboardInterrupt from None
        return entry

    def add_group(self, files: dict[str, tuple[str, bytes]]) -> dict:
        """:meth:`add` each of ``files`` (``{kind: (member, data)}``); returns the group's index
        entry ``{"files": {kind: file}, "bytes": {kind: n}, "sha256": {kind: hex}}`` (the
        exports' ``index.json``). Raises as :meth:`add`."""
        entries = {kind: self.add(member, data) for kind, (member, data) in files.items()}
        return {key: {kind: entry[field] for kind, entry in entries.items()}
                for key, field in (("files", "file"), ("bytes", "bytes"), ("sha256", "sha256"))}

    def commit(self, index_bytes: bytes, members: list[str]) -> None:
        """Write the index (the switch to the new set), then remove the files the old index
        named that ``members`` (the new index's file names) leaves out; no other file.

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
            for file in sorted(self.old - keep):
                path = self.directory / file
                if self.owned(file) and (path.is_symlink() or path.is_file()):
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
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        if os.path.islink(path):  # ELOOP: O_NOFOLLOW met a link (a dangling one included)
            raise ValueError(f"{name}: expected {LOCK} in {str(directory)!r} to be a plain file "
                             f"(the lock), got a symbolic link to "
                             f"{os.readlink(path)!r} (remove it)") from None
        raise ValueError(f"{name}: cannot lock {str(directory)!r} to write in it (its lock file "
                         f"{LOCK}: {error.strerror or error})") from None
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        raise ValueError(f"{name}: expected {LOCK} in {str(directory)!r} to be a plain file "
                         f"(the lock), got {describe_type(kind)} (remove it)")
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
    malformed entry (a name with a folder in it, ``../x`` or ``/x``, included), a missing
    member, a symbolic link, or one that does not match (another size or sha256).
    """
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
            or not _PLAIN_NAME.fullmatch(entry["file"]) \
            or not isinstance(entry.get("sha256"), str) or len(entry["sha256"]) != 64 \
            or not isinstance(entry.get("bytes"), int) or entry["bytes"] < 0:
        raise ValueError(f"{name}: {index}'s entry of {what} is malformed (expected a plain "
                         f"file name, its sha256 and its size){hint}")
    path = Path(directory) / entry["file"]
    if path.is_symlink():  # a link may lead out of the folder: a member is a file in it
        raise ValueError(f"{name}: {what} {str(path)!r} is a symbolic link, expected a file in "
                         f"the folder (not the set {index} names){hint}")
    size = regular_file_size(path, name, what)
    data = read_bytes(path, name, what, limit=entry["bytes"]) if size == entry["bytes"] else b""
    if size != entry["bytes"] or sha256_bytes(data) != entry["sha256"]:
        raise ValueError(f"{name}: {what} {str(path)!r} does not match {index} (another size or "
                         f"sha256: not the set it names){hint}")
    return path


def read_group_index(directory: str | os.PathLike, index: str, kind: str, members: tuple,
                     name: str = "--out", *, single: tuple = (), fields: tuple = ()) -> dict:
    """The index ``index`` of format ``kind`` in ``directory`` whose entries are groups
    (:meth:`SetWriter.add_group`), after checking each of ``members`` of every group, and each
    top-level entry ``single`` (``{"file", "sha256", "bytes"}``, e.g. an export's ``recipe``),
    with :func:`member`: the set the index names, whole. The index holds nothing else: only
    ``format``, ``corpora`` (the groups' names, in order), ``models``, ``single`` and the
    plain values ``fields``; a group names exactly ``members``. A member gone or changed
    between reading the index and reading it (a writer's switch) makes the index read once more.

    Raises ValueError in one line naming ``name`` and the file: a missing or damaged index,
    another format, a malformed, missing or extra entry or member, a member name that is no
    plain file name in the folder, or a member that does not match."""
    path = Path(directory) / index
    raw = read_bytes(path, name, "a set's index", limit=MAX_JSON_BYTES)
    try:
        return _read_group_index(directory, index, kind, members, name, single, fields)
    except ValueError:
        try:
            again = read_bytes(path, name, "a set's index", limit=MAX_JSON_BYTES)
        except ValueError:
            again = raw
        if again == raw:  # no switch happened: the set is damaged
            raise
    return _read_group_index(directory, index, kind, members, name, single, fields)


def _read_group_index(directory, index: str, kind: str, members: tuple, name: str,
                      single: tuple, fields: tuple) -> dict:
    """:func:`read_group_index`, once."""
    path = Path(directory) / index
    shown = str(path)
    data = read_json(path, name, "a set's index")
    if not isinstance(data, dict) or data.get("format") != kind \
            or not isinstance(data.get("models"), dict):
        raise ValueError(f"{name}: {shown!r} is not an index of format {kind!r}")
    extra = sorted(set(data) - {"format", "corpora", "models", *single, *fields})
    if extra:
        raise ValueError(f"{name}: {shown!r} has an entry {extra[0]!r}, expected only format, "
                         f"corpora, models{''.join(', ' + k for k in (*single, *fields))}")
    if "corpora" in data and data["corpora"] != list(data["models"]):
        raise ValueError(f"{name}: {shown!r} lists corpora {data['corpora']!r:.80}, expected "
                         f"the models it names, {list(data['models'])!r:.80}")
    for key in single:
        if key not in data:
            raise ValueError(f"{name}: {shown!r} has no entry {key!r}, expected one naming "
                             f"its {key} file")
        member(directory, data[key], name, f"the {key} file", index=index)
    for group, entry in data["models"].items():
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), dict)
                                                  for k in ("files", "bytes", "sha256")):
            raise ValueError(f"{name}: {shown!r} has a malformed entry for {group!r}")
        for key in ("files", "bytes", "sha256"):
            if set(entry[key]) != set(members):
                odd = sorted(set(entry[key]) ^ set(members))[0]
                raise ValueError(f"{name}: {shown!r}'s entry for {group!r} has {key} "
                                 f"{sorted(entry[key])!r:.80}, expected exactly "
                                 f"{sorted(members)!r} (not {odd!r})")
        for part in members:
            member(directory, {"file": entry["files"].get(part),
                               "bytes": entry["bytes"].get(part),
                               "sha256": entry["sha256"].get(part)}, name,
                   f"the {part} file of {group!r}", index=index)
    return data
