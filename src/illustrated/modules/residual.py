"""The residual connection and layer normalisation around every sub-layer ("Add & Norm").

Post-LN (the paper and the post, ``norm_first=False``): ``LayerNorm(x + Dropout(Sublayer(x)))``.
Pre-LN (``norm_first=True``, what most modern code does; a deliberate deviation shown in
chapter 06): ``x + Dropout(Sublayer(LayerNorm(x)))``.
Post "The Residuals"; paper §3.1 and §5.4 ("Residual Dropout").
"""
from __future__ import annotations

import torch
from torch import nn


__all__ = ["sublayer_input", "add_and_norm"]


def sublayer_input(x: torch.Tensor, norm: nn.LayerNorm, norm_first: bool) -> torch.Tensor:
    """What the sub-layer sees: ``x`` itself (post-LN) or ``LayerNorm(x)`` (pre-LN).

    x (batch, seq, d_model) -> (batch, seq, d_model). Paper §3.1; Xiong et al. 2020, "On Layer
    Normalization in the Transformer Architecture" (pre-LN).
    """
    return norm(x) if norm_first else x


def add_and_norm(x: torch.Tensor, sublayer_out: torch.Tensor, norm: nn.LayerNorm,
                 dropout: nn.Module, norm_first: bool) -> torch.Tensor:
    """Add the sub-layer's output back to its input, then normalise (post-LN) or not (pre-LN).

    x: the sub-layer's input (the residual stream); sublayer_out: its output, both
    (batch, seq, d_model); dropout: residual dropout (paper §5.4). Returns (batch, seq, d_model).
    A layer's own tensors, trusted (the model checks its inputs at its door).
    Post "The Residuals"; paper §3.1: LayerNorm(x + Sublayer(x)).
    """
    if norm_first:
        return x + dropout(sublayer_out)  # (batch, seq, d_model)
    return norm(x + dropout(sublayer_out))  # (batch, seq, d_model)
