"""The Illustrated Transformer, interactive: the tested package behind the book.

``import illustrated as il`` gives the names the chapters use; see ``DESIGN.md`` for the contract.
"""
from . import data, display, modules, reference, shipped
from .checkpoint import load_checkpoint, save_checkpoint
from .config import PAPER_BASE, TINY, TransformerConfig
from .decoding import beam_search, greedy_decode, length_penalty
from .masks import causal_mask, padding_mask
from .presets import SETTINGS, evaluate, pretrained, train_corpus
from .training import (History, TrainingDiverged, exact_match, pick_device, set_seed, train,
                       translate)

__version__ = "0.1.0"

__all__ = ["PAPER_BASE", "SETTINGS", "TINY", "evaluate", "pretrained", "train_corpus", "History", "TrainingDiverged", "TransformerConfig",
           "beam_search", "causal_mask", "data", "display", "exact_match", "greedy_decode",
           "length_penalty", "load_checkpoint", "modules", "padding_mask", "pick_device",
           "reference", "save_checkpoint", "shipped", "set_seed", "train", "translate"]
