"""Default model sizes and training settings for each toy corpus, and trained models on demand.

The same settings serve the command line (``python -m illustrated train``), the chapters and the
benchmarks, so that every page shows the model the README's numbers describe.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import torch

from .checkpoint import load_checkpoint, save_checkpoint
from .config import TINY, TransformerConfig
from .data import CORPORA, Vocab, load_corpus, pronoun_correct
from .modules.transformer import Transformer
from .training import History, exact_match, set_seed, train, translate

__all__ = ["SETTINGS", "make_config", "train_corpus", "pretrained", "evaluate", "cache_dir"]

# Per corpus: model sizes (fields of TransformerConfig) and keywords of train().
SETTINGS: dict[str, dict[str, dict]] = {
    # The post's two sentences: TINY as it is.
    "post": {"model": {}, "train": {"steps": 100, "lr": 3e-3, "warmup": 10, "batch_size": 2}},
    # Copy and reverse need only one layer a side; the cosine decay settles the last few percent.
    # Measured 100 % exact match on the test split for seeds 0-4 on 1 and 2 threads, 4-9 s each
    # (benchmarks/corpora.py); at lr 5e-3 the same model stopped at 99 % (copy) and 84 % (reverse).
    "copy": {"model": {"n_heads": 2, "n_layers": 1},
             "train": {"steps": 300, "lr": 1e-2, "warmup": 20, "schedule": "cosine"}},
    "reverse": {"model": {"n_heads": 2, "n_layers": 1},
                "train": {"steps": 400, "lr": 1e-2, "warmup": 40, "schedule": "cosine"}},
    # Real grammar: agreement, word order and pronoun choice want a wider model.
    "fr-en": {"model": {"d_model": 64, "d_ff": 128},
              "train": {"steps": 400, "lr": 3e-3, "warmup": 20, "schedule": "cosine"}},
    "coreference": {"model": {"d_model": 64, "d_ff": 128},
                    "train": {"steps": 300, "lr": 3e-3, "warmup": 20, "schedule": "cosine"}},
}


def _check_corpus(corpus: str) -> None:
    if corpus not in SETTINGS:
        raise ValueError(f"corpus: expected one of {', '.join(CORPORA)}, got {corpus!r}")


def make_config(corpus: str, src_vocab: Vocab, tgt_vocab: Vocab, **overrides) -> TransformerConfig:
    """The corpus's default TransformerConfig (TINY plus its settings), sized for its vocabularies.

    ``overrides`` are TransformerConfig fields (e.g. ``d_model=64``) that win over the defaults.

    Raises
    ------
    ValueError
        For an unknown corpus or an invalid override.
    """
    _check_corpus(corpus)
    fields = {**SETTINGS[corpus]["model"], **overrides}
    return replace(TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                   pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id, **fields)


def train_corpus(corpus: str, *, model_overrides: dict | None = None, seed: int = 0,
                 **train_overrides) -> tuple[Transformer, Vocab, Vocab, History]:
    """Build the corpus's default model and train it on the corpus's training split.

    Returns
    -------
    (model, src_vocab, tgt_vocab, history); the model is in eval mode.
    """
    _check_corpus(corpus)
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    cfg = make_config(corpus, src_vocab, tgt_vocab, **(model_overrides or {}))
    set_seed(seed)
    model = Transformer(cfg)
    kwargs = {**SETTINGS[corpus]["train"], "seed": seed, **train_overrides}
    history = train(model, pairs, src_vocab, tgt_vocab, **kwargs)
    return model, src_vocab, tgt_vocab, history


def cache_dir() -> Path:
    """Where :func:`pretrained` keeps trained models: $ILLUSTRATED_CACHE or ~/.cache/illustrated."""
    return Path(os.environ.get("ILLUSTRATED_CACHE", Path.home() / ".cache" / "illustrated"))


def pretrained(corpus: str, *, seed: int = 0) -> tuple[Transformer, Vocab, Vocab]:
    """The corpus's default model trained deterministically on CPU, cached on disk after the first call.

    The cache key covers the settings, the seed, the package and torch versions, so a change to
    any of them trains afresh. Training runs on the CPU so that every reader gets the same model.

    Returns
    -------
    (model, src_vocab, tgt_vocab), model in eval mode on the CPU.
    """
    _check_corpus(corpus)
    from . import __version__
    key = json.dumps([corpus, SETTINGS[corpus], seed, __version__, torch.__version__, "1 thread"],
                     sort_keys=True)
    path = cache_dir() / f"{corpus}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.pt"
    if path.is_file():
        try:
            model, (src_vocab, tgt_vocab), _ = load_checkpoint(path)
            return model, src_vocab, tgt_vocab
        except ValueError:
            pass  # a broken cache file: train again
    # One thread: the order of floating-point sums, hence the weights, must not depend on the
    # machine's core count, so that every reader and CI get the same model and the same numbers.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, src_vocab, tgt_vocab, _ = train_corpus(corpus, seed=seed, device="cpu",
                                                      progress=False)
    finally:
        torch.set_num_threads(threads)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save_checkpoint(tmp, model, (src_vocab, tgt_vocab), model.cfg)
    tmp.replace(path)
    return model.cpu(), src_vocab, tgt_vocab


def evaluate(model: Transformer, corpus: str, src_vocab: Vocab, tgt_vocab: Vocab, *,
             split: str = "test", beam_size: int = 1) -> dict[str, float]:
    """The corpus's metrics on a split: exact match, and for coreference the il/elle accuracy.

    Returns
    -------
    {"exact_match": float in [0, 1]} plus {"pronoun_accuracy": ...} for "coreference".
    """
    _check_corpus(corpus)
    pairs, _, _ = load_corpus(corpus, split)
    result = {"exact_match": exact_match(model, pairs, src_vocab, tgt_vocab, beam_size=beam_size)}
    if corpus == "coreference":
        predictions = translate(model, [s for s, _ in pairs], src_vocab, tgt_vocab,
                                beam_size=beam_size)
        result["pronoun_accuracy"] = sum(pronoun_correct(p, t) for p, (_, t)
                                         in zip(predictions, pairs)) / len(pairs)
    return result
