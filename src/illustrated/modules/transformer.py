"""The whole encoder-decoder Transformer.

Post "A High-Level Look" to "The Final Linear and Softmax Layer"; paper §3, Figure 1.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import TransformerConfig
from .._args import check_instance
from ..masks import causal_mask, padding_mask
from ._checks import check_config, check_pair, check_source, check_target
from .decoder import Decoder
from .embeddings import Embeddings
from .encoder import Encoder
from .kv_cache import KVCache
from .output import Generator
from .positional import PositionalEncoding

__all__ = ["Transformer", "check_model"]


class Transformer(nn.Module):
    """Embeddings + positions, the encoder stack, the decoder stack and the final linear layer.

    encode(src (batch, src_len) ids, src_mask) -> memory (batch, src_len, d_model);
    decode(tgt_in (batch, tgt_len) ids, memory, src_mask, cache=None) -> (batch, tgt_len,
    d_model), the causal mask applied inside; forward(src, tgt_in, src_mask) -> logits (batch,
    tgt_len, tgt_vocab_size), and the memory with ``return_memory=True``. src_mask broadcasts
    to (batch, n_heads, 1, src_len); None: made from the source padding (``cfg.pad_id``).
    ``cache`` (a KVCache(cfg.n_layers)): ``tgt_in`` holds only the positions after the
    ``cache.length`` already decoded; outputs equal the last rows of an uncached call. The
    three check their inputs (the door) and call ``encode_unchecked``/``decode_unchecked``,
    which trust them (for callers that checked theirs: the decoding loops, the compiled step).
    Raises TypeError (also a ValueError) / ValueError naming the argument for ids that are not
    int64/int32 (batch, seq) in the vocabulary and within ``cfg.max_len``, a source of padding
    only, batches or devices that differ, a mask that is not bool or does not fit, or a cache
    that is not a KVCache of n_layers for this batch. Post, all sections; paper §3, Figure 1.
    """

    #: decode is causal (a position never sees later ones), so decoding may keep a KV cache;
    #: a subclass whose decode is not causal sets it False.
    supports_kv_cache = True

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

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        check_source(self, src, src_mask)  # the model's door: its parts trust their inputs
        return self.encode_unchecked(src, src_mask)  # (batch, src_len, d_model)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor,
               src_mask: torch.Tensor | None = None, *, cache: KVCache | None = None
               ) -> torch.Tensor:
        check_target(self, tgt_in, memory, src_mask, cache)  # the model's door
        return self.decode_unchecked(tgt_in, memory, src_mask, cache)  # (batch, tgt_len, d_model)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor,
                src_mask: torch.Tensor | None = None, *, return_memory: bool = False):
        check_pair(self, src, tgt_in, src_mask)  # the model's door; decode checks tgt_in
        if src_mask is None:  # the padding's keys are hidden
            src_mask = padding_mask(src, self.cfg.pad_id)  # (batch, 1, 1, src_len)
        memory = self.encode_unchecked(src, src_mask)  # (batch, src_len, d_model)
        out = self.decode(tgt_in, memory, src_mask)  # (batch, tgt_len, d_model)
        logits = self.generator(out)  # (batch, tgt_len, tgt_vocab_size)
        return (logits, memory) if return_memory else logits

    def encode_unchecked(self, src: torch.Tensor, src_mask: torch.Tensor | None = None
                         ) -> torch.Tensor:
        """:meth:`encode` for inputs the caller checked."""
        if src_mask is None:  # the padding's keys are hidden
            src_mask = padding_mask(src, self.cfg.pad_id)  # (batch, 1, 1, src_len)
        x = self.positional(self.src_embed(src))  # (batch, src_len, d_model)
        return self.encoder(x, src_mask)  # (batch, src_len, d_model)

    def decode_unchecked(self, tgt_in: torch.Tensor, memory: torch.Tensor,
                         src_mask: torch.Tensor | None = None, cache: KVCache | None = None
                         ) -> torch.Tensor:
        """:meth:`decode` for inputs the caller checked."""
        past = cache.length if cache is not None else 0  # positions decoded before tgt_in
        if cache is not None and tgt_in.shape[1] == 1:
            tgt_mask = None  # one new position: every key is at or before it
        else:
            total = past + tgt_in.shape[1]
            tgt_mask = causal_mask(total, device=tgt_in.device)[past:]  # (tgt_len, past + tgt_len)
        y = self.positional(self.tgt_embed(tgt_in), start=past)  # (batch, tgt_len, d_model)
        return self.decoder(y, memory, src_mask, tgt_mask, cache=cache)  # (batch, tgt_len, d_model)


def check_model(name: str, model: object) -> None:
    """TypeError (also a ValueError) naming ``name`` unless ``model`` decodes like a
    :class:`Transformer`: the class itself, or an ``nn.Module`` with its ``cfg``
    (TransformerConfig), ``encode``, ``decode``, ``generator``, ``encode_unchecked``,
    ``decode_unchecked`` and ``supports_kv_cache`` of the same contract (the benchmarks wrap
    ``torch.nn.Transformer`` that way)."""
    if isinstance(model, Transformer):
        return
    if (isinstance(model, torch.nn.Module)
            and isinstance(getattr(model, "cfg", None), TransformerConfig)
            and isinstance(getattr(model, "supports_kv_cache", None), bool)
            and all(callable(getattr(model, method, None))
                    for method in ("encode", "decode", "generator", "encode_unchecked",
                                   "decode_unchecked"))):
        return
    check_instance(name, model, Transformer,
                   "an illustrated Transformer (or an nn.Module with its cfg, encode, decode, "
                   "generator, encode_unchecked, decode_unchecked and supports_kv_cache)")
