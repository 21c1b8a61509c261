"""The checks at the model's door: clear errors naming the argument, not deep torch tracebacks.

They run where a tensor enters: ``Transformer.encode``, ``decode`` and ``forward``, and a
MultiHeadAttention built on its own; the layers inside trust their inputs. Shape, dtype and
device checks read metadata only; two read values: token ids inside the vocabulary, and no mask
row that forbids every key (a sentence of padding only).
"""
from __future__ import annotations

import math

import torch

from .._args import (MAX_WEIGHTS, ArgumentTypeError, check_bool, check_choice, check_int,
                     check_real, check_size_limit, describe)
from ..config import TransformerConfig
from .kv_cache import check_cache

__all__ = ["check_features", "check_mask", "check_token_ids", "check_size",
           "check_dropout", "check_config", "check_attention_sizes", "check_attention_inputs",
           "check_layout", "check_positional_sizes", "check_sdpa_inputs", "check_source_ids",
           "check_source", "check_target", "check_pair", "param_count", "check_sizes"]


def _broadcasts_to(shape: tuple[int, ...], expected: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``expected`` without growing it (metadata only; the
    same answer as ``torch.broadcast_shapes(shape, expected) == expected``, without its cost)."""
    if len(shape) > len(expected):
        return False
    return all(m == 1 or m == e for m, e in zip(reversed(shape), reversed(expected)))


def _got(x: object) -> str:
    return describe(x) if isinstance(x, torch.Tensor) else f"{type(x).__name__} {describe(x)}"


def _check_like(name: str, x: torch.Tensor, like: torch.Tensor | None) -> None:
    if like is None:
        return
    if x.dtype != like.dtype:
        raise ArgumentTypeError(f"{name}: expected dtype {like.dtype} like the module's weights "
                                f"(convert with .to({like.dtype}) or the module with "
                                f".to(dtype)), got {x.dtype}")
    if x.device != like.device:
        raise ValueError(f"{name}: expected a tensor on {like.device} like the module's weights, "
                         f"got one on {x.device}")


def check_features(name: str, x: torch.Tensor, width: int, like: torch.Tensor | None = None,
                   *, any_leading: bool = False, finite: bool = True) -> None:
    """Raise unless ``x`` is a float tensor (batch, seq, width), batch and seq >= 1, or with
    ``any_leading`` (..., width); with ``finite``, of finite numbers (not checked on the meta
    device); with ``like`` (a weight of the module), of its dtype and device."""
    shape = f"(..., {width})" if any_leading else f"(batch, seq, d_model={width})"
    if not isinstance(x, torch.Tensor):
        raise ArgumentTypeError(f"{name}: expected a tensor of shape {shape}, got {_got(x)}")
    if x.dim() < 1 or x.shape[-1] != width or not any_leading and (x.dim() != 3 or 0 in x.shape):
        raise ValueError(f"{name}: expected shape {shape}" + ("" if any_leading else
                         " with batch and seq at least 1") + f", got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ArgumentTypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    _check_like(name, x, like)
    if finite and x.device.type != "meta" and not bool(torch.isfinite(x).all()):  # one read
        raise ValueError(f"{name}: expected finite numbers, got NaN or infinity")


def check_positional_sizes(d_model: object, max_len: object, layout: object,
                           dropout: object) -> None:
    """The arguments of ``PositionalEncoding(d_model, max_len, layout, dropout)``, checked."""
    check_size("d_model", d_model, even=True)
    check_size("max_len", max_len)
    check_size_limit("max_len", max_len * d_model, f"max_len x d_model = {max_len} x {d_model}")
    check_layout(layout)
    check_dropout(dropout)


def check_mask(mask: torch.Tensor | None, expected: tuple[int, ...], name: str = "mask",
               device: torch.device | None = None) -> None:
    """Raise unless ``mask`` is a bool tensor that broadcasts *to* ``expected`` (batch, n_heads,
    seq_q, seq_k), on ``device``, with no query row where every key is forbidden.

    "Broadcasts to" is one-way: (seq_q, seq_k), (batch, 1, 1, seq_k) and (batch, n_heads, seq_q,
    seq_k) fit; a mask for 3 sentences does not fit a batch of 1. A row with no key allowed
    would give NaN after the softmax, so it is rejected here.
    """
    if mask is None:
        return
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        got = f"dtype {mask.dtype}" if isinstance(mask, torch.Tensor) else _got(mask)
        raise ArgumentTypeError(f"{name}: expected a bool tensor (True = may attend), got {got}")
    if not _broadcasts_to(tuple(mask.shape), tuple(expected)):
        raise ValueError(
            f"{name}: expected a shape broadcastable to (batch, n_heads, seq_q, seq_k)="
            f"{tuple(expected)} without growing it, e.g. (seq_q, seq_k) or (batch, 1, 1, "
            f"seq_k), got {tuple(mask.shape)}")
    if device is not None and mask.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} like the inputs, got one on "
                         f"{mask.device}")
    if not bool(mask.any(dim=-1).all()):  # one read of the values
        raise ValueError(f"{name}: some query position may attend to no key at all "
                         "(a row of the mask is all False); its softmax would be NaN")


def check_token_ids(name: str, ids: torch.Tensor, vocab_size: int, max_len: int | None = None,
                    device: torch.device | None = None, vocabulary: str = "vocabulary") -> None:
    """Raise unless ``ids`` is an int64/int32 tensor (batch, seq), both >= 1, values in
    [0, vocab_size), seq <= ``max_len`` when given, on ``device`` when given. ``vocabulary``
    names it in the message (e.g. "source vocabulary")."""
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32):
        got = (f"shape {tuple(ids.shape)}, dtype {ids.dtype}" if isinstance(ids, torch.Tensor)
               else _got(ids))
        raise ArgumentTypeError(f"{name}: expected an int64 (or int32) tensor of token ids, "
                                f"shape (batch, seq), got {got}")
    if ids.dim() != 2 or 0 in ids.shape:
        raise ValueError(f"{name}: expected shape (batch, seq) with batch and seq at least 1, "
                         f"got {tuple(ids.shape)}")
    if max_len is not None and ids.shape[1] > max_len:
        raise ValueError(f"{name}: expected at most max_len={max_len} positions, got "
                         f"{ids.shape[1]}")
    if device is not None and ids.device != device:
        raise ValueError(f"{name}: expected a tensor on {device} like the model's weights, "
                         f"got one on {ids.device}")
    low, high = (int(v) for v in torch.aminmax(ids))  # one read of the values
    if low < 0 or high >= vocab_size:
        raise ValueError(f"{name}: token id {low if low < 0 else high} is outside the "
                         f"{vocabulary} [0, {vocab_size})")


def check_size(name: str, value: object, *, even: bool = False) -> int:
    """``value`` if it is a positive int (even when asked); ValueError/TypeError naming ``name``."""
    value = check_int(name, value, low=1)
    if even and value % 2:
        raise ValueError(f"{name}: expected an even number (sines and cosines come in pairs), "
                         f"got {value}")
    return value


def check_sizes(dropout: object = 0.0, **sizes: object) -> None:
    """Positive int ``sizes`` (by name) of one weight matrix: their product at most MAX_ELEMENTS;
    and a dropout rate in [0, 1)."""
    for name, value in sizes.items():
        check_size(name, value)
    check_size_limit(list(sizes)[-1], math.prod(sizes.values()), " x ".join(sizes))
    check_dropout(dropout)


def check_layout(layout: object) -> str:
    """``layout`` if it is "interleaved" or "concatenated" (the positional encoding layouts)."""
    return check_choice("layout", layout, ("interleaved", "concatenated"))


def check_dropout(value: object, name: str = "dropout") -> float:
    """``value`` if it is a finite rate in [0, 1)."""
    return check_real(name, value, low=0.0, high=1.0, high_open=True, what="a rate")


def param_count(cfg) -> int:
    """Number of weights a Transformer(cfg) has (embeddings, layers, norms, final linear)."""
    d, f = cfg.d_model, cfg.d_ff
    attention = 4 * (d * d + d)
    ffn = d * f + f + f * d + d
    encoder_layer = attention + ffn + 2 * 2 * d
    decoder_layer = 2 * attention + ffn + 3 * 2 * d
    final_norms = 2 * 2 * d if cfg.norm_first else 0
    return ((cfg.src_vocab_size + cfg.tgt_vocab_size) * d + cfg.n_layers * (encoder_layer
            + decoder_layer) + final_norms + cfg.tgt_vocab_size * (d + 1))


def check_config(cfg: object, whole_model: bool = False) -> None:
    """Raise TypeError (also a ValueError) unless ``cfg`` is a TransformerConfig; with
    ``whole_model``, ValueError if the model would exceed MAX_WEIGHTS weights."""
    if not isinstance(cfg, TransformerConfig):
        raise ArgumentTypeError(f"cfg: expected a TransformerConfig, got {_got(cfg)}")
    if whole_model and param_count(cfg) > MAX_WEIGHTS:
        raise ValueError(f"cfg: expected sizes giving at most {MAX_WEIGHTS} weights, got "
                         f"{param_count(cfg)}")
    check_size_limit("d_ff", cfg.d_model * cfg.d_ff, "d_model x d_ff")
    check_size_limit("d_model", cfg.d_model * cfg.d_model, "d_model x d_model")
    for name in ("src_vocab_size", "tgt_vocab_size"):
        check_size_limit(name, getattr(cfg, name) * cfg.d_model, f"{name} x d_model")
    check_size_limit("max_len", cfg.max_len * cfg.d_model, "max_len x d_model")


def check_attention_sizes(d_model: object, n_heads: object, dropout: object,
                          bias: object, standalone: object = True) -> None:
    """The arguments of ``MultiHeadAttention(d_model, n_heads, dropout, bias, standalone)``."""
    check_size("d_model", d_model)
    check_size_limit("d_model", d_model * d_model, "d_model x d_model")
    check_size("n_heads", n_heads)
    if d_model % n_heads != 0:
        raise ValueError(f"n_heads: expected a positive divisor of d_model={d_model}, "
                         f"got {n_heads}")
    check_dropout(dropout)
    check_bool("bias", bias)
    check_bool("standalone", standalone)


def check_attention_inputs(attention: torch.nn.Module, query: torch.Tensor, key: torch.Tensor,
                           value: torch.Tensor, mask: torch.Tensor | None,
                           cache=None) -> None:
    """The inputs of :meth:`MultiHeadAttention.forward`, checked (shapes, dtypes, mask); with
    a ``cache``, seq_k counts the keys it keeps too."""
    like = attention.w_q.weight
    check_features("query", query, attention.d_model, like)
    check_features("key", key, attention.d_model, like)
    check_features("value", value, attention.d_model, like)
    if value.shape[:2] != key.shape[:2] or key.shape[0] != query.shape[0]:
        raise ValueError(f"value: expected (batch, seq_k) = {tuple(key.shape[:2])} like key "
                         f"and batch {query.shape[0]} like query, got value "
                         f"{tuple(value.shape)}, key {tuple(key.shape)}")
    seq_k = key.shape[1] if cache is None or cache.k is None else (
        cache.k.shape[2] + (0 if cache.ready else key.shape[1]))
    check_mask(mask, (query.shape[0], attention.n_heads, query.shape[1], seq_k),
               device=query.device)


def check_sdpa_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      mask: torch.Tensor | None) -> None:
    """The inputs of :func:`scaled_dot_product_attention`: float tensors (..., seq, d) that fit."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            got = f"dtype {x.dtype}" if isinstance(x, torch.Tensor) else _got(x)
            raise ArgumentTypeError(f"{name}: expected a floating-point tensor, got {got}")
        if x.dim() < 2 or 0 in x.shape[-2:]:
            raise ValueError(f"{name}: expected shape (..., seq, d) with seq and d at least 1, "
                             f"got {tuple(x.shape)}")
        if x.dtype != q.dtype or x.device != q.device:
            raise ArgumentTypeError(f"{name}: expected dtype {q.dtype} on {q.device} like q, got "
                                    f"{x.dtype} on {x.device}")
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(f"k: expected d_k={q.shape[-1]} like q, got shape {tuple(k.shape)}")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v: expected seq_k={k.shape[-2]} like k, got shape {tuple(v.shape)}")
    try:
        leading = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(f"q, k, v: leading dimensions do not broadcast: q {tuple(q.shape)}, "
                         f"k {tuple(k.shape)}, v {tuple(v.shape)}") from None
    if mask is not None:
        check_mask(mask, (*leading, q.shape[-2], k.shape[-2]), device=q.device)


def check_source_ids(name: str, src: torch.Tensor, cfg: TransformerConfig,
                     device: torch.device | None = None, *, sentence: bool = False) -> None:
    """Raise unless ``src`` holds source token ids that the model ``cfg`` can read: a batch
    (batch, src_len) of int64/int32 ids, or with ``sentence=True`` one sentence (src_len,); at
    most ``cfg.max_len`` a sentence, inside the source vocabulary, on ``device`` when given,
    and no sentence of padding only (its every query would attend to no key). Messages name
    ``name``."""
    if sentence and src.numel() > cfg.max_len:
        raise ValueError(f"{name}: the sentence has {src.numel()} tokens, more than "
                         f"max_len={cfg.max_len}")
    check_token_ids(name, src[None] if sentence else src, cfg.src_vocab_size, cfg.max_len,
                    device, "source vocabulary")
    only_padding = (src == cfg.pad_id).all(dim=-1)  # (batch,), or () for one sentence
    if bool(only_padding.any()):  # one read of the values
        if sentence:
            raise ValueError(f"{name}: expected at least one token that is not padding "
                             f"(pad_id={cfg.pad_id}), got only padding")
        raise ValueError(f"{name}: sentence {int(only_padding.nonzero()[0])} is only padding "
                         f"(pad_id={cfg.pad_id}); expected at least one token that is not")


def check_source(model: torch.nn.Module, src: torch.Tensor,
                 src_mask: torch.Tensor | None) -> None:
    """Check a Transformer's ``src`` ids and ``src_mask`` (None: the padding mask, which
    :func:`check_source_ids` vouches for) for the encoder's self-attention."""
    cfg = model.cfg
    check_source_ids("src", src, cfg, model.generator.proj.weight.device)
    batch, src_len = src.shape
    check_mask(src_mask, (batch, cfg.n_heads, src_len, src_len), "src_mask", src.device)


def check_target(model: torch.nn.Module, tgt_in: torch.Tensor, memory: torch.Tensor,
                 src_mask: torch.Tensor | None, cache=None) -> None:
    """Check a Transformer's ``tgt_in`` ids, ``memory``, ``src_mask`` and KV ``cache`` (None,
    or a KVCache of ``cfg.n_layers`` for this batch with room for ``tgt_in``) for ``decode``."""
    cfg, weight = model.cfg, model.generator.proj.weight
    check_token_ids("tgt_in", tgt_in, cfg.tgt_vocab_size, cfg.max_len, weight.device,
                    "target vocabulary")
    if cache is not None:
        check_cache(cache, cfg.n_layers, tgt_in.shape[0], tgt_in.shape[1], cfg.max_len)
    # not read here: decoding calls decode at every step with the model's own memory, and
    # refuses NaN scores naming the model (a NaN memory comes from NaN weights)
    check_features("memory", memory, cfg.d_model, weight, finite=False)
    if memory.shape[0] != tgt_in.shape[0]:
        raise ValueError(f"memory: expected batch {tgt_in.shape[0]} like tgt_in, "
                         f"got {memory.shape[0]}")
    check_mask(src_mask, (tgt_in.shape[0], cfg.n_heads, tgt_in.shape[1], memory.shape[1]),
               "src_mask", weight.device)


def check_pair(model: torch.nn.Module, src: torch.Tensor, tgt_in: torch.Tensor,
               src_mask: torch.Tensor | None) -> None:
    """What ``Transformer.forward`` checks before it encodes: ``src`` and ``src_mask`` as
    :func:`check_source`, and a ``tgt_in`` of as many sentences; ``decode`` checks the rest."""
    check_source(model, src, src_mask)
    if isinstance(tgt_in, torch.Tensor) and tgt_in.dim() == 2 and tgt_in.shape[0] != src.shape[0]:
        raise ValueError(f"tgt_in: expected batch {src.shape[0]} like src, got shape "
                         f"{tuple(tgt_in.shape)}")
