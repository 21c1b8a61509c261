"""The one writer of every file the package writes: models, checkpoints, ONNX graphs, manifests.

The bytes go to a temporary file in the target's own directory, which is flushed and fsynced,
then renamed over the target with :func:`os.replace` (atomic on POSIX and Windows within one
file system). Until that rename the old file is untouched; after it the new file is complete.
A full disk, a refused permission or Ctrl-C at any moment leaves the old file byte for byte as
it was and removes the temporary file; a failed write is one ValueError naming the file.
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

__all__ = ["check_writable", "atomic_write", "write_bytes", "write_text", "atomic_save",
           "serialize"]


def _target(path: Any, name: str) -> Path:
    """The file ``path`` names, a symbolic link followed to the file it points to."""
    from ._args import ArgumentTypeError
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise ArgumentTypeError(f"{name}: expected a file path (str or os.PathLike), "
                                f"got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or text == "" or text.endswith(("/", os.sep)):
        raise ValueError(f"{name}: expected a file path, got {text!r}")
    target = Path(text)
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
        Naming ``name`` and the path: empty, a directory, a read-only file (no write permission
        bit: refused even for root, who could replace it), a link that cannot be followed, a
        missing or non-directory parent, a directory that refuses new files, or too little
        free space.
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
                             f"which is not one")
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
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".check")
    except OSError as error:
        raise ValueError(f"{name}: cannot write in {str(parent)!r} "
                         f"({error.strerror or error}), got {shown!r}") from None
    os.close(fd)
    os.unlink(tmp)
    if need_bytes > 0:
        free = shutil.disk_usage(parent).free
        if free < need_bytes:
            raise ValueError(f"{name}: expected {_size(need_bytes)} free for {shown!r}, but "
                             f"{str(parent)!r} has {_size(free)} free")
    return target


def _size(count: int) -> str:
    """A byte count for a message: '0 bytes', '812.3 kB', '1.2 MB'."""
    if count < 1000:
        return f"{count} bytes"
    return f"{count / 1e3:.1f} kB" if count < 1_000_000 else f"{count / 1e6:.1f} MB"


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
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise _failed(name, shown, error) from error
    done = False
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would have.
        with contextlib.suppress(OSError):
            os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else _default_mode())
        try:
            with os.fdopen(fd, mode, **open_kwargs) as file:
                yield file
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, target)
        except OSError as error:
            raise _failed(name, shown, error) from error
        done = True
        _fsync_directory(target.parent)
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
