"""An input is never an output: every command compares the files it will write with the files it
reads, before any work, by resolved path and by file identity (links followed, hard links and
bind mounts included), and refuses a clash in one line naming both flags. The package's own
files (its shipped weights and manifest, every split of every corpus) are never an output: a path
that is one of them, or lies in their folders, is refused in one line naming them (only
``python -m illustrated.commands.shipped`` writes the weights folder)."""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Iterable

__all__ = ["same_file", "refuse_clashes", "corpus_files", "package_folders",
           "refuse_package_files"]

Named = tuple[str, "str | os.PathLike"]


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True if ``a`` and ``b`` name one file: the same resolved path (links followed, also to a
    file that does not exist yet), or the same file on disk (``os.path.samefile``)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (yet): not the same file
        return False


def refuse_clashes(inputs: Iterable[Named], outputs: Iterable[Named], *,
                   package: bool = True) -> None:
    """ValueError, naming the output's flag and the input's, if an output is one of the inputs;
    then, with ``package``, as :func:`refuse_package_files`.

    ``inputs`` and ``outputs`` are (flag, path) pairs, e.g. ``("--pairs", "data.tsv")``; a
    path of None is skipped. The message reads ``"--out: expected a file other than --pairs
    'data.tsv', got 'data.tsv', the same file (it would be replaced)"``. ``package=False``
    lets an output lie in the package's weights folder (``make models`` writes it), never one
    of its corpus files.
    """
    inputs = [(flag, path) for flag, path in inputs if path is not None]
    outputs = [(flag, path) for flag, path in outputs if path is not None]
    for out_flag, out in outputs:
        for in_flag, inp in inputs:
            if same_file(inp, out):
                raise ValueError(f"{out_flag}: expected a file other than {in_flag} "
                                 f"{os.fspath(inp)!r}, got {os.fspath(out)!r}, the same file "
                                 f"(it would be replaced)")
    refuse_package_files(outputs, weights=package)


def package_folders() -> dict[str, Path]:
    """The folders of the package's own files: ``{"its shipped weights": .../weights,
    "its corpora": .../data/corpora}``."""
    root = Path(str(resources.files("illustrated")))
    return {"its shipped weights": root / "weights", "its corpora": root / "data" / "corpora"}


def refuse_package_files(outputs: Iterable[Named], *, weights: bool = True) -> None:
    """ValueError in one line if an output (a (flag, path) pair) is one of the package's own
    files (by resolved path and by file identity: a hard link too) or would be written in
    their folders (a link to it followed); ``weights=False`` leaves the weights folder out.

    The message reads ``"--out: expected a path outside the package's own files, got
    '.../new.pt', in the folder of its corpora '.../data/corpora'"``.
    """
    folders = package_folders()
    if not weights:
        folders.pop("its shipped weights")
    for flag, out in outputs:
        if out is None:
            continue
        where = os.path.dirname(os.path.realpath(out))
        for what, folder in folders.items():
            if where == os.path.realpath(folder):
                raise ValueError(f"{flag}: expected a path outside the package's own files, got "
                                 f"{os.fspath(out)!r}, in the folder of {what} {str(folder)!r}")
            for path in folder.iterdir():
                if path.is_file() and same_file(path, out):
                    raise ValueError(f"{flag}: expected a path outside the package's own "
                                     f"files, got {os.fspath(out)!r}, the same file as one of "
                                     f"{what}, {str(path)!r}")


def corpus_files(corpora: Iterable[str], flag: str = "--corpora") -> list[tuple[str, Path]]:
    """(flag, path) of the package's corpus files that training on ``corpora`` reads."""
    folder = resources.files("illustrated.data") / "corpora"
    return [(flag, Path(str(folder / f"{corpus}.{split}.tsv")))
            for corpus in corpora for split in ("train", "test")]
