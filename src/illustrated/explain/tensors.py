"""The tensors behind chapters 01-02: parameter counts, embeddings, one encoder layer step by step.

Every function returns NumPy arrays (float64) and labels for :mod:`illustrated.plots.vectors`
and :mod:`illustrated.plots.diagrams`. The encoder is followed with the NumPy reference
(:func:`illustrated.reference.encoder_layer`), whose weights can be copied to and from the
PyTorch :class:`illustrated.modules.EncoderLayer`, so a chapter can check one against the other.

References: post "A High-Level Look", "Bringing The Tensors Into The Picture" and "Now We're
Encoding!"; paper §3.1, §3.3 (Eq. 2) and §3.4.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import torch

from .. import reference
from ..config import TINY, TransformerConfig
from ..data import Vocab
from ..display_explain import format_parameter_table
from ..modules import EncoderLayer, Transformer
from ..parity import encoder_layer_params
from ..tracing import Trace, trace
from ._checks import check_model, check_vocab, encode_sentence

__all__ = ["ParameterRow", "parameter_counts", "config_parameter_counts", "format_parameter_table",
           "SentenceEmbedding", "embed_sentence", "encoder_params_from_layer",
           "encoder_layer_from_params", "EncoderTensors", "follow_encoder_layer",
           "trained_encoder_layer", "thinking_machines_encoder", "Perturbation",
           "perturbation_effect"]


# --------------------------------------------------------------------------- parameter counts

class ParameterRow(NamedTuple):
    """One line of a parameter table: a component, how many weights one copy has, how many copies."""

    component: str
    """Where it sits, e.g. "encoder" or "source embeddings"."""
    part: str
    """Which sub-layer, e.g. "self-attention"; empty for a component without parts."""
    per_copy: int
    """Number of weights (parameters) in one copy."""
    copies: int
    """How many copies the model holds (n_layers for a layer's parts, 1 otherwise)."""

    @property
    def total(self) -> int:
        """``per_copy * copies``."""
        return self.per_copy * self.copies


def _numel(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def parameter_counts(model: Transformer) -> list[ParameterRow]:
    """How many weights each component of the model holds: embeddings, encoder and decoder
    sub-layers, final linear.

    Parameters
    ----------
    model : illustrated.modules.Transformer
        Any Transformer, trained or not (a model on the ``meta`` device works too).

    Returns
    -------
    list[ParameterRow]
        Rows in the order the data flows: source embeddings, positional encoding (0: fixed
        sinusoids), the encoder layer's self-attention, feed-forward and layer norms, target
        embeddings, the decoder layer's self-attention, encoder-decoder attention, feed-forward
        and layer norms, the final linear layer. ``sum(row.total)`` equals the model's
        parameter count.

    Shapes
    ------
    Not applicable (counts).

    Raises
    ------
    ValueError
        If ``model`` is not an :class:`illustrated.modules.Transformer`.

    References
    ----------
    Post "A High-Level Look" (identical layers that do not share weights); paper §3.1, §3.4,
    Table 3 (65M parameters for the base model, with shared embeddings).
    """
    if not isinstance(model, Transformer):
        raise ValueError(f"model: expected an illustrated.modules.Transformer, "
                         f"got {type(model).__name__}")
    n = model.cfg.n_layers
    enc, dec = model.encoder.layers[0], model.decoder.layers[0]
    rows = [
        ParameterRow("source embeddings", "", _numel(model.src_embed), 1),
        ParameterRow("positional encoding", "(fixed sinusoids)", _numel(model.positional), 1),
        ParameterRow("encoder", "self-attention", _numel(enc.self_attn), n),
        ParameterRow("encoder", "feed-forward", _numel(enc.feed_forward), n),
        ParameterRow("encoder", "layer norms", _numel(enc.norm1) + _numel(enc.norm2), n),
        ParameterRow("target embeddings", "", _numel(model.tgt_embed), 1),
        ParameterRow("decoder", "self-attention", _numel(dec.self_attn), n),
        ParameterRow("decoder", "encoder-decoder attention", _numel(dec.cross_attn), n),
        ParameterRow("decoder", "feed-forward", _numel(dec.feed_forward), n),
        ParameterRow("decoder", "layer norms",
                     _numel(dec.norm1) + _numel(dec.norm2) + _numel(dec.norm3), n),
        ParameterRow("final linear", "", _numel(model.generator), 1),
    ]
    extra = _numel(model.encoder.norm) + _numel(model.decoder.norm)  # pre-LN's final norms
    if extra:
        rows.append(ParameterRow("final layer norms", "(pre-LN only)", extra, 1))
    return rows


def config_parameter_counts(cfg: TransformerConfig) -> list[ParameterRow]:
    """The parameter table of an untrained model of configuration ``cfg``, without allocating its weights.

    The model is built on PyTorch's ``meta`` device (shapes only), so the paper's base model
    (about 10^8 weights with separate embeddings) costs no memory or time.

    Parameters
    ----------
    cfg : TransformerConfig
        E.g. ``dataclasses.replace(il.PAPER_BASE, src_vocab_size=37000, tgt_vocab_size=37000)``.

    Returns
    -------
    list[ParameterRow]
        As :func:`parameter_counts`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``cfg`` is not a TransformerConfig.

    References
    ----------
    Paper Table 3 (base model: N = 6, d_model = 512, d_ff = 2048, h = 8).
    """
    if not isinstance(cfg, TransformerConfig):
        raise ValueError(f"cfg: expected a TransformerConfig, got {type(cfg).__name__}")
    with torch.device("meta"):
        model = Transformer(cfg)
    return parameter_counts(model)


# --------------------------------------------------------------------------- embeddings

class SentenceEmbedding(NamedTuple):
    """A sentence on its way into the bottom encoder."""

    words: list[str]
    """The source words (tokens), one per position."""
    ids: np.ndarray
    """Their vocabulary ids, shape (seq,)."""
    lookup: np.ndarray
    """The rows of the embedding table, shape (seq, d_model)."""
    embeddings: np.ndarray
    """``lookup * sqrt(d_model)``: what the Embeddings module returns, shape (seq, d_model)."""
    positional: np.ndarray
    """The positional encodings added to them, shape (seq, d_model)."""
    x: np.ndarray
    """``embeddings + positional``: the bottom encoder's input, shape (seq, d_model)."""


def embed_sentence(model: Transformer, src_vocab: Vocab, sentence: str) -> SentenceEmbedding:
    """Turn each word of a sentence into a vector with a trained model's embedding table, then add positions.

    Parameters
    ----------
    model : illustrated.modules.Transformer
        A (trained) model; the vectors are selected from :func:`illustrated.trace`.
    src_vocab : illustrated.data.Vocab
        The model's source vocabulary.
    sentence : str
        A source sentence; unknown words become ``<unk>``.

    Returns
    -------
    SentenceEmbedding
        Named fields ``words``, ``ids``, ``lookup``, ``embeddings``, ``positional``, ``x``.

    Shapes
    ------
    ``ids`` (seq,); every other array (seq, d_model).

    Raises
    ------
    ValueError
        If the model or vocabulary has the wrong type or size, or the sentence is empty or
        longer than ``cfg.max_len``.

    References
    ----------
    Post "Bringing The Tensors Into The Picture"; paper §3.4 (embeddings times sqrt(d_model))
    and §3.5 (positional encodings added at the bottom of the stacks).
    """
    check_vocab("src_vocab", src_vocab, check_model(model).cfg.src_vocab_size)
    ids = encode_sentence(src_vocab, sentence, allow_unk=True)
    if len(ids) > model.cfg.max_len:
        raise ValueError(f"sentence: {len(ids)} tokens, more than max_len={model.cfg.max_len}")
    return _embedding(trace(model, ids, src_vocab=src_vocab))  # the encoder side only


def _embedding(t: Trace) -> SentenceEmbedding:
    return SentenceEmbedding(t.source_tokens, np.array(t.source_ids), t.src_lookup,
                             t.src_embeddings, t.src_positions, t.encoder_input)


# --------------------------------------------------------------------------- one encoder layer

def encoder_params_from_layer(layer: EncoderLayer) -> dict[str, np.ndarray]:
    """Copy a PyTorch encoder layer's weights into the NumPy reference's layout (``x @ W + b``).

    Parameters
    ----------
    layer : illustrated.modules.EncoderLayer

    Returns
    -------
    dict[str, numpy.ndarray]
        float64 arrays under :data:`illustrated.reference.ENCODER_PARAM_KEYS`; each
        ``nn.Linear`` weight enters transposed.

    Shapes
    ------
    ``W_Q``.. ``W_O`` (d_model, d_model); ``W_1`` (d_model, d_ff); ``W_2`` (d_ff, d_model);
    biases and norms (d_model,) or (d_ff,).

    Raises
    ------
    ValueError
        If ``layer`` is not an EncoderLayer.

    References
    ----------
    Post "Now We're Encoding!"; paper §3.1.
    """
    if not isinstance(layer, EncoderLayer):
        raise ValueError(f"layer: expected an illustrated.modules.EncoderLayer, "
                         f"got {type(layer).__name__}")
    return encoder_layer_params(layer)


def encoder_layer_from_params(params: Mapping[str, object], n_heads: int, *,
                              norm_first: bool = False) -> EncoderLayer:
    """A float64 PyTorch EncoderLayer holding the given reference weights (the reverse copy).

    Parameters
    ----------
    params : Mapping[str, array_like]
        Weights under :data:`illustrated.reference.ENCODER_PARAM_KEYS` (e.g. from
        :func:`illustrated.reference.init_encoder_params`).
    n_heads : int
        Number of heads; must divide d_model.
    norm_first : bool, default False
        Pre-LN instead of the paper's post-LN.

    Returns
    -------
    illustrated.modules.EncoderLayer
        In eval mode, dtype float64, dropout 0.

    Shapes
    ------
    As :func:`encoder_params_from_layer`.

    Raises
    ------
    ValueError
        If a key is missing, a weight's shape is wrong, or ``n_heads`` does not divide d_model.

    References
    ----------
    Post "Now We're Encoding!"; paper §3.1.
    """
    missing = [k for k in reference.ENCODER_PARAM_KEYS if k not in params]
    if missing:
        raise ValueError(f"params: expected the keys of ENCODER_PARAM_KEYS, missing {missing}")
    W_1 = np.asarray(params["W_1"], dtype=np.float64)
    if W_1.ndim != 2:
        raise ValueError(f"params['W_1']: expected shape (d_model, d_ff), got {W_1.shape}")
    d_model, d_ff = W_1.shape
    if not isinstance(n_heads, int) or n_heads < 1 or d_model % n_heads:
        raise ValueError(f"n_heads: expected a positive divisor of d_model={d_model}, "
                         f"got {n_heads!r}")
    cfg = replace(TINY, d_model=d_model, n_heads=n_heads, d_ff=d_ff, dropout=0.0,
                  norm_first=norm_first)
    layer = EncoderLayer(cfg).double().eval()
    attn, ffn = layer.self_attn, layer.feed_forward
    targets = {f"W_{n}": (lin.weight, True) for n, lin in
               zip("QKVO", (attn.w_q, attn.w_k, attn.w_v, attn.w_o))}
    targets |= {f"b_{n}": (lin.bias, False) for n, lin in
                zip("QKVO", (attn.w_q, attn.w_k, attn.w_v, attn.w_o))}
    targets |= {"W_1": (ffn.linear1.weight, True), "b_1": (ffn.linear1.bias, False),
                "W_2": (ffn.linear2.weight, True), "b_2": (ffn.linear2.bias, False),
                "gamma_1": (layer.norm1.weight, False), "beta_1": (layer.norm1.bias, False),
                "gamma_2": (layer.norm2.weight, False), "beta_2": (layer.norm2.bias, False)}
    with torch.no_grad():
        for key, (tensor, transposed) in targets.items():
            value = torch.as_tensor(np.asarray(params[key], dtype=np.float64))
            value = value.T if transposed else value  # nn.Linear stores (out, in)
            if value.shape != tensor.shape:
                expected = tuple(tensor.T.shape) if transposed else tuple(tensor.shape)
                raise ValueError(f"params[{key!r}]: expected shape {expected}, "
                                 f"got {tuple(np.shape(params[key]))}")
            tensor.copy_(value)
    return layer


class EncoderTensors(NamedTuple):
    """Every vector list of one encoder layer, in the order the post draws them."""

    x: np.ndarray
    """The layer's input, one vector per position, shape (seq, d_model)."""
    weights: np.ndarray
    """Self-attention weights of each head, shape (n_heads, seq, seq)."""
    attention: np.ndarray
    """The self-attention layer's raw output (multi-head Z times W_O), shape (seq, d_model)."""
    z: np.ndarray
    """After self-attention and its add & norm: what the feed-forward network receives, (seq, d_model)."""
    ffn: np.ndarray
    """The feed-forward network's raw output, shape (seq, d_model)."""
    r: np.ndarray
    """After the feed-forward network and its add & norm: the layer's output, (seq, d_model)."""


def follow_encoder_layer(x: object, params: Mapping[str, object], n_heads: int) -> EncoderTensors:
    """Follow a list of vectors through one encoder: into self-attention (x → z), then the
    feed-forward network (z → r).

    Parameters
    ----------
    x : array_like
        The layer's input, one vector per position.
    params : Mapping[str, array_like]
        Weights under :data:`illustrated.reference.ENCODER_PARAM_KEYS`.
    n_heads : int
        Number of heads.

    Returns
    -------
    EncoderTensors
        Named fields ``x``, ``weights``, ``attention``, ``z``, ``ffn``, ``r``.

    Shapes
    ------
    ``x`` (seq, d_model) -> ``z``, ``r`` (seq, d_model); ``weights`` (n_heads, seq, seq).

    Raises
    ------
    ValueError
        If ``x`` is not 2-D, or from :func:`illustrated.reference.encoder_layer`.

    References
    ----------
    Post "Now We're Encoding!" (x → self-attention → z → feed-forward → r); paper §3.1.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x: expected shape (seq, d_model), got {x.shape}")
    result = reference.encoder_layer(x, params, n_heads)
    return EncoderTensors(x, result.attention.weights, result.attention.output, result.z,
                          result.ffn, result.output)


def trained_encoder_layer(model: Transformer, src_vocab: Vocab, sentence: str,
                          layer: int = 0) -> tuple[SentenceEmbedding, EncoderTensors]:
    """A real sentence through encoder layer ``layer`` of a trained model, vector list by vector list.

    The layer's input is the embedded sentence (layer 0) or the previous encoder's output,
    both selected from :func:`illustrated.trace`; the layer itself is computed with the NumPy
    reference on the model's copied weights, so a chapter can check one against the other.

    Parameters
    ----------
    model : illustrated.modules.Transformer
    src_vocab : illustrated.data.Vocab
    sentence : str
    layer : int, default 0
        Which encoder, 0 = the bottom one.

    Returns
    -------
    (SentenceEmbedding, EncoderTensors)

    Shapes
    ------
    As :func:`embed_sentence` and :func:`follow_encoder_layer`.

    Raises
    ------
    ValueError
        If ``layer`` is outside [0, n_layers), or as :func:`embed_sentence`.

    References
    ----------
    Post "Bringing The Tensors Into The Picture" (in other encoders the input is the output of
    the encoder below); paper §3.1.
    """
    check_vocab("src_vocab", src_vocab, check_model(model).cfg.src_vocab_size)
    n_layers = model.cfg.n_layers
    if not isinstance(layer, int) or not 0 <= layer < n_layers:
        raise ValueError(f"layer: expected an int in [0, {n_layers}), got {layer!r}")
    ids = encode_sentence(src_vocab, sentence, allow_unk=True)
    t = trace(model, ids, src_vocab=src_vocab)  # the encoder side only
    x = t.encoder_layers[layer].input  # the embedded sentence, or the output of the layer below
    embedded = _embedding(t)
    params = encoder_params_from_layer(model.encoder.layers[layer])
    return embedded, follow_encoder_layer(x, params, model.cfg.n_heads)


def thinking_machines_encoder(d_ff: int = 8, *, seed: int = 0
                              ) -> tuple[tuple[str, ...], np.ndarray, dict[str, np.ndarray]]:
    """The post's two-word example "Thinking Machines" and a small seeded encoder layer to send it through.

    Parameters
    ----------
    d_ff : int, default 8
        Inner width of the feed-forward network.
    seed : int, default 0, keyword-only
        Seed of :func:`illustrated.reference.init_encoder_params`.

    Returns
    -------
    (words, x, params)
        The words ("Thinking", "Machines"), their 4-dimensional embeddings from
        :func:`illustrated.reference.thinking_machines_example`, and encoder weights for
        d_model = 4.

    Shapes
    ------
    ``x`` (2, 4); ``params`` as :func:`illustrated.reference.init_encoder_params`.

    Raises
    ------
    ValueError
        If ``d_ff`` is not a positive int.

    References
    ----------
    Post "Now We're Encoding!" and "Self-Attention in Detail" (the "Thinking Machines" vectors).
    """
    example = reference.thinking_machines_example()
    params = reference.init_encoder_params(example.X.shape[1], d_ff, seed=seed)
    return reference.THINKING_MACHINES_WORDS, example.X, params


# --------------------------------------------------------------------------- position-wise check

class Perturbation(NamedTuple):
    """How much each output row moves when one input row is nudged, per sub-layer."""

    position: int
    """The nudged position."""
    direction: np.ndarray
    """The nudge added to that row, shape (d_model,)."""
    changes: dict[str, np.ndarray]
    """|new output - old output| for "self-attention", "feed-forward" and "encoder layer",
    each (seq, d_model)."""
    row_change: dict[str, np.ndarray]
    """The Euclidean norm of each row of the change, per sub-layer, each (seq,)."""


def perturbation_effect(x: object, params: Mapping[str, object], n_heads: int, position: int,
                        *, delta: float = 1.0, seed: int = 0) -> Perturbation:
    """Nudge one position's input and see which output rows change: the feed-forward network's
    own row only, self-attention's every row.

    Each sub-layer gets the input it has in the layer: self-attention and the whole layer get
    ``x``; the feed-forward network gets ``z`` (self-attention's output after add & norm). Row
    ``position`` of that input is moved by ``delta`` times a seeded random unit vector.

    Parameters
    ----------
    x : array_like
        The encoder layer's input.
    params : Mapping[str, array_like]
        Weights under :data:`illustrated.reference.ENCODER_PARAM_KEYS`.
    n_heads : int
        Number of heads.
    position : int
        Row to nudge, in [0, seq).
    delta : float, default 1.0, keyword-only
        Length of the nudge.
    seed : int, default 0, keyword-only
        Seed of the nudge's direction.

    Returns
    -------
    Perturbation
        Named fields ``position``, ``direction``, ``changes``, ``row_change``.

    Shapes
    ------
    ``x`` (seq, d_model); each ``changes[...]`` (seq, d_model); each ``row_change[...]`` (seq,).

    Raises
    ------
    ValueError
        If ``x`` is not 2-D, ``position`` is outside [0, seq) or ``delta`` is not a finite number.

    References
    ----------
    Post "Bringing The Tensors Into The Picture" (dependencies in self-attention, none in the
    feed-forward layer); paper §3.3 ("applied to each position separately and identically").
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x: expected shape (seq, d_model), got {x.shape}")
    seq, d_model = x.shape
    if not isinstance(position, (int, np.integer)) or not 0 <= position < seq:
        raise ValueError(f"position: expected an int in [0, {seq}), got {position!r}")
    if not isinstance(delta, (int, float)) or not np.isfinite(delta):
        raise ValueError(f"delta: expected a finite number, got {delta!r}")
    direction = np.random.default_rng(seed).normal(size=d_model)
    direction *= delta / np.linalg.norm(direction)  # (d_model,)
    nudge = np.zeros_like(x)
    nudge[position] = direction  # (seq, d_model)

    before = follow_encoder_layer(x, params, n_heads)
    after = follow_encoder_layer(x + nudge, params, n_heads)
    ffn_after = reference.feed_forward(before.z + nudge, params["W_1"], params["b_1"],
                                       params["W_2"], params["b_2"])
    changes = {"self-attention": np.abs(after.attention - before.attention),
               "feed-forward": np.abs(ffn_after - before.ffn),
               "encoder layer": np.abs(after.r - before.r)}
    row_change = {name: np.linalg.norm(c, axis=-1) for name, c in changes.items()}
    return Perturbation(int(position), direction, changes, row_change)
