"""Helpers shared by the encoder and the decoder: the expected shapes of their weights, how to
pick an attention layer's weights out of ``params``, and a random initialization."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["attention_shapes", "attention_weights", "ffn_and_norm_shapes", "init_attention",
           "init_ffn_and_norms"]


def attention_shapes(prefix: str, d_model: int) -> tuple[dict, dict]:
    """Expected shapes (and their names) of one attention layer's weights in ``params``."""
    shapes, layout = {}, {}
    for n in "QKVO":
        shapes[f"{prefix}W_{n}"] = (d_model, d_model)
        layout[f"{prefix}W_{n}"] = "(d_model, d_model)"
        shapes[f"{prefix}b_{n}"] = (d_model,)
        layout[f"{prefix}b_{n}"] = "(d_model,)"
    return shapes, layout


def ffn_and_norm_shapes(params: Mapping, d_model: int, n_norms: int) -> tuple[dict, dict]:
    """Expected shapes (and their names) of the feed-forward and layer-norm weights."""
    W_1_shape = np.shape(params["W_1"])
    if len(W_1_shape) != 2 or W_1_shape[0] != d_model:
        raise ValueError(f"params['W_1']: expected shape (d_model, d_ff) with x's "
                         f"d_model={d_model}, got {W_1_shape}")
    d_ff = W_1_shape[1]
    shapes = {"W_1": (d_model, d_ff), "b_1": (d_ff,), "W_2": (d_ff, d_model), "b_2": (d_model,)}
    layout = {"W_1": "(d_model, d_ff)", "b_1": "(d_ff,)", "W_2": "(d_ff, d_model)",
              "b_2": "(d_model,)"}
    for i in range(1, n_norms + 1):
        shapes[f"gamma_{i}"], layout[f"gamma_{i}"] = (d_model,), "(d_model,)"
        shapes[f"beta_{i}"], layout[f"beta_{i}"] = (d_model,), "(d_model,)"
    return shapes, layout


def attention_weights(params: Mapping[str, np.ndarray], prefix: str = "") -> dict:
    """The keyword arguments W_Q, ..., b_O of :func:`multi_head_attention` from ``params``."""
    return {f"{kind}_{n}": params[f"{prefix}{kind}_{n}"] for kind in ("W", "b") for n in "QKVO"}


def glorot(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """A (fan_in, fan_out) matrix drawn uniformly from +-sqrt(6 / (fan_in + fan_out))."""
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, size=(fan_in, fan_out))


def init_attention(rng: np.random.Generator, d_model: int, prefix: str = "") -> dict:
    """Glorot-uniform W_Q, W_K, W_V, W_O and zero biases, keys prefixed with ``prefix``."""
    params = {f"{prefix}W_{n}": glorot(rng, d_model, d_model) for n in "QKVO"}
    params |= {f"{prefix}b_{n}": np.zeros(d_model) for n in "QKVO"}
    return params


def init_ffn_and_norms(rng: np.random.Generator, d_model: int, d_ff: int, n_norms: int) -> dict:
    """Glorot-uniform W_1, W_2, zero biases, and ``n_norms`` identity layer norms."""
    params = {"W_1": glorot(rng, d_model, d_ff), "b_1": np.zeros(d_ff),
              "W_2": glorot(rng, d_ff, d_model), "b_2": np.zeros(d_model)}
    for i in range(1, n_norms + 1):
        params[f"gamma_{i}"], params[f"beta_{i}"] = np.ones(d_model), np.zeros(d_model)
    return params
