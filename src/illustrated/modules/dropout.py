"""Dropout that costs nothing where it does nothing.

Paper §5.4 ("Residual Dropout"); post "The Residuals".
"""
from __future__ import annotations

import torch
from torch import nn

__all__ = ["Dropout"]


class Dropout(nn.Dropout):
    """``nn.Dropout`` that returns its input itself in eval mode or with ``p = 0``, as
    ``torch.nn.functional.dropout`` does, without calling into torch (a cached decoding step
    calls nine dropouts). Training with ``p > 0`` is ``nn.Dropout``'s own call (the same random
    numbers). Still a module, called as one: hooks see every call.

    x: any shape -> the same shape. Paper §5.4.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        return super().forward(x)
