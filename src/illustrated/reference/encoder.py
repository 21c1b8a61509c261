"""One encoder: a self-attention layer, then a feed-forward network, each with add & norm.

Weights come in a Mapping with the keys of :data:`ENCODER_PARAM_KEYS`; every matrix is
(in_features, out_features), applied as ``x @ W + b``.
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

__all__ = ["ENCODER_PARAM_KEYS", "EncoderLayerResult", "encoder_layer", "init_encoder_params"]

ENCODER_PARAM_KEYS = (
    "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O",  # self-attention
    "W_1", "b_1", "W_2", "b_2",  # feed-forward network
    "gamma_1", "beta_1", "gamma_2", "beta_2",  # the two layer norms
)
"""The keys :func:`encoder_layer` needs in ``params``."""


class EncoderLayerResult(NamedTuple):
    """What one encoder computes, in the order the post draws it."""

    attention: AttentionResult
    """The self-attention layer's steps; ``attention.output`` is its Z before add & norm."""
    z: np.ndarray
    """After self-attention and its add & norm, shape (..., seq, d_model)."""
    ffn: np.ndarray
    """The feed-forward network's output before its add & norm, shape (..., seq, d_model)."""
    output: np.ndarray
    """After the feed-forward network and its add & norm, shape (..., seq, d_model)."""


@finite_result("x", "params")
def encoder_layer(x: object, params: Mapping[str, object], n_heads: int, mask: object = None,
                  norm_first: bool = False, eps: float = 1e-5) -> EncoderLayerResult:
    """One encoder: a self-attention layer, then a feed-forward network, each with add & norm.

    Post-LN (the paper and the post, default): ``z = LayerNorm_1(x + MultiHead(x, x, x))``,
    ``output = LayerNorm_2(z + FFN(z))``. Pre-LN (``norm_first=True``, a deviation many later
    models use): ``z = x + MultiHead(h, h, h)`` with ``h = LayerNorm_1(x)``,
    ``output = z + FFN(LayerNorm_2(z))``.

    Parameters
    ----------
    x: embeddings plus positions, or the previous encoder's output; params: weights under the
    keys of :data:`ENCODER_PARAM_KEYS`; mask: True where a position may attend, e.g. padding
    (batch, 1, 1, seq); eps: layer norm's epsilon.
    Returns
    -------
    EncoderLayerResult(attention (an AttentionResult), z, ffn, output).
    Shapes
    ------
    x (..., seq, d_model); W_Q, W_K, W_V, W_O (d_model, d_model); W_1 (d_model, d_ff); b_1 (d_ff,);
    W_2 (d_ff, d_model); other b_*, gamma_*, beta_* (d_model,); mask broadcastable to
    (..., n_heads, seq, seq); z, ffn, output (..., seq, d_model).
    Raises
    ------
    ValueError if a key is missing from ``params`` (named), a weight has the wrong shape,
    ``n_heads`` does not divide d_model, or ``mask`` does not fit.
    References
    ----------
    Post "Now We're Encoding!", "The Residuals"; paper §3.1 (encoder stack), §3.2.2, §3.3 Eq. 2.
    """
    check_params(params, ENCODER_PARAM_KEYS, "encoder_layer")
    x = as_float_array("x", x)
    check_min_ndim("x", x, 2, "(..., seq, d_model)")
    d_model = x.shape[-1]
    n_heads = check_n_heads(n_heads, d_model)
    attn_shapes, attn_layout = attention_shapes("", d_model)
    ffn_shapes, ffn_layout = ffn_and_norm_shapes(params, d_model, n_norms=2)
    p = check_param_shapes(params, attn_shapes | ffn_shapes, attn_layout | ffn_layout)
    attn_weights = attention_weights(p)

    if not norm_first:  # post-LN: LayerNorm(x + Sublayer(x))
        attention = multi_head_attention(x, x, x, **attn_weights, n_heads=n_heads, mask=mask)
        z = add_and_norm(x, attention.output, p["gamma_1"], p["beta_1"], eps)
        ffn = feed_forward(z, p["W_1"], p["b_1"], p["W_2"], p["b_2"])
        output = add_and_norm(z, ffn, p["gamma_2"], p["beta_2"], eps)
    else:  # pre-LN: x + Sublayer(LayerNorm(x))
        h = layer_norm(x, p["gamma_1"], p["beta_1"], eps)
        attention = multi_head_attention(h, h, h, **attn_weights, n_heads=n_heads, mask=mask)
        z = x + attention.output
        ffn = feed_forward(layer_norm(z, p["gamma_2"], p["beta_2"], eps),
                           p["W_1"], p["b_1"], p["W_2"], p["b_2"])
        output = z + ffn
    return EncoderLayerResult(attention, z, ffn, output)


def init_encoder_params(d_model: int, d_ff: int, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Randomly initialized weights for :func:`encoder_layer`, as in an untrained model.

    Glorot-uniform matrices, zero biases, layer norms the identity (gamma ones, beta zeros).

    Parameters
    ----------
    d_model, d_ff: 512 and 2048 in the paper; seed: of the NumPy random generator.
    Returns
    -------
    One array per key of :data:`ENCODER_PARAM_KEYS`.
    Shapes
    ------
    As in :func:`encoder_layer`.
    Raises
    ------
    ValueError if ``d_model`` or ``d_ff`` is not a positive integer.
    References
    ----------
    Post "Recap Of Training" ("the model's parameters (weights) are all initialized randomly").
    """
    d_model = check_positive_int("d_model", d_model)
    d_ff = check_positive_int("d_ff", d_ff)
    check_size_limit("d_ff", d_model * (d_model + d_ff), "d_model x (d_model + d_ff)")
    rng = np.random.default_rng(seed)
    return init_attention(rng, d_model) | init_ffn_and_norms(rng, d_model, d_ff, n_norms=2)
