"""The Illustrated Transformer, interactive: the tested package behind the book.

``import illustrated as il`` gives the names the chapters use; see docs/ARCHITECTURE.md for the contract.
The NumPy parts (``il.reference``, ``il.data``'s corpora and vocabularies, ``il.display``, the
configuration) import no torch: the names that need it are imported on first use (PEP 562), so
``import illustrated.reference`` stays light.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

from . import data, display, reference
from .config import PAPER_BASE, TINY, TransformerConfig

__version__ = "0.1.0"

# name -> the submodule that defines it; all of them need torch.
_LAZY_NAMES = {
    "load_checkpoint": "checkpoint", "save_checkpoint": "checkpoint",
    "beam_search": "decoding", "greedy_decode": "decoding", "length_penalty": "decoding",
    "causal_mask": "masks", "padding_mask": "masks",
    "SETTINGS": "presets", "evaluate": "presets", "pretrained": "presets",
    "train_corpus": "presets",
    "History": "training", "TrainingDiverged": "training", "exact_match": "training",
    "pick_device": "training", "set_seed": "training", "train": "training",
    "translate": "training",
    "Trace": "tracing", "trace": "tracing",
}
# submodules reachable as attributes (``il.presets.make_config``) before anything imported them
_LAZY_MODULES = {"checkpoint", "decoding", "masks", "modules", "parity", "presets", "shipped",
                 "tracing", "training"}

__all__ = ["PAPER_BASE", "SETTINGS", "TINY", "History", "Trace", "TrainingDiverged", "TransformerConfig",
           "beam_search", "causal_mask", "data", "display", "evaluate", "exact_match",
           "greedy_decode", "length_penalty", "load_checkpoint", "modules", "padding_mask",
           "pick_device", "pretrained", "reference", "save_checkpoint", "set_seed", "shipped",
           "trace", "train", "train_corpus", "translate"]


def __getattr__(name: str) -> Any:
    """Import a torch-based name on first access and keep it (PEP 562)."""
    if name in _LAZY_MODULES:
        value = import_module(f".{name}", __name__)
    elif name in _LAZY_NAMES:
        value = getattr(import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _LAZY_MODULES)
