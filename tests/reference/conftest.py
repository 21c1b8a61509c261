"""Shared helpers for the reference tests: a seeded generator, and torch layers -> params.

torch is imported by the tests only, never by ``illustrated.reference``. Every torch weight of
an ``nn.Linear`` enters the reference functions transposed (``linear.weight.T``), because the
reference convention is ``x @ W + b`` with W of shape (in_features, out_features).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A detached float64 NumPy copy of a tensor."""
    return t.detach().to(torch.float64).numpy().copy()


def mha_params(mha: torch.nn.MultiheadAttention, prefix: str = "") -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O of an nn.MultiheadAttention (keys prefixed)."""
    W_q, W_k, W_v = mha.in_proj_weight.chunk(3, dim=0)  # each (d_model, d_model), (out, in)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3, dim=0)
    return {
        f"{prefix}W_Q": to_numpy(W_q.T), f"{prefix}W_K": to_numpy(W_k.T),
        f"{prefix}W_V": to_numpy(W_v.T), f"{prefix}W_O": to_numpy(mha.out_proj.weight.T),
        f"{prefix}b_Q": to_numpy(b_q), f"{prefix}b_K": to_numpy(b_k),
        f"{prefix}b_V": to_numpy(b_v), f"{prefix}b_O": to_numpy(mha.out_proj.bias),
    }


def ffn_and_norm_params(layer: torch.nn.Module, n_norms: int) -> dict[str, np.ndarray]:
    """W_1, b_1, W_2, b_2 and gamma_i, beta_i of a torch Transformer{En,De}coderLayer."""
    params = {"W_1": to_numpy(layer.linear1.weight.T), "b_1": to_numpy(layer.linear1.bias),
              "W_2": to_numpy(layer.linear2.weight.T), "b_2": to_numpy(layer.linear2.bias)}
    for i in range(1, n_norms + 1):
        norm = getattr(layer, f"norm{i}")
        params[f"gamma_{i}"] = to_numpy(norm.weight)
        params[f"beta_{i}"] = to_numpy(norm.bias)
    return params


def encoder_params(layer: torch.nn.TransformerEncoderLayer) -> dict[str, np.ndarray]:
    """The params Mapping of ``illustrated.reference.encoder_layer`` from a torch layer."""
    return mha_params(layer.self_attn) | ffn_and_norm_params(layer, n_norms=2)


def decoder_params(layer: torch.nn.TransformerDecoderLayer) -> dict[str, np.ndarray]:
    """The params Mapping of ``illustrated.reference.decoder_layer`` from a torch layer."""
    return (mha_params(layer.self_attn, "self_") | mha_params(layer.multihead_attn, "cross_")
            | ffn_and_norm_params(layer, n_norms=3))


def randomize_(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Fill every parameter with random values (biases and layer norms are not left at 0 / 1)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.5)
    return module


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded NumPy generator, fresh for each test."""
    return np.random.default_rng(0)


def torch_layer(cls, d_model: int, n_heads: int, d_ff: int, norm_first: bool,
                seed: int = 0) -> torch.nn.Module:
    """A float64 ``nn.TransformerEncoderLayer``/``DecoderLayer`` (``cls``) with random weights."""
    layer = cls(d_model, n_heads, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first,
                dtype=torch.float64)
    return randomize_(layer, seed)


@pytest.fixture
def from_torch() -> SimpleNamespace:
    """The torch -> reference converters above, as a fixture so any import mode finds them.

    ``from_torch.mha(module, prefix="")``, ``from_torch.encoder(layer)``,
    ``from_torch.decoder(layer)``, ``from_torch.randomize_(module, seed)``,
    ``from_torch.to_numpy(tensor)``, ``from_torch.layer(cls, d_model, n_heads, d_ff, norm_first,
    seed=0)``.
    """
    return SimpleNamespace(mha=mha_params, encoder=encoder_params, decoder=decoder_params,
                           randomize_=randomize_, to_numpy=to_numpy, layer=torch_layer)
