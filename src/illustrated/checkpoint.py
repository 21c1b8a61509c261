"""Saving and loading a trained model with its vocabularies and configuration.

Checkpoints hold only tensors, strings, numbers and lists, so they load with
``torch.load(weights_only=True)``: no arbitrary object is ever unpickled.
"""
from __future__ import annotations

import pickle
from dataclasses import asdict
from pathlib import Path

import torch

from .config import TransformerConfig
from .data import Vocab
from .modules.transformer import Transformer

__all__ = ["save_checkpoint", "load_checkpoint", "FORMAT"]

FORMAT = "illustrated-transformer-checkpoint/1"


def save_checkpoint(path: str | Path, model: Transformer, vocabs: tuple[Vocab, Vocab],
                    cfg: TransformerConfig) -> None:
    """Write the model's weights, both vocabularies and the configuration to ``path``.

    Parameters
    ----------
    path : file to write.   model : Transformer.   vocabs : (src_vocab, tgt_vocab).
    cfg : the model's TransformerConfig.
    """
    src_vocab, tgt_vocab = vocabs
    torch.save({"format": FORMAT, "config": asdict(cfg), "src_vocab": list(src_vocab.tokens),
                "tgt_vocab": list(tgt_vocab.tokens),
                "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()}},
               Path(path))


def load_checkpoint(path: str | Path) -> tuple[Transformer, tuple[Vocab, Vocab], TransformerConfig]:
    """Read a checkpoint written by :func:`save_checkpoint`; the model comes back in eval mode on CPU.

    Returns
    -------
    (model, (src_vocab, tgt_vocab), cfg)

    Raises
    ------
    ValueError
        If ``path`` does not exist or is not one of our checkpoints (never unpickles arbitrary
        objects: ``torch.load(weights_only=True)``).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no checkpoint file at {str(path)!r}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError) as error:
        raise ValueError(f"path: {str(path)!r} is not an illustrated checkpoint "
                         f"({type(error).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"path: {str(path)!r} is not an illustrated checkpoint "
                         f"(expected format {FORMAT!r})")
    cfg = TransformerConfig(**data["config"])
    model = Transformer(cfg)
    model.load_state_dict(data["state_dict"])
    model.eval()
    return model, (Vocab(data["src_vocab"]), Vocab(data["tgt_vocab"])), cfg
