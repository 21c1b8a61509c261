"""The decoder: masked self-attention, encoder-decoder attention, then a feed-forward network.

Post "The Decoder Side"; paper §3.1 (Decoder) and §3.2.3.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from ._checks import check_config
from .dropout import Dropout
from .feed_forward import FeedForward
from .kv_cache import KVCache
from .multi_head import MultiHeadAttention
from .residual import add_and_norm, sublayer_input

__all__ = ["DecoderLayer", "Decoder"]


class DecoderLayer(nn.Module):
    """One decoder: masked self-attention, encoder-decoder ("cross") attention, feed-forward.

    The cross attention takes its queries from the decoder and its keys and values from the
    encoder's output (``memory``). Holds self_attn, cross_attn, feed_forward, norm1-norm3.
    forward(x (batch, tgt_len, d_model), memory (batch, src_len, d_model), src_mask
    broadcastable to (batch, n_heads, tgt_len, src_len), tgt_mask to (batch, n_heads, tgt_len,
    tgt_len)) -> (batch, tgt_len, d_model). The weights of its two attentions are read with
    :func:`~illustrated.modules.recording.recording_attention`.
    Raises TypeError (also a ValueError) if ``cfg`` is not a TransformerConfig. The inputs are
    trusted: :class:`~illustrated.modules.transformer.Transformer` checks them at its door.
    ``cache`` (decoding only): the layer's pair ``(self, cross)`` of
    :class:`~illustrated.modules.kv_cache.AttentionCache` from a
    :class:`~illustrated.modules.kv_cache.KVCache`; ``x`` then holds only the positions after
    those cached, ``tgt_mask`` covers (tgt_len, cached + tgt_len) and the weights' last
    dimensions count every cached key.
    Post "The Decoder Side"; paper §3.1, §3.2.3. Equal to ``nn.TransformerDecoderLayer`` (tested).
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, standalone=False)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout, standalone=False)
        self.feed_forward = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.norm3 = nn.LayerNorm(cfg.d_model)
        self.dropout1 = Dropout(cfg.dropout)
        self.dropout2 = Dropout(cfg.dropout)
        self.dropout3 = Dropout(cfg.dropout)
        self.norm_first = cfg.norm_first

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None, *, cache=None) -> torch.Tensor:
        self_cache, cross_cache = cache or (None, None)  # decoding: the layer's KV cache pair
        h = sublayer_input(x, self.norm1, self.norm_first)
        z = self.self_attn(h, h, h, tgt_mask, cache=self_cache)  # (batch, tgt_len, d_model)
        x = add_and_norm(x, z, self.norm1, self.dropout1, self.norm_first)
        h = sublayer_input(x, self.norm2, self.norm_first)
        z = self.cross_attn(h, memory, memory, src_mask, cache=cross_cache)  # (batch, tgt_len, d_model)
        x = add_and_norm(x, z, self.norm2, self.dropout2, self.norm_first)
        h = sublayer_input(x, self.norm3, self.norm_first)
        r = self.feed_forward(h)
        x = add_and_norm(x, r, self.norm3, self.dropout3, self.norm_first)
        return x  # (batch, tgt_len, d_model)


class Decoder(nn.Module):
    """``n_layers`` decoder layers applied in turn, each attending to the same encoder output.

    forward(x (batch, tgt_len, d_model), memory (batch, src_len, d_model), src_mask, tgt_mask)
    -> (batch, tgt_len, d_model).
    ``cache`` (decoding only): a :class:`~illustrated.modules.kv_cache.KVCache`, layer i
    keeping its keys and values in ``cache.layers[i]`` (see :class:`DecoderLayer`).
    Post "The Decoder Side" (the last encoder's output feeds every decoder); paper §3.1.
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None, *, cache: KVCache | None = None
                ) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            layer_cache = cache.layers[i] if cache is not None else None  # decoding only
            x = layer(x, memory, src_mask, tgt_mask, cache=layer_cache)  # (batch, tgt_len, d_model)
        return self.norm(x)  # (batch, tgt_len, d_model)
