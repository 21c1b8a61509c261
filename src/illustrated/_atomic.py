"""Writing files so that a failed or interrupted write never damages what was there.

Every file the package writes goes through :func:`atomic_write`: the bytes go to a temporary
file in the target's own directory, which is flushed to disk and then renamed over the target
with :func:`os.replace` (atomic on POSIX and Windows within one file system). Until that rename
the old file is untouched; after it the new file is complete. A write that raises, a full disk,
or Ctrl-C in the middle leaves the old file as it was and removes the temporary file.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator

__all__ = ["atomic_write", "atomic_save", "check_writable"]


def check_writable(path: str | os.PathLike, name: str = "path") -> Path:
    """Make sure a file can be written at ``path`` (before spending time on what goes into it).

    Tries to create, then removes, a temporary file in the target's directory: the only test
    that answers for read-only mounts, ACLs and full disks alike.

    Parameters
    ----------
    path : str or os.PathLike, the file to be written.
    name : the caller's name for the argument, used in the error message (e.g. ``"--out"``).

    Returns
    -------
    pathlib.Path of ``path``.

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike (the error is also a ValueError).
    ValueError
        If ``path`` is empty, names a directory, its directory does not exist or is not a
        directory, or a file cannot be created there; the message names ``name`` and the path.
    """
    from ._args import ArgumentTypeError
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise ArgumentTypeError(f"{name}: expected a file path (str or os.PathLike), "
                                f"got {type(path).__name__}")
    if str(path) == "" or str(path).endswith(("/", os.sep)):
        raise ValueError(f"{name}: expected a file path, got {str(path)!r}")
    target = Path(path)
    parent = target.parent
    if target.is_dir():
        raise ValueError(f"{name}: expected a file path, got the directory {str(target)!r}")
    if not parent.exists():
        raise ValueError(f"{name}: expected a path in an existing directory, but "
                         f"{str(parent)!r} does not exist (create it first), got {str(target)!r}")
    if not parent.is_dir():
        raise ValueError(f"{name}: expected a path in a directory, but {str(parent)!r} is a "
                         f"file, got {str(target)!r}")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".check")
    except OSError as error:
        raise ValueError(f"{name}: cannot write in {str(parent)!r} "
                         f"({error.strerror or error}), got {str(target)!r}") from None
    os.close(fd)
    os.unlink(tmp)
    return target


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
def atomic_write(path: str | os.PathLike, mode: str = "wb", **open_kwargs: Any) -> Iterator[IO]:
    """Context manager: a file object whose content replaces ``path`` only if the block succeeds.

    Parameters
    ----------
    path : str or os.PathLike, the file to (re)write.
    mode : "wb" (default) or "w" (text; pass ``encoding=...`` in ``open_kwargs``).

    Yields
    ------
    The open temporary file (same directory as ``path``, so the rename stays atomic).

    Raises
    ------
    ValueError
        For a bad ``mode`` or a ``path`` that cannot be written (see :func:`check_writable`).
    OSError
        If writing fails part-way (e.g. disk full); ``path`` is then as it was before.
    Whatever the block raises (KeyboardInterrupt included) propagates after the temporary
    file is removed; ``path`` is untouched.

    Example
    -------
    >>> with atomic_write("weights.bin") as f:
    ...     f.write(data)
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode: expected 'wb' or 'w', got {mode!r}")
    target = check_writable(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    done = False
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would have.
        try:
            os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else _default_mode())
        except OSError:
            pass
        with os.fdopen(fd, mode, **open_kwargs) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, target)
        done = True
        _fsync_directory(target.parent)
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _default_mode() -> int:
    """0o666 minus the process's umask: what ``open(path, "w")`` gives a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_save(obj: Any, path: str | os.PathLike) -> None:
    """``torch.save(obj, path)``, atomically: a failed or interrupted save leaves ``path`` as is.

    Raises
    ------
    ValueError
        If ``path`` cannot be written (see :func:`check_writable`).
    OSError
        If writing fails part-way; ``path`` is then unchanged.
    """
    import torch
    with atomic_write(path, "wb") as file:
        torch.save(obj, file)
