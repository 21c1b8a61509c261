"""The decoder: masked self-attention, encoder-decoder attention, then a feed-forward network.

Post "The Decoder Side"; paper §3.1 (Decoder) and §3.2.3.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from ._checks import check_config, check_decoder_inputs
from .feed_forward import FeedForward
from .multi_head import MultiHeadAttention
from .residual import add_and_norm, sublayer_input

__all__ = ["DecoderLayer", "Decoder"]


class DecoderLayer(nn.Module):
    """One decoder: masked self-attention, encoder-decoder ("cross") attention, feed-forward.

    The cross attention takes its queries from the decoder and its keys and values from the
    encoder's output (``memory``). Holds self_attn, cross_attn, feed_forward, norm1-norm3.
    forward(x (batch, tgt_len, d_model), memory (batch, src_len, d_model), src_mask
    broadcastable to (batch, n_heads, tgt_len, src_len), tgt_mask to (batch, n_heads, tgt_len,
    tgt_len)) -> (batch, tgt_len, d_model), plus (self weights (batch, n_heads, tgt_len,
    tgt_len), cross weights (batch, n_heads, tgt_len, src_len)) with ``return_attention=True``.
    Raises TypeError / ValueError if ``cfg`` is not a TransformerConfig, ``x`` or ``memory`` is
    not a float tensor (batch, seq, d_model) of the layer's dtype and device, their batches
    differ, or a mask does not fit (``check=False``: the caller checked them, as
    :class:`Decoder` does for its layers).
    Post "The Decoder Side"; paper §3.1, §3.2.3. Equal to ``nn.TransformerDecoderLayer`` (tested).
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.feed_forward = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.norm3 = nn.LayerNorm(cfg.d_model)
        self.dropout1 = nn.Dropout(cfg.dropout)
        self.dropout2 = nn.Dropout(cfg.dropout)
        self.dropout3 = nn.Dropout(cfg.dropout)
        self.norm_first = cfg.norm_first

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None, return_attention: bool = False, *,
                check: bool = True):
        if check:
            check_decoder_inputs(self, x, memory, src_mask, tgt_mask)
        h = sublayer_input(x, self.norm1, self.norm_first)
        if return_attention:
            z, self_weights = self.self_attn(h, h, h, tgt_mask, return_attention=True, check=False)
        else:
            z, self_weights = self.self_attn(h, h, h, tgt_mask, check=False), None
        x = add_and_norm(x, z, self.norm1, self.dropout1, self.norm_first)  # (batch, tgt_len, d_model)
        h = sublayer_input(x, self.norm2, self.norm_first)
        if return_attention:
            z, cross_weights = self.cross_attn(h, memory, memory, src_mask, return_attention=True,
                                               check=False)
        else:
            z, cross_weights = self.cross_attn(h, memory, memory, src_mask, check=False), None
        x = add_and_norm(x, z, self.norm2, self.dropout2, self.norm_first)  # (batch, tgt_len, d_model)
        h = sublayer_input(x, self.norm3, self.norm_first)
        r = self.feed_forward(h, check=False)
        x = add_and_norm(x, r, self.norm3, self.dropout3, self.norm_first)  # (batch, tgt_len, d_model)
        return (x, (self_weights, cross_weights)) if return_attention else x


class Decoder(nn.Module):
    """``n_layers`` decoder layers applied in turn, each attending to the same encoder output.

    forward(x (batch, tgt_len, d_model), memory (batch, src_len, d_model), src_mask, tgt_mask)
    -> (batch, tgt_len, d_model), plus with ``return_attention=True`` two lists of ``n_layers``
    weights: self (batch, n_heads, tgt_len, tgt_len), cross (batch, n_heads, tgt_len, src_len).
    Post "The Decoder Side" (the last encoder's output feeds every decoder); paper §3.1.
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None, return_attention: bool = False, *,
                check: bool = True):
        if check:  # once for the stack: every layer is called with check=False
            check_decoder_inputs(self.layers[0], x, memory, src_mask, tgt_mask)
        self_attentions, cross_attentions = [], []
        for layer in self.layers:
            if return_attention:
                x, (self_w, cross_w) = layer(x, memory, src_mask, tgt_mask, return_attention=True,
                                             check=False)
                self_attentions.append(self_w)
                cross_attentions.append(cross_w)
            else:
                x = layer(x, memory, src_mask, tgt_mask, check=False)
        x = self.norm(x)
        return (x, self_attentions, cross_attentions) if return_attention else x
