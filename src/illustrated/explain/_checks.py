"""What the explain modules share: argument checks (clear ValueErrors before any tensor is
touched), the one tensor-to-NumPy conversion, and picking a layer or head out of a trace."""
from __future__ import annotations

import numpy as np

from .._numpy import to_numpy
from ..data import Vocab, encode_sentence
from ..modules.transformer import Transformer

__all__ = ["check_model", "check_vocab", "check_layer", "check_head", "pick_heads",
           "encode_sentence", "to_numpy"]


def check_model(model: object) -> Transformer:
    """``model`` itself if it is an :class:`il.modules.Transformer`; ValueError otherwise."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model: expected an il.modules.Transformer, got {type(model).__name__}")
    return model


def check_vocab(name: str, vocab: object, size: int) -> Vocab:
    """``vocab`` itself if it is a :class:`il.data.Vocab` of ``size`` tokens; ValueError otherwise.

    ``name`` is the argument's name in the error message ("src_vocab" or "tgt_vocab").
    """
    if not isinstance(vocab, Vocab):
        raise ValueError(f"{name}: expected an il.data.Vocab, got {type(vocab).__name__}")
    if len(vocab) != size:
        raise ValueError(f"{name}: has {len(vocab)} tokens but the model expects {size}")
    return vocab


def check_layer(model: Transformer, layer: object) -> int:
    """A layer index in [-n_layers, n_layers) as a non-negative int; ValueError otherwise."""
    n = model.cfg.n_layers
    if isinstance(layer, bool) or not isinstance(layer, int) or not -n <= layer < n:
        raise ValueError(f"layer: expected a decoder layer index in [-{n}, {n}), got {layer!r}")
    return layer % n


def check_head(head: object, n_heads: int) -> None:
    """ValueError unless ``head`` is None (mean over heads) or a head index."""
    if head is not None and (isinstance(head, bool) or not isinstance(head, int)
                             or not 0 <= head < n_heads):
        raise ValueError(f"head: expected None (mean over heads) or an int in [0, {n_heads}), "
                         f"got {head!r}")


def pick_heads(weights: np.ndarray, head: int | None) -> np.ndarray:
    """(n_heads, q, k) attention weights -> (q, k): one head, or the mean over the heads."""
    return weights.mean(axis=0) if head is None else weights[head].copy()  # (q, k)
