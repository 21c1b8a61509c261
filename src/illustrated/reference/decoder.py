"""One decoder: masked self-attention, encoder-decoder attention, feed-forward; each add & norm.

Weights come in a Mapping with the keys of :data:`DECODER_PARAM_KEYS`: the self-attention's
weights prefixed ``self_``, the encoder-decoder attention's prefixed ``cross_``.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from ._checks import (as_float_array, check_min_ndim, check_n_heads, check_param_shapes,
                      check_params, check_positive_int)
from .._args import check_size_limit
from ._params import (attention_shapes, attention_weights, ffn_and_norm_shapes,
                      init_attention, init_ffn_and_norms)
from ._checks import finite_result
from .feed_forward import feed_forward
from .multi_head import multi_head_attention
from .self_attention import AttentionResult
from .residual import add_and_norm, layer_norm

__all__ = ["DECODER_PARAM_KEYS", "DecoderLayerResult", "causal_mask", "decoder_layer",
           "init_decoder_params"]

DECODER_PARAM_KEYS = (
    *(f"self_{kind}_{n}" for kind in ("W", "b") for n in "QKVO"),  # masked self-attention
    *(f"cross_{kind}_{n}" for kind in ("W", "b") for n in "QKVO"),  # encoder-decoder attention
    "W_1", "b_1", "W_2", "b_2",  # feed-forward network
    "gamma_1", "beta_1", "gamma_2", "beta_2", "gamma_3", "beta_3",  # the three layer norms
)
"""The keys :func:`decoder_layer` needs in ``params``."""


class DecoderLayerResult(NamedTuple):
    """What one decoder computes, sub-layer by sub-layer."""

    self_attention: AttentionResult
    """The masked self-attention's steps (queries, keys and values from the decoder)."""
    z_self: np.ndarray
    """After masked self-attention and its add & norm, shape (..., tgt_len, d_model)."""
    cross_attention: AttentionResult
    """The encoder-decoder attention's steps (keys and values from the encoder's output)."""
    z_cross: np.ndarray
    """After encoder-decoder attention and its add & norm, shape (..., tgt_len, d_model)."""
    ffn: np.ndarray
    """The feed-forward network's output before its add & norm, shape (..., tgt_len, d_model)."""
    output: np.ndarray
    """After the feed-forward network and its add & norm, shape (..., tgt_len, d_model)."""


def causal_mask(size: int) -> np.ndarray:
    """Only allow attending to earlier positions: position i may attend to positions 0..i.

    Parameters
    ----------
    size: sequence length, at least 1.
    Returns
    -------
    bool, lower-triangular; True = may attend.
    Shapes
    ------
    (size, size).
    Raises
    ------
    ValueError if ``size`` is not a positive integer.
    References
    ----------
    Post "The Decoder Side" ("masking future positions (setting them to -inf)"); paper §3.2.3.
    """
    size = check_positive_int("size", size)
    check_size_limit("size", size * size, "size x size")
    return np.tril(np.ones((size, size), dtype=bool))  # (size, size)


@finite_result("x", "memory", "params")
def decoder_layer(x: object, memory: object, params: Mapping[str, object], n_heads: int,
                  src_mask: object = None, tgt_mask: object = None, norm_first: bool = False,
                  eps: float = 1e-5) -> DecoderLayerResult:
    """One decoder: masked self-attention, then encoder-decoder attention, then feed-forward.

    The encoder-decoder attention "creates its Queries matrix from the layer below it, and takes
    the Keys and Values matrix from the output of the encoder stack". Post-LN (default, as the
    paper and torch's ``TransformerDecoderLayer``)::

        z_self  = LayerNorm_1(x + SelfAttention(x, tgt_mask))
        z_cross = LayerNorm_2(z_self + CrossAttention(z_self, memory, src_mask))
        output  = LayerNorm_3(z_cross + FFN(z_cross))

    Pre-LN (``norm_first=True``) normalizes each sub-layer's input instead, e.g.
    ``z_self = x + SelfAttention(LayerNorm_1(x))``; ``memory`` itself is not normalized.

    Parameters
    ----------
    x: embedded output words so far plus positions, or the previous decoder's output; memory:
    the encoder stack's output; params: weights under the keys of :data:`DECODER_PARAM_KEYS`;
    src_mask: e.g. source padding (batch, 1, 1, src_len); tgt_mask: None means no mask, so pass
    ``causal_mask(tgt_len)``. Masks: True = may attend.
    Returns
    -------
    DecoderLayerResult(self_attention, z_self, cross_attention, z_cross, ffn, output).
    Shapes
    ------
    x (..., tgt_len, d_model); memory (..., src_len, d_model); src_mask broadcastable to
    (..., n_heads, tgt_len, src_len), tgt_mask to (..., n_heads, tgt_len, tgt_len); attention
    matrices (d_model, d_model); W_1 (d_model, d_ff); W_2 (d_ff, d_model); vectors (d_model,)
    except b_1 (d_ff,); z_self, z_cross, ffn, output (..., tgt_len, d_model).
    Raises
    ------
    ValueError if a key is missing from ``params`` (named), a weight has the wrong shape,
    ``memory``'s d_model differs from ``x``'s, ``n_heads`` does not divide d_model, or a mask
    does not fit.
    References
    ----------
    Post "The Decoder Side", "The Residuals"; paper §3.1 (decoder stack), §3.2.3, §3.3 Eq. 2.
    """
    check_params(params, DECODER_PARAM_KEYS, "decoder_layer")
    x, memory = as_float_array("x", x), as_float_array("memory", memory)
    check_min_ndim("x", x, 2, "(..., tgt_len, d_model)")
    d_model = x.shape[-1]
    check_min_ndim("memory", memory, 2, f"(..., src_len, d_model={d_model})")
    if memory.shape[-1] != d_model:
        raise ValueError(f"memory: expected shape (..., src_len, {d_model}) to match x's "
                         f"d_model={d_model}, got {memory.shape}")
    n_heads = check_n_heads(n_heads, d_model)
    self_shapes, self_layout = attention_shapes("self_", d_model)
    cross_shapes, cross_layout = attention_shapes("cross_", d_model)
    ffn_shapes, ffn_layout = ffn_and_norm_shapes(params, d_model, n_norms=3)
    p = check_param_shapes(params, self_shapes | cross_shapes | ffn_shapes,
                           self_layout | cross_layout | ffn_layout)
    self_weights = attention_weights(p, "self_")
    cross_weights = attention_weights(p, "cross_")

    if not norm_first:  # post-LN: LayerNorm(x + Sublayer(x))
        self_attention = multi_head_attention(x, x, x, **self_weights, n_heads=n_heads,
                                              mask=tgt_mask)
        z_self = add_and_norm(x, self_attention.output, p["gamma_1"], p["beta_1"], eps)
        cross_attention = multi_head_attention(z_self, memory, memory, **cross_weights,
                                               n_heads=n_heads, mask=src_mask)
        z_cross = add_and_norm(z_self, cross_attention.output, p["gamma_2"], p["beta_2"], eps)
        ffn = feed_forward(z_cross, p["W_1"], p["b_1"], p["W_2"], p["b_2"])
        output = add_and_norm(z_cross, ffn, p["gamma_3"], p["beta_3"], eps)
    else:  # pre-LN: x + Sublayer(LayerNorm(x))
        h = layer_norm(x, p["gamma_1"], p["beta_1"], eps)
        self_attention = multi_head_attention(h, h, h, **self_weights, n_heads=n_heads,
                                              mask=tgt_mask)
        z_self = x + self_attention.output
        h = layer_norm(z_self, p["gamma_2"], p["beta_2"], eps)
        cross_attention = multi_head_attention(h, memory, memory, **cross_weights,
                                               n_heads=n_heads, mask=src_mask)
        z_cross = z_self + cross_attention.output
        ffn = feed_forward(layer_norm(z_cross, p["gamma_3"], p["beta_3"], eps),
                           p["W_1"], p["b_1"], p["W_2"], p["b_2"])
        output = z_cross + ffn
    return DecoderLayerResult(self_attention, z_self, cross_attention, z_cross, ffn, output)


def init_decoder_params(d_model: int, d_ff: int, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Randomly initialized weights for :func:`decoder_layer`, as in an untrained model.

    Parameters
    ----------
    As :func:`init_encoder_params`, drawn the same way.
    Returns
    -------
    One array per key of :data:`DECODER_PARAM_KEYS`: a second attention (``cross_``) and a third
    layer norm beside the encoder layer's.
    Shapes
    ------
    As in :func:`decoder_layer`.
    Raises
    ------
    As :func:`init_encoder_params`.
    References
    ----------
    Post "Recap Of Training"; paper §3.1 (the decoder layer's third sub-layer).
    """
    d_model = check_positive_int("d_model", d_model)
    d_ff = check_positive_int("d_ff", d_ff)
    check_size_limit("d_ff", d_model * (d_model + d_ff), "d_model x (d_model + d_ff)")
    rng = np.random.default_rng(seed)
    return (init_attention(rng, d_model, "self_") | init_attention(rng, d_model, "cross_")
            | init_ffn_and_norms(rng, d_model, d_ff, n_norms=3))
