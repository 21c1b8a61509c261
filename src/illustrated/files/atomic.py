"""The one writer of every file the package writes: models, checkpoints, ONNX graphs, manifests.

The bytes go to a temporary file in the target's own directory, which is flushed and fsynced,
then renamed over the target with :func:`os.replace` (atomic on POSIX and Windows within one
file system). Until that rename the old file is untouched; after it the new file is complete.
A full disk, a refused permission or Ctrl-C at any moment before the rename leaves the old file
byte for byte as it was and removes the temporary file; a failed write is one ValueError naming
the file. A Ctrl-C that comes once the rename is done (during it, or while the directory entry
is flushed) raises :class:`InterruptedAfterWrite`, a KeyboardInterrupt that says the new file is
in place, so that no message claims it was not written. Several files that must agree are
written as one transaction by :mod:`illustrated.files.file_set`.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator

from .._args import ArgumentTypeError
from .bounded import describe_type, size_text

__all__ = ["InterruptedAfterWrite", "NAME_MAX", "check_writable", "read_only_mount", "atomic_write",
           "write_bytes",
           "write_text", "atomic_save", "serialize"]

#: Longest file name, in bytes, that POSIX file systems take (``NAME_MAX``); the directory's
#: own limit when it reports one.
NAME_MAX = 255

#: Characters that ``tempfile.mkstemp`` adds to a temporary file's prefix and suffix.
_RANDOM_PART = 8


class InterruptedAfterWrite(KeyboardInterrupt):
    """Ctrl-C that came once the new file was in place (at the rename or the directory's fsync):
    the file named by ``path`` holds the new content, whole."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"interrupted after {str(path)!r} was written")
        self.path = path


def _name_max(directory: Path) -> int:
    """The longest file name (in bytes) the directory's file system takes."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return NAME_MAX


def _temporary_prefix(target: Path, suffix: str) -> str:
    """``.NAME.`` for a temporary file beside ``target``, NAME cut so that the whole temporary
    name (with mkstemp's random part and ``suffix``) fits the file system's name limit."""
    room = _name_max(target.parent) - len(suffix) - _RANDOM_PART - 2
    name = os.fsencode(target.name)[:max(room, 0)]
    return f".{name.decode('utf-8', 'ignore')}."  # a character cut in two is dropped


def _read_only_mount(directory: Path) -> bool:
    """True if the directory's file system is mounted read-only (POSIX statvfs ST_RDONLY)."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


#: Whether a directory's file system is mounted read-only (for messages that name it so).
read_only_mount = _read_only_mount


def _target(path: Any, name: str) -> Path:
    """The file ``path`` names, a symbolic link followed to the file it points to."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise ArgumentTypeError(f"{name}: expected a file path (str or os.PathLike), "
                                f"got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or text == "" or text.endswith(("/", os.sep)):
        raise ValueError(f"{name}: expected a file path, got {text!r}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, as the system hands them over
        raise ValueError(f"{name}: expected a path in UTF-8, got {ascii(text)} (a byte that is "
                         f"not UTF-8: rename it)") from None
    target = Path(text)
    longest, length = _name_max(target.parent), len(os.fsencode(target.name))
    if length > longest:  # before any stat: the system would refuse the name itself
        raise ValueError(f"{name}: expected a file name of at most {longest} bytes, got "
                         f"{length} bytes in {text!r}")
    if target.is_symlink():  # write where the link points; the link itself stays a link
        target = Path(os.path.realpath(text))
        if target.is_symlink():
            raise ValueError(f"{name}: {text!r} is a symbolic link that cannot be followed "
                             f"(a loop), expected a file path")
    return target


def check_writable(path: str | os.PathLike, name: str = "path", *, need_bytes: int = 0) -> Path:
    """Make sure ``path`` can be written, before anything is spent on what goes into it.

    Creates, then removes, a temporary file in the target's directory (the only test that
    answers for read-only mounts, ACLs and permissions alike), and compares the free space
    there with ``need_bytes``. A symbolic link is followed: the file it points to is the one
    that will be replaced, the link stays.

    Parameters
    ----------
    path : str or os.PathLike, the file to be written.
    name : the caller's name for the argument, used in the messages (e.g. ``"--out"``).
    need_bytes : int, bytes the file will take; the directory's file system must have that
        many free (a replaced file is freed only after the new one is complete).

    Returns
    -------
    pathlib.Path of the file that will be written (a link's target).

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike (the error is also a ValueError).
    ValueError
        Naming ``name`` and the path: empty, a directory, a device or FIFO (named as such), a
        file on a read-only file system, a read-only file (no write permission bit: refused
        even for root, who could replace it), a link that cannot be followed, a name longer
        than the file system takes (NAME_MAX, 255 bytes), a missing or non-directory parent,
        a directory that refuses new files, or too little free space.
    """
    target = _target(path, name)
    shown = os.fspath(path)
    parent = target.parent
    if target.is_dir():
        raise ValueError(f"{name}: expected a file path, got the directory {shown!r}")
    if target.exists():
        mode = target.stat().st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{name}: expected a regular file to replace, got {shown!r}, "
                             f"which is {describe_type(mode)}")
        if _read_only_mount(parent):
            raise ValueError(f"{name}: {shown!r} is on a read-only file system; expected a path "
                             f"on one that may be written (choose another path)")
        if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
            raise ValueError(f"{name}: {shown!r} is read-only (mode {stat.S_IMODE(mode):o}); "
                             f"expected a file that may be replaced (chmod u+w, or choose "
                             f"another path)")
    if not parent.exists():
        raise ValueError(f"{name}: expected a path in an existing directory, but "
                         f"{str(parent)!r} does not exist (create it first), got {shown!r}")
    if not parent.is_dir():
        raise ValueError(f"{name}: expected a path in a directory, but {str(parent)!r} is a "
                         f"file, got {shown!r}")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=_temporary_prefix(target, ".check"),
                                   suffix=".check")
    except OSError as error:
        reason = "a read-only file system" if _read_only_mount(parent) else \
            error.strerror or error
        raise ValueError(f"{name}: cannot write in {str(parent)!r} ({reason}), "
                         f"got {shown!r}") from None
    os.close(fd)
    os.unlink(tmp)
    if need_bytes > 0:
        free = shutil.disk_usage(parent).free
        if free < need_bytes:
            raise ValueError(f"{name}: expected {size_text(need_bytes)} free for {shown!r}, but "
                             f"{str(parent)!r} has {size_text(free)} free")
    return target


def _default_mode() -> int:
    """0o666 minus the process's umask: what ``open(path, "w")`` gives a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_directory(directory: Path) -> None:
    """Flush the directory entry of the rename to disk (POSIX; best effort elsewhere)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", *, name: str = "path",
                 **open_kwargs: Any) -> Iterator[IO]:
    """Context manager: a file object whose content replaces ``path`` only if the block succeeds.

    Parameters
    ----------
    path : str or os.PathLike, the file to (re)write; a symbolic link's target is replaced.
    mode : "wb" (default) or "w" (text; pass ``encoding=...``).
    name : the caller's name for ``path`` in messages.

    Yields
    ------
    The open temporary file (same directory as the target, so the rename stays atomic).

    Raises
    ------
    ValueError
        For a bad ``mode``, a ``path`` that cannot be written (see :func:`check_writable`), or
        a write, flush, fsync or rename that fails (disk full, permission): one line naming
        the file; the earlier file is then byte for byte as it was.
    InterruptedAfterWrite (a KeyboardInterrupt)
        After Ctrl-C at the rename or the directory's fsync: ``path`` holds the new content.
    Whatever the block raises (KeyboardInterrupt included) propagates after the temporary
    file is removed; ``path`` is untouched.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode: expected 'wb' or 'w', got {mode!r}")
    with _replacing(check_writable(path, name), os.fspath(path), name, mode,
                    open_kwargs) as file:
        yield file


@contextlib.contextmanager
def _replacing(target: Path, shown: str, name: str, mode: str, open_kwargs: dict
               ) -> Iterator[IO]:
    """:func:`atomic_write` for a ``target`` already checked by :func:`check_writable`."""
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=_temporary_prefix(target, ".tmp"),
                                   suffix=".tmp")
    except OSError as error:
        raise _failed(name, shown, error) from error
    done, written = False, None
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would have.
        with contextlib.suppress(OSError):
            os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else _default_mode())
        try:
            with os.fdopen(fd, mode, **open_kwargs) as file:
                yield file
                file.flush()
                os.fsync(file.fileno())
                written = os.fstat(file.fileno())  # to know the file again after a rename
            os.replace(tmp, target)
        except OSError as error:
            raise _failed(name, shown, error) from error
        except KeyboardInterrupt:
            if _in_place(tmp, target, written):
                done = True
                raise InterruptedAfterWrite(target) from None
            raise
        done = True
        try:
            _fsync_directory(target.parent)
        except KeyboardInterrupt:
            raise InterruptedAfterWrite(target) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _in_place(tmp: str, target: Path, written: os.stat_result | None) -> bool:
    """True if the rename of ``tmp`` over ``target`` happened (Ctrl-C came during or after it)."""
    if written is None or os.path.lexists(tmp):
        return False
    try:
        now = target.stat()
    except OSError:
        return False
    return (now.st_ino, now.st_dev) == (written.st_ino, written.st_dev)


def _failed(name: str, shown: str, error: OSError) -> ValueError:
    """The one-line error of a write that failed part-way."""
    return ValueError(f"{name}: could not write {shown!r} ({error.strerror or error}); any "
                      f"previous file there is unchanged")


def write_bytes(path: str | os.PathLike, data: bytes, *, name: str = "path") -> Path:
    """Write ``data`` to ``path`` atomically; returns the file written (a link's target).

    Raises
    ------
    ValueError
        As :func:`atomic_write`; also, before anything is written, if the file system has fewer
        than ``len(data)`` bytes free.
    """
    target = check_writable(path, name, need_bytes=len(data))
    with _replacing(target, os.fspath(path), name, "wb", {}) as file:
        file.write(data)
    return target


def write_text(path: str | os.PathLike, text: str, *, name: str = "path") -> Path:
    """Write ``text`` as UTF-8 (``\\n`` line ends) to ``path`` atomically; as :func:`write_bytes`."""
    return write_bytes(path, text.encode("utf-8"), name=name)


def serialize(obj: Any) -> bytes:
    """``torch.save(obj)`` into memory: the bytes of the file, with no file touched.

    Raises
    ------
    KeyboardInterrupt
        If Ctrl-C came during the save, also when torch reports it as its own RuntimeError.
    """
    import torch  # here: the NumPy parts of the package, which may write files, import no torch
    buffer = io.BytesIO()
    try:
        torch.save(obj, buffer)
    except RuntimeError as error:  # torch's zip writer wraps a Ctrl-C that came mid-record
        cause: BaseException | None = error
        while cause is not None:
            if isinstance(cause, KeyboardInterrupt):
                raise KeyboardInterrupt from None
            cause = cause.__cause__ or cause.__context__
        raise
    return buffer.getvalue()


def atomic_save(obj: Any, path: str | os.PathLike, *, name: str = "path") -> Path:
    """``torch.save(obj, path)``, atomically: a failed or interrupted save leaves ``path`` as is.

    The object is serialized in memory first, so torch never writes to the disk itself (on a
    full disk its zip writer ends in ``inline_container.cc ... unexpected pos``).

    Raises
    ------
    ValueError
        As :func:`write_bytes`.
    KeyboardInterrupt
        After Ctrl-C; ``path`` is then unchanged.
    """
    return write_bytes(path, serialize(obj), name=name)
