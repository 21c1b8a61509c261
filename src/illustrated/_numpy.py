"""The one conversion from a torch tensor to NumPy that the package uses (torch needed)."""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["to_numpy"]


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A detached float64 NumPy copy of a tensor (on any device); shape unchanged."""
    return t.detach().cpu().to(torch.float64).numpy().copy()
