"""Attention masks. Convention: bool, True = may attend (as torch's scaled_dot_product_attention).

References: post "The Decoder Side" (masking future positions); paper §3.2.3.
"""
from __future__ import annotations

import torch

__all__ = ["causal_mask", "padding_mask"]


def causal_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Lower-triangular mask: position i may attend to positions 0..i only.

    Parameters
    ----------
    size : int
        Sequence length, ``>= 1``.
    device : optional torch device for the result.

    Returns
    -------
    torch.Tensor, bool, shape (size, size); True = may attend.

    Raises
    ------
    ValueError
        If ``size`` is not a positive integer.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3 ("masking out ... illegal connections").
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size: expected a positive integer, got {size!r}")
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Mask that hides padding keys: True where the key token is not ``pad_id``.

    Parameters
    ----------
    tokens : torch.Tensor of token ids, shape (batch, seq).
    pad_id : int, the padding id of the vocabulary the tokens come from.

    Returns
    -------
    torch.Tensor, bool, shape (batch, 1, 1, seq): broadcasts over heads and query positions.

    Raises
    ------
    ValueError
        If ``tokens`` is not a 2-D integer tensor.

    References
    ----------
    Paper §3.2.3; the Annotated Transformer's ``src_mask``.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
        got = tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens).__name__
        raise ValueError(f"tokens: expected an integer tensor of shape (batch, seq), got {got}")
    return (tokens != pad_id)[:, None, None, :]  # (batch, 1, 1, seq)
