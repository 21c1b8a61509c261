"""The keys and values a decoder has already computed, kept from one decoding step to the next.

Decoding is auto-regressive (paper §3.1: the model consumes "the previously generated symbols as
additional input when generating the next"): step t feeds the decoder <bos> and the t - 1
tokens chosen so far. Masked self-attention (paper §3.2.3) lets position i see positions 0..i
only, so what the decoder computes for a position never changes once it is written: a step needs
only the new position's query, key and value, and the keys and values of the earlier positions,
kept from the steps before (a KV cache). The encoder-decoder attention's keys and values come
from the encoder's output alone, so they are computed once per source sentence.
Post "The Decoder Side" (the decoder's output fed back in at every step).
"""
from __future__ import annotations

import torch

from .._args import check_instance, check_int

__all__ = ["AttentionCache", "KVCache", "check_cache", "MAX_POSITIONS"]

#: The most positions a cache may be built to hold: far beyond any model's max_len, and a
#: buffer that size of one sentence, one head and d_k = 1 still fits in memory.
MAX_POSITIONS = 2**24


class AttentionCache:
    """What one attention keeps: its keys ``k`` and values ``v``, (batch, n_heads, seq_k, d_k),
    after W_K / W_V and split into heads; None before its first call.

    ``grows=True`` (masked self-attention): each call appends the new positions' keys and values.
    They are written in place into a buffer of ``capacity`` positions (more when needed: it
    doubles), and ``k``/``v`` are views of its first ``length`` positions, so a step copies only
    its new position, not the whole past (``torch.cat`` would). ``grows=False`` (encoder-decoder
    attention): the first call computes them from the encoder's output and later calls reuse
    them. Inference only for the buffer: while autograd records (grad enabled and inputs that
    require it) each append concatenates instead, as a view rewritten later would break backward.
    """

    def __init__(self, grows: bool, capacity: int = 0) -> None:
        self.grows = grows
        self.capacity = capacity
        self.length = 0  # positions held: the buffers' first ``length`` are filled
        self._k: torch.Tensor | None = None  # (batch, n_heads, room >= length, d_k)
        self._v: torch.Tensor | None = None

    @property
    def k(self) -> torch.Tensor | None:
        """The keys held, (batch, n_heads, length, d_k): a view of the buffer if it grows, else
        the keys themselves (a cross-attention reads them at every step: no view to make)."""
        return self._k if self._k is None or not self.grows else self._k.narrow(2, 0, self.length)

    @property
    def v(self) -> torch.Tensor | None:
        """The values held, (batch, n_heads, length, d_k), as :attr:`k`."""
        return self._v if self._v is None or not self.grows else self._v.narrow(2, 0, self.length)

    @property
    def ready(self) -> bool:
        """True when the keys and values need no computing: a filled cache that does not grow."""
        return self._k is not None and not self.grows

    def keys_values(self, attention, key: torch.Tensor, value: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Every key and value ``attention`` (a MultiHeadAttention) attends to, (batch, n_heads,
        seq_k, d_k) each: those kept, after ``key``/``value`` (batch, new, d_model) projected
        by its w_k/w_v and kept too (self-attention); once filled, a cross-attention's
        cache projects nothing."""
        if self.ready:
            return self.k, self.v  # (batch, n_heads, src_len, d_k) each
        k = attention.split_heads(attention.w_k(key))  # (batch, n_heads, new, d_k)
        v = attention.split_heads(attention.w_v(value))  # (batch, n_heads, new, d_k)
        return self.append(k, v)  # (batch, n_heads, past + new, d_k) each

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep the new keys and values (after the earlier ones if it grows); return them all."""
        new = k.shape[2]
        if self._k is None or not self.grows:
            self._k, self._v, self.length = k, v, new  # (batch, n_heads, new, d_k) each
            if self.grows:  # room for the next positions
                self._reserve(max(self.capacity, 2 * new))
            return self.k, self.v
        if torch.is_grad_enabled() and (k.requires_grad or v.requires_grad or
                                        self._k.requires_grad):
            self._k = torch.cat([self.k, k], dim=2)  # (batch, n_heads, past + new, d_k)
            self._v = torch.cat([self.v, v], dim=2)  # (batch, n_heads, past + new, d_k)
            self.length += new
            return self._k, self._v
        start, end = self.length, self.length + new
        if end > self._k.shape[2]:
            self._reserve(max(self.capacity, 2 * end))
        self._k.narrow(2, start, new).copy_(k)  # in place: (batch, n_heads, new, d_k)
        self._v.narrow(2, start, new).copy_(v)
        self.length = end
        return self._k.narrow(2, 0, end), self._v.narrow(2, 0, end)  # (batch, n_heads, end, d_k)

    def _reserve(self, room: int) -> None:
        """Move the keys and values held into buffers of ``room`` positions."""
        for name in ("_k", "_v"):
            held = getattr(self, name)[:, :, :self.length]  # (batch, n_heads, length, d_k)
            buffer = held.new_empty((held.shape[0], held.shape[1], room, held.shape[3]))
            buffer[:, :, :self.length] = held
            setattr(self, name, buffer)  # (batch, n_heads, room, d_k)

    def reorder(self, index: torch.Tensor) -> None:
        """Row j becomes the old row ``index[j]`` (int64 (n,)); only the filled positions move."""
        if self._k is None:
            return
        for name in ("_k", "_v"):
            old = getattr(self, name)
            held = old[:, :, :self.length]  # (batch, n_heads, length, d_k)
            if not self.grows or (torch.is_grad_enabled() and old.requires_grad):
                setattr(self, name, held.index_select(0, index))  # (n, n_heads, length, d_k)
                continue
            buffer = old.new_empty((index.shape[0], *old.shape[1:]))  # (n, n_heads, room, d_k)
            torch.index_select(held, 0, index, out=buffer[:, :, :self.length])
            setattr(self, name, buffer)


class KVCache:
    """The keys and values every decoder layer has computed for the positions decoded so far.

    ``KVCache(model.cfg.n_layers)``, empty, is handed to ``Transformer.decode(tgt_in, memory,
    src_mask, cache=cache)``; each call then feeds only the positions after ``cache.length``.
    ``layers[i]`` is layer i's pair ``(self_attn, cross_attn)`` of :class:`AttentionCache`: the
    self-attention's keys and values (batch, n_heads, length, d_k) grow by one position a step,
    written in place into buffers of ``capacity`` positions (a decoding function passes its
    ``max_len``; 0: as needed, doubling); the cross-attention's (batch, n_heads, src_len, d_k)
    are computed at the first call. ``reorder(index)`` keeps row ``index[j]`` of every tensor as
    row j (beam search follows the hypotheses it keeps, and expands one source to the beam).
    Raises TypeError (also a ValueError) if ``n_layers`` or ``capacity`` is not an int,
    ValueError if ``n_layers`` is below 1 or ``capacity`` outside [0, MAX_POSITIONS]; reorder:
    ValueError for an index that is not int64 (n,) of rows the cache holds. Paper §3.1, §3.2.3.
    """

    def __init__(self, n_layers: int, capacity: int = 0) -> None:
        check_int("n_layers", n_layers, low=1)
        check_int("capacity", capacity, low=0, high=MAX_POSITIONS, what="a number of positions")
        self.layers = [(AttentionCache(grows=True, capacity=capacity), AttentionCache(grows=False))
                       for _ in range(n_layers)]

    @property
    def length(self) -> int:
        """Positions decoded so far (the keys each self-attention holds)."""
        return self.layers[0][0].length

    @property
    def batch(self) -> int | None:
        """Sentences (or hypotheses) the cache holds; None while it is empty."""
        k = self.layers[0][0]._k
        return None if k is None else k.shape[0]

    def reorder(self, index: torch.Tensor) -> None:
        """Row j becomes the old row ``index[j]`` in every layer's keys and values (int64 (n,))."""
        check_index(index, self.batch)
        for pair in self.layers:
            for attention in pair:
                attention.reorder(index)


def check_cache(cache: object, n_layers: int, batch: int, new: int = 0,
                max_len: int | None = None) -> int:
    """Raise unless ``cache`` is a :class:`KVCache` of ``n_layers`` layers that can take ``new``
    more positions of ``batch`` sentences (within ``max_len`` if given); return its length."""
    check_instance("cache", cache, KVCache, "a KVCache (or None)")
    if len(cache.layers) != n_layers:
        raise ValueError(f"cache: expected a KVCache of n_layers={n_layers} layers, got "
                         f"{len(cache.layers)}")
    if cache.batch is not None and cache.batch != batch:
        raise ValueError(f"cache: expected the batch of tgt_in ({batch}), got a cache of "
                         f"{cache.batch} rows (reorder it to follow the hypotheses)")
    if max_len is not None and cache.length + new > max_len:
        raise ValueError(f"tgt_in: expected at most max_len={max_len} positions with the "
                         f"{cache.length} in the cache, got {new} more")
    return cache.length


def check_index(index: object, rows: int | None) -> None:
    """Raise unless ``index`` is an int64 tensor (n,), n >= 1, of rows in [0, rows) (any rows
    while the cache is empty)."""
    if not isinstance(index, torch.Tensor) or index.dtype != torch.int64 or index.dim() != 1 \
            or index.numel() == 0:
        got = (f"dtype {index.dtype}, shape {tuple(index.shape)}" if isinstance(index, torch.Tensor)
               else type(index).__name__)
        raise ValueError(f"index: expected an int64 tensor (n,) of rows, n >= 1, got {got}")
    if rows is not None:
        low, high = (int(v) for v in torch.aminmax(index))
        if low < 0 or high >= rows:
            raise ValueError(f"index: expected rows in [0, {rows}) (the rows the cache holds), "
                             f"got {low if low < 0 else high}")
