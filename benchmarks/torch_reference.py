"""torch.nn.Transformer dressed as an illustrated.modules.Transformer, for side-by-side benchmarks.

Same embeddings, positions and final linear as ours; the encoder and decoder stacks are PyTorch's
own (with their final LayerNorms, as nn.Transformer has them). It has ``cfg``, ``encode``,
``decode``, ``generator`` and ``forward``, so ``il.train``, ``il.translate`` and ``il.evaluate``
run on it unchanged.
"""
from __future__ import annotations

import torch
from torch import nn

import illustrated as il
from illustrated.modules import Embeddings, Generator, PositionalEncoding


class TorchTransformer(nn.Module):
    """nn.Transformer with our embeddings, positions and generator (see the module docstring)."""

    def __init__(self, cfg: il.TransformerConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.src_embed = Embeddings(cfg.src_vocab_size, cfg.d_model)
        self.tgt_embed = Embeddings(cfg.tgt_vocab_size, cfg.d_model)
        self.positional = PositionalEncoding(cfg.d_model, cfg.max_len, cfg.pe_layout)
        self.core = nn.Transformer(cfg.d_model, cfg.n_heads, cfg.n_layers, cfg.n_layers, cfg.d_ff,
                                   dropout=cfg.dropout, batch_first=True, norm_first=cfg.norm_first)
        self.generator = Generator(cfg.d_model, cfg.tgt_vocab_size)
        for p in self.parameters():  # the same Glorot initialisation as ours
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    @staticmethod
    def _key_padding(src: torch.Tensor, pad_id: int, src_mask=None) -> torch.Tensor:
        if src_mask is not None:  # ours: (batch, 1, 1, src_len), True = may attend
            return ~src_mask[:, 0, 0, :]
        return src == pad_id  # torch: True = ignore

    supports_kv_cache = False  # torch's decoder keeps no KV cache of ours

    def encode(self, src, src_mask=None):
        pad = self._key_padding(src, self.cfg.pad_id, src_mask)
        x = self.positional(self.src_embed(src))
        return self.core.encoder(x, src_key_padding_mask=pad)

    def decode(self, tgt_in, memory, src_mask=None):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1], device=tgt_in.device)
        pad = None if src_mask is None else ~src_mask[:, 0, 0, :]
        y = self.positional(self.tgt_embed(tgt_in))
        return self.core.decoder(y, memory, tgt_mask=causal, tgt_is_causal=True,
                                 memory_key_padding_mask=pad)

    # no checks of ours at either door: the unchecked entry points are the same
    encode_unchecked = encode

    def decode_unchecked(self, tgt_in, memory, src_mask=None, cache=None):
        return self.decode(tgt_in, memory, src_mask)

    def forward(self, src, tgt_in, src_mask=None, *, return_memory=False):
        if src_mask is None:
            src_mask = (src != self.cfg.pad_id)[:, None, None, :]
        memory = self.encode(src, src_mask)
        logits = self.generator(self.decode(tgt_in, memory, src_mask))
        return (logits, memory) if return_memory else logits
