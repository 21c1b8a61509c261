"""The whole encoder-decoder Transformer.

Post "A High-Level Look" to "The Final Linear and Softmax Layer"; paper §3, Figure 1.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from ..masks import causal_mask, padding_mask
from ._checks import check_config, check_pair, check_source, check_target
from .decoder import Decoder
from .embeddings import Embeddings
from .encoder import Encoder
from .kv_cache import KVCache, check_cache
from .output import Generator
from .positional import PositionalEncoding

__all__ = ["Transformer"]


class Transformer(nn.Module):
    """Embeddings + positions, the encoder stack, the decoder stack and the final linear layer.

    encode(src (batch, src_len) ids, src_mask) -> memory (batch, src_len, d_model)
    decode(tgt_in (batch, tgt_len) ids, memory, src_mask) -> (batch, tgt_len, d_model)
    forward(src, tgt_in, src_mask) -> logits (batch, tgt_len, tgt_vocab_size)
    src_mask broadcasts to (batch, n_heads, 1, src_len); when None, encode/forward build it
    from the source padding (``cfg.pad_id``); decode applies the causal mask itself.
    Each returns one tensor and checks its inputs once, calling its parts with ``check=False``;
    the attention weights are read with
    :func:`~illustrated.modules.recording.recording_attention` (:class:`~illustrated.modules.
    recording.Attention` groups them by layer).
    decode(..., cache=KVCache(cfg.n_layers)) decodes auto-regressively (paper §3.1): ``tgt_in``
    holds only the positions after the ``cache.length`` already decoded (one a step), the
    causal mask covers (tgt_len, cache.length + tgt_len), and the cache keeps each layer's keys
    and values, the self-attention's (batch, n_heads, length, d_k) growing a step at a time,
    the cross-attention's (batch, n_heads, src_len, d_k) computed from ``memory`` at the first
    call only. Outputs and weights equal those of the last rows of an uncached call on the
    whole prefix (tested); ValueError if the cache is not a KVCache of n_layers, holds another
    batch, or the positions would pass ``cfg.max_len``.
    Raises TypeError (also a ValueError) if ``cfg`` is not a TransformerConfig, ids are not an
    int64/int32 tensor, ``memory`` not a float tensor of the model's dtype, or a mask not bool;
    ValueError for ids outside the vocabulary, id tensors not (batch, seq) with both >= 1,
    sequences longer than ``cfg.max_len``, a source of padding only, batch sizes that differ,
    tensors on another device than the model, or a mask that does not broadcast to
    (batch, n_heads, seq_q, src_len) or leaves a query with no key. Messages name the argument.
    Post, all sections; paper §3 and Figure 1.
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        check_config(cfg, whole_model=True)
        self.cfg = cfg
        self.src_embed = Embeddings(cfg.src_vocab_size, cfg.d_model)
        self.tgt_embed = Embeddings(cfg.tgt_vocab_size, cfg.d_model)
        self.positional = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.pe_layout, cfg.dropout)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        self.generator = Generator(cfg.d_model, cfg.tgt_vocab_size)
        for p in self.parameters():  # Glorot initialisation, as the Annotated Transformer does
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None,
               *, check: bool = True) -> torch.Tensor:
        if check:  # the model's boundary: its parts are called with check=False
            check_source(self, src, src_mask)
        if src_mask is None:  # the padding's keys are hidden
            src_mask = padding_mask(src, self.cfg.pad_id)  # (batch, 1, 1, src_len)
        x = self.src_embed(src, check=False)  # (batch, src_len, d_model)
        x = self.positional(x, check=False)  # (batch, src_len, d_model)
        return self.encoder(x, src_mask, check=False)  # (batch, src_len, d_model)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor,
               src_mask: torch.Tensor | None = None, *, check: bool = True,
               cache: KVCache | None = None) -> torch.Tensor:
        past = 0
        if check:  # the model's boundary: its parts are called with check=False
            check_target(self, tgt_in, memory, src_mask)
            if cache is not None:
                past = check_cache(cache, self.cfg.n_layers, tgt_in.shape[0], tgt_in.shape[1],
                                   self.cfg.max_len)
        elif cache is not None:
            past = cache.length
        if cache is not None and tgt_in.shape[1] == 1:
            tgt_mask = None  # one new position: every key is at or before it
        else:
            total = past + tgt_in.shape[1]
            tgt_mask = causal_mask(total, device=tgt_in.device)[past:]  # (tgt_len, past + tgt_len)
        y = self.tgt_embed(tgt_in, check=False)  # (batch, tgt_len, d_model)
        y = self.positional(y, check=False, start=past)  # (batch, tgt_len, d_model)
        return self.decoder(y, memory, src_mask, tgt_mask, check=False,
                            cache=cache)  # (batch, tgt_len, d_model)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor,
                src_mask: torch.Tensor | None = None) -> torch.Tensor:
        check_pair(self, src, tgt_in, src_mask)  # decode checks tgt_in itself
        if src_mask is None:  # the padding's keys are hidden
            src_mask = padding_mask(src, self.cfg.pad_id)  # (batch, 1, 1, src_len)
        memory = self.encode(src, src_mask, check=False)  # (batch, src_len, d_model)
        out = self.decode(tgt_in, memory, src_mask)  # (batch, tgt_len, d_model)
        return self.generator(out, check=False)  # (batch, tgt_len, tgt_vocab_size)
