"""Attention masks: bool, True = may attend (as torch's scaled_dot_product_attention).

Post "The Decoder Side" (masking future positions); paper §3.2.3.
"""
from __future__ import annotations

import torch

from ._args import ArgumentTypeError, check_int, check_size_limit, describe

__all__ = ["causal_mask", "padding_mask"]


def causal_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Lower-triangular mask: position i may attend to positions 0..i only.

    Returns bool (size, size) on ``device``; True = may attend.
    Raises TypeError (also a ValueError) if ``size`` is not an int, ValueError if it is below 1.
    Post "The Decoder Side"; paper §3.2.3 ("masking out ... illegal connections").
    """
    check_int("size", size, low=1)
    check_size_limit("size", size * size, "size x size")
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Mask that hides padding keys: True where the key token is not ``pad_id``.

    tokens: (batch, seq) ids; pad_id: the padding id of their vocabulary.
    Returns bool (batch, 1, 1, seq), broadcasting over heads and query positions.
    Raises TypeError (also a ValueError) if ``tokens`` is not an integer tensor or ``pad_id`` not
    an int; ValueError if ``tokens`` is not 2-D or ``pad_id`` is negative.
    Paper §3.2.3; the Annotated Transformer's ``src_mask``.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.is_floating_point() or tokens.is_complex() \
            or tokens.dtype == torch.bool:
        raise ArgumentTypeError(f"tokens: expected an integer tensor of shape (batch, seq), got "
                                f"{describe(tokens)}")
    if tokens.dim() != 2:
        raise ValueError(f"tokens: expected shape (batch, seq), got {tuple(tokens.shape)}")
    check_int("pad_id", pad_id, low=0)
    return (tokens != pad_id)[:, None, None, :]  # (batch, 1, 1, seq)
