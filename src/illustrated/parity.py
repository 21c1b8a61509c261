"""Bridges from the PyTorch modules to the NumPy reference: a module's weights as a params dict.

The reference functions take weights as (in_features, out_features) matrices applied as
``x @ W + b``; an ``nn.Linear`` stores (out_features, in_features), so every weight is transposed.
Used by the parity tests and by chapters that redo a module's computation by hand.
"""
from __future__ import annotations

import numpy as np

from ._numpy import to_numpy
from .modules import DecoderLayer, EncoderLayer, MultiHeadAttention

__all__ = ["to_numpy", "attention_params", "encoder_layer_params", "decoder_layer_params"]


def attention_params(mha: MultiHeadAttention, prefix: str = "") -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O (d_model, d_model) and b_Q, b_K, b_V, b_O (d_model,) of our attention.

    Keys are prefixed with ``prefix`` (e.g. "self_", "cross_" for decoder layers).
    """
    params = {}
    for name, linear in (("Q", mha.w_q), ("K", mha.w_k), ("V", mha.w_v), ("O", mha.w_o)):
        params[f"{prefix}W_{name}"] = to_numpy(linear.weight.T)
        params[f"{prefix}b_{name}"] = (to_numpy(linear.bias) if linear.bias is not None
                                       else np.zeros(linear.out_features))
    return params


def _ffn_and_norms(layer: EncoderLayer | DecoderLayer, n_norms: int) -> dict[str, np.ndarray]:
    ffn = layer.feed_forward
    params = {"W_1": to_numpy(ffn.linear1.weight.T), "b_1": to_numpy(ffn.linear1.bias),
              "W_2": to_numpy(ffn.linear2.weight.T), "b_2": to_numpy(ffn.linear2.bias)}
    for i in range(1, n_norms + 1):
        norm = getattr(layer, f"norm{i}")
        params[f"gamma_{i}"], params[f"beta_{i}"] = to_numpy(norm.weight), to_numpy(norm.bias)
    return params


def encoder_layer_params(layer: EncoderLayer) -> dict[str, np.ndarray]:
    """The params Mapping of :func:`illustrated.reference.encoder_layer` for one of our layers."""
    return attention_params(layer.self_attn) | _ffn_and_norms(layer, 2)


def decoder_layer_params(layer: DecoderLayer) -> dict[str, np.ndarray]:
    """The params Mapping of :func:`illustrated.reference.decoder_layer` for one of our layers."""
    return (attention_params(layer.self_attn, "self_") | attention_params(layer.cross_attn, "cross_")
            | _ffn_and_norms(layer, 3))
