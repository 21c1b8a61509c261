"""The book's trained models, shipped inside the package: weights, manifest, and how they are made.

Training on a CPU with other vector instructions (AVX-512, AVX2, none) adds floating-point
numbers in another order, so the same seed gives other weights on another machine. The book's
numbers must not depend on the reader's CPU, so each corpus's default model is trained once,
by ``make models`` (``python -m illustrated.shipped``), and its weights ship as package data in
``weights/{corpus}.pt`` beside ``weights/manifest.json``, which records for every file the
corpus, the settings, the seed, the torch version and CPU capability it was trained with, its
metrics on the test split and its sha256. Loading takes milliseconds and is the same everywhere.

Retraining stays one call away (``il.pretrained(corpus, retrain=True)`` or ``il.train_corpus``):
its weights then depend on the machine, but the recipe reaches the same targets
(``benchmarks/retrain.py`` checks that under three CPU capabilities and three seeds).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from importlib import resources
from pathlib import Path

import torch

from ._atomic import atomic_write
from .checkpoint import load_checkpoint, save_checkpoint

__all__ = ["TARGETS", "SHIPPED", "meets_target", "manifest", "weights_path", "sha256",
           "load_shipped", "make_models", "main"]

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

MANIFEST = "manifest.json"
FORMAT = "illustrated-shipped-models/1"


def meets_target(corpus: str, metrics: dict[str, float]) -> bool:
    """Whether ``metrics`` (as returned by ``il.evaluate``) reach the corpus's entry in TARGETS."""
    metric, at_least = TARGETS[corpus]
    return metrics[metric] >= at_least


def _weights_dir():
    return resources.files(__package__) / "weights"


def weights_path(corpus: str) -> Path:
    """The shipped weights file of ``corpus`` inside the installed package."""
    return Path(str(_weights_dir() / f"{corpus}.pt"))


def manifest() -> dict:
    """The shipped models' manifest: ``{"format", "models": {corpus: {...}}}``.

    Each model's entry holds ``file``, ``sha256``, ``bytes``, ``settings`` (model sizes and
    training keywords), ``seed``, ``torch``, ``cpu_capability``, ``threads``, ``train_seconds``
    and ``metrics`` (on the test split).
    """
    return json.loads((_weights_dir() / MANIFEST).read_text(encoding="utf-8"))


def sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _check_shipped(corpus: str) -> None:
    if corpus not in SHIPPED:
        raise ValueError(f"corpus: expected one of {', '.join(SHIPPED)}, got {corpus!r}")


def load_shipped(corpus: str):
    """Load the shipped model of ``corpus`` on the CPU, in eval mode, after checking its sha256.

    Returns
    -------
    (model, src_vocab, tgt_vocab)

    Raises
    ------
    ValueError
        For an unknown corpus, or a weights file that is missing or does not match the manifest.
    """
    _check_shipped(corpus)
    entry = manifest()["models"].get(corpus)
    path = weights_path(corpus)
    if entry is None or not path.is_file():
        raise ValueError(f"corpus: no shipped model for {corpus!r} in {path.parent} "
                         f"(run `make models`)")
    if sha256(path) != entry["sha256"]:
        raise ValueError(f"corpus: the shipped weights {str(path)!r} do not match the manifest's "
                         f"sha256 (run `make models` again)")
    model, (src_vocab, tgt_vocab), _ = load_checkpoint(path)
    return model, src_vocab, tgt_vocab


def make_models(out_dir: Path, corpora=SHIPPED, *, seed: int = 0) -> dict:
    """Train each corpus's default model once (CPU, one thread, ``seed``), write its weights and
    the manifest into ``out_dir``; return the manifest.

    Raises
    ------
    RuntimeError
        If a model misses its target in TARGETS (nothing is written for it).
    """
    from . import __version__
    from .presets import SETTINGS, evaluate, train_corpus

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / MANIFEST
    models = json.loads(path.read_text())["models"] if path.is_file() else {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for corpus in corpora:
            _check_shipped(corpus)
            start = time.perf_counter()
            model, src_vocab, tgt_vocab, _ = train_corpus(corpus, seed=seed, device="cpu",
                                                          progress=False)
            seconds = time.perf_counter() - start
            metrics = evaluate(model, corpus, src_vocab, tgt_vocab)
            if not meets_target(corpus, metrics):
                raise RuntimeError(f"{corpus}: {metrics} misses its target {TARGETS[corpus]}")
            file = out_dir / f"{corpus}.pt"
            save_checkpoint(file, model, (src_vocab, tgt_vocab), model.cfg)
            models[corpus] = {
                "file": file.name, "sha256": sha256(file), "bytes": file.stat().st_size,
                "settings": SETTINGS[corpus], "seed": seed, "package": __version__,
                "torch": torch.__version__,
                "cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": 1,
                "train_seconds": round(seconds, 1),
                "metrics": {k: round(v, 4) for k, v in metrics.items()},
            }
            print(f"{corpus}: {models[corpus]['metrics']} in {seconds:.1f} s, "
                  f"{models[corpus]['bytes']:,} bytes", flush=True)
    finally:
        torch.set_num_threads(threads)
    result = {"format": FORMAT, "models": {c: models[c] for c in SHIPPED if c in models}}
    with atomic_write(path, "w", encoding="utf-8") as file:
        file.write(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> None:
    """``python -m illustrated.shipped [--corpora ...] [--out DIR]``: the command behind
    ``make models``."""
    parser = argparse.ArgumentParser(prog="python -m illustrated.shipped",
                                     description="Train the book's shipped models and write "
                                                 "their weights and manifest.")
    parser.add_argument("--corpora", nargs="+", default=list(SHIPPED), choices=SHIPPED)
    parser.add_argument("--out", default=str(Path(__file__).parent / "weights"),
                        help="folder for the weights and manifest.json (default: the package's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    make_models(Path(args.out), args.corpora, seed=args.seed)


if __name__ == "__main__":
    main()
