"""Data for the toy transformer: tokenizer, vocabulary, shipped toy corpora, batching.

``tokenize``/``Vocab``/``load_corpus`` need no torch; the batching names (``encode_pairs``,
``collate``, ``Batch``) import torch on first use, so reading a corpus stays light.

References: post "Bringing The Tensors Into The Picture", "Recap Of Training".
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

from .corpora import CORPORA, load_corpus, pronoun_correct
from .tokenizer import detokenize, normalize, tokenize
from .vocab import Vocab, encode_sentence

__all__ = [
    "Vocab",
    "encode_sentence",
    "tokenize",
    "detokenize",
    "normalize",
    "load_corpus",
    "CORPORA",
    "pronoun_correct",
    "encode_pairs",
    "collate",
    "Batch",
]

_LAZY = {"encode_pairs", "collate", "Batch"}


def __getattr__(name: str) -> Any:
    """Import the torch-based batching names on first access (PEP 562)."""
    if name in _LAZY:
        return getattr(import_module(".batching", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
