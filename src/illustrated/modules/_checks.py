"""Input checks shared by the modules: clear ValueErrors instead of deep torch tracebacks."""
from __future__ import annotations

import torch

__all__ = ["check_features", "check_mask", "check_token_ids"]


def check_features(name: str, x: torch.Tensor, d_model: int) -> None:
    """Raise ValueError unless ``x`` is a float tensor of shape (batch, seq, d_model)."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != d_model:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{name}: expected shape (batch, seq, d_model={d_model}), got {got}")
    if not x.is_floating_point():
        raise ValueError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")


def check_mask(mask: torch.Tensor | None, expected: tuple[int, ...], name: str = "mask") -> None:
    """Raise ValueError unless ``mask`` is a bool tensor broadcastable to ``expected``.

    ``expected`` is (batch, n_heads, seq_q, seq_k). A query row where no key may be attended to
    would give NaN after the softmax, so it is rejected here.
    """
    if mask is None:
        return
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise ValueError(f"{name}: expected a bool tensor (True = may attend), got {got}")
    try:
        torch.broadcast_shapes(mask.shape, expected)
    except RuntimeError:
        raise ValueError(
            f"{name}: expected a shape broadcastable to (batch, n_heads, seq_q, seq_k)={expected}, "
            f"e.g. (seq_q, seq_k) or (batch, 1, 1, seq_k), got {tuple(mask.shape)}") from None
    if not bool(mask.any(dim=-1).all()):
        raise ValueError(f"{name}: some query position may attend to no key at all "
                         "(a row of the mask is all False); its softmax would be NaN")


def check_token_ids(name: str, ids: torch.Tensor, vocab_size: int) -> None:
    """Raise ValueError unless ``ids`` is a 2-D integer tensor with values in [0, vocab_size)."""
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.is_floating_point() \
            or ids.dtype == torch.bool:
        got = (f"shape {tuple(ids.shape)}, dtype {ids.dtype}" if isinstance(ids, torch.Tensor)
               else type(ids).__name__)
        raise ValueError(f"{name}: expected an integer tensor of shape (batch, seq), got {got}")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise ValueError(f"{name}: token id {bad} is outside the vocabulary [0, {vocab_size})")
