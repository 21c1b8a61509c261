"""The book's trained models, shipped inside the package: weights, manifest, and how they are made.

Training on a CPU with other vector instructions (AVX-512, AVX2, none) adds floating-point
numbers in another order, so the same seed gives other weights on another machine. The book's
numbers must not depend on the reader's CPU, so each corpus's default model is trained once,
by ``make models`` (``python -m illustrated.commands.shipped``), and its weights ship as package data in
``weights/`` beside ``weights/manifest.json``, which records for every file the corpus, the
settings, the seed, the torch version and CPU capability it was trained with, its metrics on the
test split, its size and its sha256. Loading takes milliseconds and is the same everywhere.

The weights and the manifest are one set: new weights are written beside the old ones under
names that hold their sha256 (``post.3f2a9c1e0b7d4a65.pt``), and the manifest, written last,
switches to them in one rename (:mod:`illustrated.files.file_set`). Interrupted or failed at any
point, ``il.pretrained`` finds the old set whole, or the new one.

This module makes them (:func:`make_models`); :mod:`illustrated.pretrained_models` reads them
(``load_shipped``, ``manifest``, re-exported here), so the two import each other one way only.

Retraining stays one call away (``il.pretrained(corpus, retrain=True)`` or ``il.train_corpus``):
its weights then depend on the machine, but the recipe reaches the same targets
(``benchmarks/retrain.py`` checks that under three CPU capabilities and three seeds).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import torch

from .. import __version__
from ..files.atomic import InterruptedAfterWrite
from ..files.clash import corpus_files, refuse_clashes
from ..files.file_set import SetWriter, check_wait
from .interrupt import INTERRUPTED, end_of_start, exit_with
from ..files.checkpoint import checkpoint_bytes, estimate_bytes
from ..data import load_corpus
from ..pretrained_models import MANIFEST, SETTINGS, evaluate, load_shipped, make_config, manifest, \
    read_manifest, sha256, train_corpus, weights_path
from ..pretrained_models import MANIFEST_FORMAT as FORMAT

__all__ = ["TARGETS", "SHIPPED", "FORMAT", "MANIFEST", "meets_target", "manifest",
           "weights_path", "sha256", "load_shipped", "make_models", "main"]

#: What each corpus's model must reach on the test split: (metric of ``il.evaluate``, at least).
TARGETS: dict[str, tuple[str, float]] = {
    "post": ("exact_match", 1.0),
    "copy": ("exact_match", 1.0),
    "reverse": ("exact_match", 1.0),
    "fr-en": ("exact_match", 0.95),
    "coreference": ("pronoun_accuracy", 0.95),
}

#: The corpora whose default model ships with the package, in the order ``make models`` trains.
SHIPPED = tuple(TARGETS)
#: The package's weights folder, the one ``il.pretrained`` reads (``illustrated/weights``, beside
#: this ``commands/`` folder): where ``make models`` writes unless ``--out`` says otherwise.
PACKAGE_WEIGHTS = Path(__file__).resolve().parent.parent / "weights"


def meets_target(corpus: str, metrics: dict[str, float]) -> bool:
    """Whether ``metrics`` (as returned by ``il.evaluate``) reach the corpus's entry in TARGETS."""
    metric, at_least = TARGETS[corpus]
    return metrics[metric] >= at_least


def _check_shipped(corpus: str) -> None:
    """ValueError naming ``corpus`` unless it is one of SHIPPED."""
    if corpus not in SHIPPED:
        raise ValueError(f"corpus: expected one of {', '.join(SHIPPED)}, got {corpus!r}")


def _owned(name: str) -> bool:
    """Whether a file name in the weights folder is a shipped weights file (of any set)."""
    return re.fullmatch(rf"(?:{'|'.join(map(re.escape, SHIPPED))})(?:\.[0-9a-f]{{16}})?\.pt",
                        name) is not None


def make_models(out_dir: Path, corpora=SHIPPED, *, seed: int = 0, wait: float = 0) -> dict:
    """Train each corpus's default model once (CPU, one thread, ``seed``), write its weights and
    the manifest into ``out_dir``; return the manifest.

    The weights and the manifest are written as one set (:class:`illustrated.files.file_set.SetWriter`):
    each model's file is written under its hashed name as soon as it is trained (after a check,
    made before training, that the disk has room for it), the manifest last; models already in
    the manifest and not retrained keep their files. Until the manifest is replaced, the earlier
    set is untouched; a failure or Ctrl-C before then removes the new files. The folder is
    locked from before the manifest is read until the old files are removed: a second writer
    is refused (or waits up to ``wait`` seconds, then starts from the first one's manifest).

    Raises
    ------
    RuntimeError
        If a model misses its target in TARGETS (nothing is changed).
    ValueError
        For an unknown corpus, a damaged manifest already in ``out_dir``, a folder another
        writer holds or that holds another kind of set (an export's ``index.json``), or a file
        that cannot be written (one line naming it; the earlier set is then unchanged).
    KeyboardInterrupt
        After Ctrl-C; :class:`illustrated.files.atomic.InterruptedAfterWrite` if it came once the new
        manifest was in place (the new set is then whole).
    """
    for corpus in corpora:
        _check_shipped(corpus)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / MANIFEST
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with SetWriter(out_dir, MANIFEST, owned=_owned, name="path", kind=FORMAT,
                       wait=wait) as writer:
            models = read_manifest(path)["models"] if path.exists() else {}  # under the lock
            for corpus in corpora:
                _, src_vocab, tgt_vocab = load_corpus(corpus, "train")
                writer.check(f"{corpus}.pt", estimate_bytes(make_config(corpus, src_vocab,
                                                                        tgt_vocab)))
                start = time.perf_counter()
                model, src_vocab, tgt_vocab, _ = train_corpus(corpus, seed=seed, device="cpu",
                                                              progress=False)
                seconds = time.perf_counter() - start
                metrics = evaluate(model, corpus, src_vocab, tgt_vocab)
                if not meets_target(corpus, metrics):
                    raise RuntimeError(f"{corpus}: {metrics} misses its target "
                                       f"{TARGETS[corpus]}")
                entry = writer.add(f"{corpus}.pt", checkpoint_bytes(
                    model, (src_vocab, tgt_vocab), model.cfg))
                models[corpus] = {
                    **entry, "settings": SETTINGS[corpus], "seed": seed, "package": __version__,
                    "torch": torch.__version__,
                    "cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": 1,
                    "train_seconds": round(seconds, 1),
                    "metrics": {k: round(v, 4) for k, v in metrics.items()},
                }
                print(f"{corpus}: {models[corpus]['metrics']} in {seconds:.1f} s, "
                      f"{models[corpus]['bytes']:,} bytes", flush=True)
            result = {"format": FORMAT, "models": {c: models[c] for c in SHIPPED if c in models}}
            writer.commit((json.dumps(result, indent=2) + "\n").encode("utf-8"),
                          [entry["file"] for entry in result["models"].values()])
    finally:
        torch.set_num_threads(threads)
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m illustrated.commands.shipped [--corpora ...] [--out DIR]``: the command behind
    ``make models``. Returns 0; 2 with one line on an error (a full disk included, an
    ``--out`` whose manifest is one of the corpus files, another writer of ``--out`` after
    ``--wait`` seconds, a folder holding an export); 130 with one line after Ctrl-C, which
    says whether the new set was in place. The weights and manifest change together or not
    at all."""
    end_of_start()
    parser = argparse.ArgumentParser(prog="python -m illustrated.commands.shipped",
                                     description="Train the book's shipped models and write "
                                                 "their weights and manifest.")
    parser.add_argument("--corpora", nargs="+", default=list(SHIPPED), choices=SHIPPED)
    parser.add_argument("--out", default=str(PACKAGE_WEIGHTS),
                        help="folder for the weights and manifest.json (default: the package's, "
                             "which il.pretrained reads)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wait", type=check_wait, default=0, metavar="SECONDS",
                        help="wait this long for another writer of --out (default 0: refuse)")
    args = parser.parse_args(argv)
    try:
        refuse_clashes(corpus_files(args.corpora), [("--out", Path(args.out) / MANIFEST)],
                       package=False)  # the one command that writes the package's weights
        make_models(Path(args.out), args.corpora, seed=args.seed, wait=args.wait)
    except InterruptedAfterWrite:
        print(f"interrupted: the new weights and {MANIFEST} were already in place in "
              f"{args.out}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print(f"interrupted: nothing changed; {MANIFEST} in {args.out} still names the earlier "
              f"weights, all there", file=sys.stderr)
        return INTERRUPTED
    except (ValueError, RuntimeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    exit_with(main())
