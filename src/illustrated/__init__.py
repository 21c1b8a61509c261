"""The Illustrated Transformer, interactive: the tested package behind the book.

``import illustrated as il`` gives the names the chapters use; see docs/ARCHITECTURE.md for the contract.
The NumPy parts (``il.reference``, ``il.data``'s corpora and vocabularies, ``il.display``, the
configuration) import no torch: the names that need it are imported on first use (PEP 562), so
``import illustrated.reference`` stays light. Run as a command (``python -m illustrated...``),
a Ctrl-C while it is still importing is one line and exit code 130 (:mod:`._interrupt`).
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

from .commands import interrupt as _interrupt

if _interrupt.run_as_command():
    _interrupt.guard_start()

from . import data, display, reference  # noqa: E402 - after the guard
from .config import PAPER_BASE, TINY, TransformerConfig  # noqa: E402
from .recipe import Recipe  # noqa: E402

__version__ = "0.1.0"

# name -> the submodule that defines it; all of them need torch.
_LAZY_NAMES = {
    "load_checkpoint": "files.checkpoint", "save_checkpoint": "files.checkpoint",
    "beam_search": "inference.decoding", "greedy_decode": "inference.decoding",
    "length_penalty": "inference.decoding",
    "causal_mask": "masks", "padding_mask": "masks",
    "SETTINGS": "pretrained_models", "evaluate": "pretrained_models", "pretrained": "pretrained_models",
    "train_corpus": "pretrained_models",
    "History": "training.loop", "TrainingDiverged": "training.loop", "exact_match": "inference.translate",
    "pick_device": "training.loop", "set_seed": "training.loop", "train": "training.loop",
    "translate": "inference.translate",
    "Trace": "inference.tracing", "trace": "inference.tracing",
}
# submodules reachable as attributes (``il.pretrained_models.make_config``) before anything imported them
_LAZY_MODULES = {name: name for name in ("inference", "masks", "modules", "parity",
                                          "pretrained_models", "training", "files", "commands")}
_LAZY_MODULES["shipped"] = "commands.shipped"

__all__ = ["PAPER_BASE", "Recipe", "SETTINGS", "TINY", "History", "Trace", "TrainingDiverged",
           "TransformerConfig",
           "beam_search", "causal_mask", "data", "display", "evaluate", "exact_match",
           "greedy_decode", "length_penalty", "load_checkpoint", "modules", "padding_mask",
           "pick_device", "pretrained", "reference", "save_checkpoint", "set_seed", "shipped",
           "trace", "train", "train_corpus", "translate"]


def __getattr__(name: str) -> Any:
    """Import a torch-based name on first access and keep it (PEP 562)."""
    if name in _LAZY_MODULES:
        value = import_module(f".{_LAZY_MODULES[name]}", __name__)
    elif name in _LAZY_NAMES:
        value = getattr(import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_LAZY_MODULES))
