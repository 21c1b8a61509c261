"""The decoder: masked self-attention, encoder-decoder attention, then a feed-forward network.

Post "The Decoder Side"; paper §3.1 (Decoder) and §3.2.3.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from ._checks import check_config, check_decoder_inputs
from .dropout import Dropout
from .feed_forward import FeedForward
from .kv_cache import AttentionCache, check_cache, check_cached_mask
from .multi_head import MultiHeadAttention
from .residual import add_and_norm, sublayer_input

__all__ = ["DecoderLayer", "Decoder"]


def _check_inputs(layer: "DecoderLayer", x: torch.Tensor, memory: torch.Tensor,
                  src_mask: torch.Tensor | None, tgt_mask: torch.Tensor | None,
                  self_cache: AttentionCache | None) -> None:
    """A decoder layer's inputs; with a cache, tgt_mask covers the cached keys too."""
    check_decoder_inputs(layer, x, memory, src_mask, None if self_cache is not None else tgt_mask)
    if self_cache is not None:
        check_cached_mask(tgt_mask, self_cache, x, x, layer.self_attn.n_heads, "tgt_mask")


class DecoderLayer(nn.Module):
    """One decoder: masked self-attention, encoder-decoder ("cross") attention, feed-forward.

    The cross attention takes its queries from the decoder and its keys and values from the
    encoder's output (``memory``). Holds self_attn, cross_attn, feed_forward, norm1-norm3.
    forward(x (batch, tgt_len, d_model), memory (batch, src_len, d_model), src_mask
    broadcastable to (batch, n_heads, tgt_len, src_len), tgt_mask to (batch, n_heads, tgt_len,
    tgt_len)) -> (batch, tgt_len, d_model). The weights of its two attentions are read with
    :func:`~illustrated.modules.recording.recording_attention`.
    Raises TypeError / ValueError if ``cfg`` is not a TransformerConfig, ``x`` or ``memory`` is
    not a float tensor (batch, seq, d_model) of the layer's dtype and device, their batches
    differ, or a mask does not fit (``check=False``: the caller checked them, as
    :class:`Decoder` does for its layers).
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
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.feed_forward = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.norm3 = nn.LayerNorm(cfg.d_model)
        self.dropout1 = Dropout(cfg.dropout)
        self.dropout2 = Dropout(cfg.dropout)
        self.dropout3 = Dropout(cfg.dropout)
        self.norm_first = cfg.norm_first

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None, *, check: bool = True,
                cache=None) -> torch.Tensor:
        self_cache, cross_cache = (None, None) if cache is None else cache
        if check:
            _check_inputs(self, x, memory, src_mask, tgt_mask, self_cache)
        h = sublayer_input(x, self.norm1, self.norm_first, check=False)
        z = self.self_attn(h, h, h, tgt_mask, check=False, cache=self_cache)
        x = add_and_norm(x, z, self.norm1, self.dropout1, self.norm_first, check=False)
        h = sublayer_input(x, self.norm2, self.norm_first, check=False)
        z = self.cross_attn(h, memory, memory, src_mask, check=False, cache=cross_cache)
        x = add_and_norm(x, z, self.norm2, self.dropout2, self.norm_first, check=False)
        h = sublayer_input(x, self.norm3, self.norm_first, check=False)
        r = self.feed_forward(h, check=False)
        x = add_and_norm(x, r, self.norm3, self.dropout3, self.norm_first, check=False)
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
                tgt_mask: torch.Tensor | None = None, *, check: bool = True,
                cache=None) -> torch.Tensor:
        if check:  # once for the stack: every layer is called with check=False
            if cache is not None:
                check_cache(cache, len(self.layers), x.shape[0])
            _check_inputs(self.layers[0], x, memory, src_mask, tgt_mask,
                          None if cache is None else cache.layers[0][0])
        for i, layer in enumerate(self.layers):
            layer_cache = None if cache is None else cache.layers[i]
            x = layer(x, memory, src_mask, tgt_mask, check=False, cache=layer_cache)
        return self.norm(x)  # (batch, tgt_len, d_model)
