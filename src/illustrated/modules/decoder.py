"""The decoder: masked self-attention, encoder-decoder attention, then a feed-forward network.

Post "The Decoder Side"; paper §3.1 (Decoder) and §3.2.3.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from ._checks import check_config, check_decoder_inputs, has_forward_hooks
from .feed_forward import FeedForward
from .multi_head import MultiHeadAttention
from .residual import add_and_norm, add_and_norm_unchecked, sublayer_input

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
    differ, or a mask does not fit.
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
                tgt_mask: torch.Tensor | None = None, return_attention: bool = False):
        check_decoder_inputs(self, x, memory, src_mask, tgt_mask)
        if not return_attention and not has_forward_hooks(self):  # the fast path, on token rows
            batch, seq, d_model = x.shape
            rows = self.forward_rows(x.reshape(batch * seq, d_model), memory.reshape(-1, d_model),
                                     batch, src_mask, tgt_mask)
            return rows.view(batch, seq, d_model)
        h = sublayer_input(x, self.norm1, self.norm_first)
        z, self_weights = self.self_attn(h, h, h, tgt_mask, return_attention=True) \
            if return_attention else (self.self_attn(h, h, h, tgt_mask), None)
        x = add_and_norm(x, z, self.norm1, self.dropout1, self.norm_first)  # (batch, tgt_len, d_model)
        h = sublayer_input(x, self.norm2, self.norm_first)
        z, cross_weights = self.cross_attn(h, memory, memory, src_mask, return_attention=True) \
            if return_attention else (self.cross_attn(h, memory, memory, src_mask), None)
        x = add_and_norm(x, z, self.norm2, self.dropout2, self.norm_first)  # (batch, tgt_len, d_model)
        h = sublayer_input(x, self.norm3, self.norm_first)
        r = self.feed_forward(h)
        x = add_and_norm(x, r, self.norm3, self.dropout3, self.norm_first)  # (batch, tgt_len, d_model)
        return (x, (self_weights, cross_weights)) if return_attention else x

    def forward_rows(self, x: torch.Tensor, memory: torch.Tensor, batch: int,
                     src_mask: torch.Tensor | None = None,
                     tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The fast path of ``forward`` on token rows: x (batch * tgt_len, d_model) and memory
        (batch * src_len, d_model) -> (batch * tgt_len, d_model); no weights, no second check
        of inputs that ``forward`` or :class:`Decoder` checked, and every matrix product on
        rows, with no reshape for autograd to undo."""
        h = self.norm1(x) if self.norm_first else x
        z = self.self_attn.attend(h, h, h, batch, tgt_mask)  # see MultiHeadAttention
        x = add_and_norm_unchecked(x, z, self.norm1, self.dropout1, self.norm_first)
        h = self.norm2(x) if self.norm_first else x
        z = self.cross_attn.attend(h, memory, memory, batch, src_mask)
        x = add_and_norm_unchecked(x, z, self.norm2, self.dropout2, self.norm_first)
        h = self.norm3(x) if self.norm_first else x
        r = self.feed_forward.forward_unchecked(h)
        return add_and_norm_unchecked(x, r, self.norm3, self.dropout3, self.norm_first)


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
                tgt_mask: torch.Tensor | None = None, return_attention: bool = False):
        check_decoder_inputs(self.layers[0], x, memory, src_mask, tgt_mask)
        if not return_attention and not has_forward_hooks(self):  # the fast path, on token rows
            batch, seq, d_model = x.shape
            rows = self.forward_rows(x.reshape(batch * seq, d_model), memory.reshape(-1, d_model),
                                     batch, src_mask, tgt_mask)
            return rows.view(batch, seq, d_model)
        self_attentions, cross_attentions = [], []
        for layer in self.layers:
            if not return_attention:  # the fast attention path (see MultiHeadAttention)
                x = layer(x, memory, src_mask, tgt_mask)
                continue
            x, (self_w, cross_w) = layer(x, memory, src_mask, tgt_mask, return_attention=True)
            self_attentions.append(self_w)
            cross_attentions.append(cross_w)
        x = self.norm(x)
        return (x, self_attentions, cross_attentions) if return_attention else x

    def forward_rows(self, x: torch.Tensor, memory: torch.Tensor, batch: int,
                     src_mask: torch.Tensor | None = None,
                     tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The fast path of ``forward`` on token rows (batch * tgt_len, d_model), inputs checked."""
        for layer in self.layers:
            x = layer.forward_rows(x, memory, batch, src_mask, tgt_mask)
        return self.norm(x)
