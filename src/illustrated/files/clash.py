"""An input is never an output: every command compares the files it will write with the files it
reads, before any work, by resolved path and by file identity (links followed, hard links and
bind mounts included), and refuses a clash in one line naming both flags."""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Iterable

__all__ = ["same_file", "refuse_clashes", "corpus_files"]

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


def refuse_clashes(inputs: Iterable[Named], outputs: Iterable[Named]) -> None:
    """ValueError, naming the output's flag and the input's, if an output is one of the inputs.

    ``inputs`` and ``outputs`` are (flag, path) pairs, e.g. ``("--pairs", "data.tsv")``; a
    path of None is skipped. The message reads ``"--out: expected a file other than --pairs
    'data.tsv', got 'data.tsv', the same file (it would be replaced)"``.
    """
    inputs = [(flag, path) for flag, path in inputs if path is not None]
    for out_flag, out in outputs:
        if out is None:
            continue
        for in_flag, inp in inputs:
            if same_file(inp, out):
                raise ValueError(f"{out_flag}: expected a file other than {in_flag} "
                                 f"{os.fspath(inp)!r}, got {os.fspath(out)!r}, the same file "
                                 f"(it would be replaced)")


def corpus_files(corpora: Iterable[str], flag: str = "--corpora") -> list[tuple[str, Path]]:
    """(flag, path) of the package's corpus files that training on ``corpora`` reads."""
    folder = resources.files("illustrated.data") / "corpora"
    return [(flag, Path(str(folder / f"{corpus}.{split}.tsv")))
            for corpus in corpora for split in ("train", "test")]
