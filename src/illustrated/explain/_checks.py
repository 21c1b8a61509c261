"""Argument checks shared by the explain modules (clear ValueErrors before any tensor is touched)."""
from __future__ import annotations

from ..data import Vocab
from ..modules.transformer import Transformer


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
