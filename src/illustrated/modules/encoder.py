"""The encoder: a stack of identical layers, each self-attention then a feed-forward network.

Post "Now We're Encoding!", "The Residuals"; paper §3.1 (Encoder).
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from ._checks import check_config
from .dropout import Dropout
from .feed_forward import FeedForward
from .multi_head import MultiHeadAttention
from .residual import add_and_norm, sublayer_input

__all__ = ["EncoderLayer", "Encoder"]


class EncoderLayer(nn.Module):
    """One encoder: multi-head self-attention, then the feed-forward network, each with Add & Norm.

    Uses cfg's d_model, n_heads, d_ff, dropout, norm_first. Holds self_attn, feed_forward
    (linear1, linear2), and norm1, norm2 around the two sub-layers.
    forward(x (batch, seq, d_model), mask broadcastable to (batch, n_heads, seq, seq))
    -> (batch, seq, d_model). Its self-attention's weights are read with
    :func:`~illustrated.modules.recording.recording_attention`.
    Raises TypeError (also a ValueError) if ``cfg`` is not a TransformerConfig. The inputs are
    trusted: :class:`~illustrated.modules.transformer.Transformer` checks them at its door.
    Post "Now We're Encoding!"; paper §3.1. Equal to ``nn.TransformerEncoderLayer`` with ReLU and
    ``batch_first=True`` (tested).
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, standalone=False)
        self.feed_forward = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.dropout1 = Dropout(cfg.dropout)
        self.dropout2 = Dropout(cfg.dropout)
        self.norm_first = cfg.norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        h = sublayer_input(x, self.norm1, self.norm_first)
        z = self.self_attn(h, h, h, mask)  # (batch, seq, d_model)
        x = add_and_norm(x, z, self.norm1, self.dropout1, self.norm_first)
        h = sublayer_input(x, self.norm2, self.norm_first)
        r = self.feed_forward(h)
        x = add_and_norm(x, r, self.norm2, self.dropout2, self.norm_first)
        return x  # (batch, seq, d_model)


class Encoder(nn.Module):
    """``n_layers`` encoder layers applied in turn (plus a final LayerNorm when pre-LN).

    forward(x (batch, src_len, d_model), mask) -> (batch, src_len, d_model).
    Post "A High-Level Look" (the stack of six encoders); paper §3.1.
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layers))
        # Pre-LN leaves the residual stream un-normalised, so a last LayerNorm closes the stack.
        self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)  # (batch, src_len, d_model)
        return self.norm(x)
