"""Looking inside the model: one run of the Transformer with every intermediate kept, as NumPy.

:func:`trace` runs a model on one sentence (and its translation, or the model's own greedy one)
by calling the model's sub-modules in the order its ``forward`` does, under
:class:`~illustrated.decoding.EvalMode`, and keeps every vector list the post draws: embeddings,
positions, per layer the queries, keys and values of every head, the scores, the weights, the
attention output, each Add & Norm, the feed-forward network's hidden layer, and the logits.
The chapters' compute functions (:mod:`illustrated.explain`) select from a trace instead of
running the model their own way; ``tests/test_trace.py`` checks that every traced value equals
what the model's own ``forward(..., return_attention=True)`` gives.

References: post, all sections from "Bringing The Tensors Into The Picture" to "The Final Linear
and Softmax Layer"; paper §3 and Figure 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from ._numpy import to_numpy
from .data import Vocab, encode_sentence
from ._args import ArgumentTypeError
from .decoding import EvalMode, _source_tensor, check_model, greedy_decode, prepare_source
from .masks import causal_mask

__all__ = ["to_numpy", "AttentionTrace", "SublayerTrace", "EncoderLayerTrace",
           "DecoderLayerTrace", "Trace", "trace"]


@dataclass(frozen=True)
class AttentionTrace:
    """One multi-head attention sub-layer of one sentence (batch of one), every step of the post.

    Shapes: ``q`` (n_heads, seq_q, d_k); ``k``, ``v`` (n_heads, seq_k, d_k); ``scores``,
    ``scaled``, ``weights`` (n_heads, seq_q, seq_k); ``z`` (n_heads, seq_q, d_k); ``concat``,
    ``output`` (seq_q, d_model); ``mask`` bool (seq_q, seq_k), True = may attend.
    """

    q: np.ndarray
    """Queries of every head: ``query_input @ W_Q + b_Q`` split into heads."""
    k: np.ndarray
    """Keys of every head."""
    v: np.ndarray
    """Values of every head."""
    scores: np.ndarray
    """``q @ k^T`` (post step 2), masked entries included."""
    scaled: np.ndarray
    """``scores / sqrt(d_k)`` (step 3), ``-inf`` where the mask forbids."""
    weights: np.ndarray
    """The module's own softmax weights (step 4), as ``return_attention=True`` gives them."""
    z: np.ndarray
    """``weights @ v`` of every head (steps 5-6)."""
    concat: np.ndarray
    """The heads' z side by side."""
    output: np.ndarray
    """The module's output, ``concat @ W_O + b_O``."""
    mask: np.ndarray
    """Which keys each query may attend to."""


@dataclass(frozen=True)
class SublayerTrace:
    """One sub-layer with its residual connection and layer norm ("Add & Norm").

    Post-LN (paper): ``sublayer_input = residual_input``, ``output = LayerNorm(summed)``.
    Pre-LN: ``sublayer_input = LayerNorm(residual_input)``, ``output = summed``.
    Every field has shape (seq, d_model).
    """

    residual_input: np.ndarray
    """The residual stream entering the sub-layer (X of the post's figure)."""
    sublayer_input: np.ndarray
    """What the sub-layer itself sees."""
    sublayer_output: np.ndarray
    """The sub-layer's output (Z of the post's figure)."""
    summed: np.ndarray
    """``residual_input + sublayer_output``."""
    output: np.ndarray
    """The residual stream after the sub-layer and its norm."""


@dataclass(frozen=True)
class EncoderLayerTrace:
    """One encoder layer: self-attention, then the feed-forward network, each with Add & Norm."""

    self_attn: AttentionTrace
    """Its self-attention (seq_q = seq_k = src_len)."""
    attn_block: SublayerTrace
    """Add & Norm around the self-attention."""
    ffn_hidden: np.ndarray
    """``ReLU(x W_1 + b_1)``, shape (src_len, d_ff)."""
    ffn_block: SublayerTrace
    """Add & Norm around the feed-forward network; its ``output`` is the layer's output."""

    @property
    def input(self) -> np.ndarray:
        """The layer's input, (src_len, d_model)."""
        return self.attn_block.residual_input

    @property
    def output(self) -> np.ndarray:
        """The layer's output, (src_len, d_model)."""
        return self.ffn_block.output


@dataclass(frozen=True)
class DecoderLayerTrace:
    """One decoder layer: masked self-attention, encoder-decoder attention, feed-forward."""

    self_attn: AttentionTrace
    """Masked self-attention (tgt_len x tgt_len)."""
    self_block: SublayerTrace
    cross_attn: AttentionTrace
    """Encoder-decoder attention: queries from the decoder, keys and values from the memory
    (tgt_len x src_len)."""
    cross_block: SublayerTrace
    ffn_hidden: np.ndarray
    """``ReLU(x W_1 + b_1)``, shape (tgt_len, d_ff)."""
    ffn_block: SublayerTrace

    @property
    def input(self) -> np.ndarray:
        """The layer's input, (tgt_len, d_model)."""
        return self.self_block.residual_input

    @property
    def output(self) -> np.ndarray:
        """The layer's output, (tgt_len, d_model)."""
        return self.ffn_block.output


@dataclass(frozen=True)
class Trace:
    """Everything one sentence (and its translation) becomes inside the model, as float64 NumPy.

    The source side is indexed by source position, the target side by decoder input position
    (``<bos>`` and the target words; position t predicts target word t).
    """

    source_ids: list[int]
    source_tokens: list[str]
    target_ids: list[int]
    """The translation traced (given, or the model's greedy output), ``<eos>`` included when
    produced, without ``<bos>``."""
    target_tokens: list[str]
    decoder_input_ids: list[int]
    """``<bos>`` and ``target_ids`` without the last one: what the decoder reads."""
    decoder_input_tokens: list[str]
    norm_first: bool
    src_lookup: np.ndarray
    """Rows of the source embedding table, (src_len, d_model)."""
    src_embeddings: np.ndarray
    """``src_lookup * sqrt(d_model)`` (paper §3.4), (src_len, d_model)."""
    src_positions: np.ndarray
    """Positional encodings added to them, (src_len, d_model)."""
    encoder_input: np.ndarray
    """``src_embeddings + src_positions``, the bottom encoder's input, (src_len, d_model)."""
    encoder_layers: list[EncoderLayerTrace]
    memory: np.ndarray
    """The encoder stack's output (after the final norm in pre-LN), (src_len, d_model)."""
    memory_keys: list[np.ndarray]
    """Per decoder layer, the keys its encoder-decoder attention makes from ``memory``,
    (n_heads, src_len, d_k): computed once per sentence, the same at every decoding step."""
    memory_values: list[np.ndarray]
    """Per decoder layer, the values, (n_heads, src_len, d_k)."""
    # The decoder side; None (and no decoder layers) when only the encoder was traced.
    tgt_lookup: np.ndarray | None = None
    tgt_embeddings: np.ndarray | None = None
    tgt_positions: np.ndarray | None = None
    decoder_input: np.ndarray | None = None
    """(tgt_len, d_model)."""
    decoder_layers: list[DecoderLayerTrace] = field(default_factory=list)
    decoder_output: np.ndarray | None = None
    """The decoder stack's output, (tgt_len, d_model)."""
    logits: np.ndarray | None = None
    """The final linear layer's output, (tgt_len, tgt_vocab_size)."""

    def _decoded(self) -> None:
        if self.logits is None:
            raise ValueError("trace: only the encoder was traced (tgt_vocab=None); pass the "
                             "target vocabulary to trace the decoder")

    @property
    def probs(self) -> np.ndarray:
        """softmax(logits), (tgt_len, tgt_vocab_size)."""
        self._decoded()
        shifted = np.exp(self.logits - self.logits.max(axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)

    def encoder_attention(self) -> np.ndarray:
        """Encoder self-attention weights, (n_layers, n_heads, src_len, src_len)."""
        return np.stack([layer.self_attn.weights for layer in self.encoder_layers])

    def decoder_self_attention(self) -> np.ndarray:
        """Decoder self-attention weights, (n_layers, n_heads, tgt_len, tgt_len)."""
        self._decoded()
        return np.stack([layer.self_attn.weights for layer in self.decoder_layers])

    def cross_attention(self) -> np.ndarray:
        """Encoder-decoder attention weights, (n_layers, n_heads, tgt_len, src_len)."""
        self._decoded()
        return np.stack([layer.cross_attn.weights for layer in self.decoder_layers])


# --------------------------------------------------------------------------- the run itself

def _attention(mha: torch.nn.Module, query: torch.Tensor, memory: torch.Tensor,
               mask: torch.Tensor) -> tuple[AttentionTrace, torch.Tensor]:
    """Run one MultiHeadAttention (batch of one) and keep its steps; returns (trace, output)."""
    out, weights = mha(query, memory, memory, mask, return_attention=True)  # (1, seq_q, d_model)
    q, k, v = mha.project_qkv(query, memory, memory)  # (1, n_heads, seq_q or seq_k, d_k)
    scores = q @ k.transpose(-2, -1)  # (1, n_heads, seq_q, seq_k)
    full_mask = mask.expand(scores.shape)[0, 0]  # (seq_q, seq_k)
    scaled = (scores / math.sqrt(mha.d_k)).masked_fill(~full_mask, float("-inf"))
    z = weights @ v  # (1, n_heads, seq_q, d_k)
    concat = mha.concat_heads(z)  # (1, seq_q, d_model)
    return AttentionTrace(to_numpy(q[0]), to_numpy(k[0]), to_numpy(v[0]), to_numpy(scores[0]),
                          to_numpy(scaled[0]), to_numpy(weights[0]), to_numpy(z[0]),
                          to_numpy(concat[0]), to_numpy(out[0]),
                          full_mask.cpu().numpy().copy()), out


def _sublayer(x: torch.Tensor, norm: torch.nn.Module, norm_first: bool, run
              ) -> tuple[SublayerTrace, torch.Tensor, object]:
    """Residual + norm around ``run(sublayer_input) -> (output, extra)``, post-LN or pre-LN."""
    h = norm(x) if norm_first else x  # (1, seq, d_model)
    out, extra = run(h)
    summed = x + out  # (1, seq, d_model); dropout is the identity in eval mode
    y = summed if norm_first else norm(summed)  # (1, seq, d_model)
    block = SublayerTrace(to_numpy(x[0]), to_numpy(h[0]), to_numpy(out[0]), to_numpy(summed[0]),
                          to_numpy(y[0]))
    return block, y, extra


def _feed_forward(ffn: torch.nn.Module):
    def run(h: torch.Tensor) -> tuple[torch.Tensor, np.ndarray]:
        hidden = torch.relu(ffn.linear1(h))  # (1, seq, d_ff)
        return ffn(h), to_numpy(hidden[0])
    return run


def _embed(embed: torch.nn.Module, positional: torch.nn.Module, ids: torch.Tensor):
    """(lookup, embeddings, positions, sum) of a (1, seq) id tensor, the sum as a tensor too."""
    scaled = embed(ids)  # (1, seq, d_model)
    x = positional(scaled)  # (1, seq, d_model)
    lookup = embed.lut(ids)[0]  # (seq, d_model)
    positions = positional.pe[:ids.shape[1]]  # (seq, d_model)
    return to_numpy(lookup), to_numpy(scaled[0]), to_numpy(positions), x


def _run(model, src: torch.Tensor, tgt_in: torch.Tensor | None) -> dict:
    """Every intermediate of ``model(src, tgt_in)`` for a batch of one, under EvalMode.

    ``tgt_in`` None: the encoder only (and the memory's keys and values)."""
    cfg = model.cfg
    src_mask = (src != cfg.pad_id)[:, None, None, :]  # (1, 1, 1, src_len)
    fields: dict = {}
    lookup, emb, pos, x = _embed(model.src_embed, model.positional, src)
    fields.update(src_lookup=lookup, src_embeddings=emb, src_positions=pos,
                  encoder_input=to_numpy(x[0]))
    encoder_layers = []
    for layer in model.encoder.layers:
        attn_block, x, attn = _sublayer(
            x, layer.norm1, cfg.norm_first,
            lambda h, a=layer.self_attn: _attention(a, h, h, src_mask)[::-1])
        ffn_block, x, hidden = _sublayer(x, layer.norm2, cfg.norm_first,
                                         _feed_forward(layer.feed_forward))
        encoder_layers.append(EncoderLayerTrace(attn, attn_block, hidden, ffn_block))
    memory = model.encoder.norm(x)  # (1, src_len, d_model); identity in post-LN
    fields.update(encoder_layers=encoder_layers, memory=to_numpy(memory[0]),
                  memory_keys=[to_numpy(layer.cross_attn.split_heads(
                      layer.cross_attn.w_k(memory))[0]) for layer in model.decoder.layers],
                  memory_values=[to_numpy(layer.cross_attn.split_heads(
                      layer.cross_attn.w_v(memory))[0]) for layer in model.decoder.layers])
    if tgt_in is None:
        return fields
    tgt_mask = causal_mask(tgt_in.shape[1], device=tgt_in.device)  # (tgt_len, tgt_len)

    lookup, emb, pos, y = _embed(model.tgt_embed, model.positional, tgt_in)
    fields.update(tgt_lookup=lookup, tgt_embeddings=emb, tgt_positions=pos,
                  decoder_input=to_numpy(y[0]))
    decoder_layers = []
    for layer in model.decoder.layers:
        self_block, y, self_attn = _sublayer(
            y, layer.norm1, cfg.norm_first,
            lambda h, a=layer.self_attn: _attention(a, h, h, tgt_mask)[::-1])
        cross_block, y, cross_attn = _sublayer(
            y, layer.norm2, cfg.norm_first,
            lambda h, a=layer.cross_attn: _attention(a, h, memory, src_mask)[::-1])
        ffn_block, y, hidden = _sublayer(y, layer.norm3, cfg.norm_first,
                                         _feed_forward(layer.feed_forward))
        decoder_layers.append(DecoderLayerTrace(self_attn, self_block, cross_attn, cross_block,
                                                hidden, ffn_block))
    out = model.decoder.norm(y)  # (1, tgt_len, d_model)
    logits = model.generator(out)  # (1, tgt_len, tgt_vocab_size)
    fields.update(decoder_layers=decoder_layers, decoder_output=to_numpy(out[0]),
                  logits=to_numpy(logits[0]))
    return fields


def _ids(vocab: Vocab, value: object, name: str) -> list[int]:
    """A sentence (str, unknown words refused) or a sequence of ids, as a list of ids."""
    if isinstance(value, str):
        return encode_sentence(vocab, value, name=name)
    try:
        ids = _source_tensor(value)  # refuses floats and bools instead of truncating them
    except ValueError as error:  # its message names src_ids
        raise ArgumentTypeError(str(error).replace("src_ids", name, 1)) from None
    if ids.dim() != 1 or ids.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D sequence of token ids, "
                         f"got shape {tuple(ids.shape)}")
    bad = [i for i in ids.tolist() if not 0 <= i < len(vocab)]
    if bad:
        raise ValueError(f"{name}: token id {bad[0]} is outside the vocabulary [0, {len(vocab)})")
    return ids.tolist()


def trace(model, sentence: str | Sequence[int], target: str | Sequence[int] | None = None, *,
          src_vocab: Vocab, tgt_vocab: Vocab | None = None, max_len: int | None = None) -> Trace:
    """Run the model on one sentence and keep every intermediate result, as float64 NumPy.

    The model's sub-modules are called in the order of its ``forward`` (embeddings, positions,
    each encoder layer's self-attention and feed-forward network with their Add & Norm, the
    same for the decoder with its encoder-decoder attention, the final linear layer), in eval
    mode without gradients (:class:`~illustrated.decoding.EvalMode`); the model's mode is
    restored afterwards.

    Parameters
    ----------
    model : illustrated.modules.Transformer
    sentence : str or sequence of int
        The source sentence, or its token ids. A word the vocabulary does not know is an error
        (pass ids to trace ``<unk>`` on purpose).
    target : str or sequence of int, optional
        The translation to trace (teacher forcing), without ``<bos>``; a str gets ``<eos>``
        appended. None (default): the model's own greedy translation
        (:func:`illustrated.greedy_decode`), ``<eos>`` included when produced.
    src_vocab : Vocab, keyword-only
        The model's source vocabulary.
    tgt_vocab : Vocab, optional, keyword-only
        The model's target vocabulary; None traces the encoder side only (embeddings, encoder
        layers, memory and the memory's keys and values), with ``target`` None.
    max_len : int, optional, keyword-only
        Longest greedy translation (only when ``target`` is None); default ``cfg.max_len``.

    Returns
    -------
    Trace
        The decoder reads ``<bos>`` + target without its last token, so ``logits[t]`` is the
        distribution that predicts ``target_ids[t]``; ``logits`` equals
        ``model(src, tgt_in)[0]``.

    Shapes
    ------
    See :class:`Trace`; src_len = len(source ids), tgt_len = len(target ids).

    Raises
    ------
    ValueError
        If the model is not a Transformer, a vocabulary does not fit it, the sentence or target
        is empty, has unknown words or ids outside the vocabulary, is longer than the model's
        ``max_len``, or a target is given without ``tgt_vocab`` (TypeErrors of
        :func:`illustrated.greedy_decode` are ValueErrors too).

    References
    ----------
    Post, "Bringing The Tensors Into The Picture" to "The Final Linear and Softmax Layer";
    paper §3, Figure 1.
    """
    check_model("model", model)
    cfg = model.cfg
    for name, vocab, size in (("src_vocab", src_vocab, cfg.src_vocab_size),
                              ("tgt_vocab", tgt_vocab, cfg.tgt_vocab_size)):
        if vocab is None and name == "tgt_vocab":
            continue
        if not isinstance(vocab, Vocab):
            raise ValueError(f"{name}: expected an illustrated.data.Vocab, "
                             f"got {type(vocab).__name__}")
        if len(vocab) != size:
            raise ValueError(f"{name}: has {len(vocab)} tokens but the model expects {size}")
    source_ids = _ids(src_vocab, sentence, "sentence")
    src = prepare_source(model, source_ids)  # (1, src_len)
    source = {"source_ids": source_ids,
              "source_tokens": [src_vocab.tokens[i] for i in source_ids],
              "norm_first": cfg.norm_first}
    if tgt_vocab is None:
        if target is not None:
            raise ValueError("target: a target needs tgt_vocab (the model's target vocabulary)")
        with EvalMode(model):
            fields = _run(model, src, None)
        return Trace(**source, target_ids=[], target_tokens=[], decoder_input_ids=[],
                     decoder_input_tokens=[], **fields)
    if target is None:
        target_ids = greedy_decode(model, source_ids, bos_id=tgt_vocab.bos_id,
                                   eos_id=tgt_vocab.eos_id, max_len=max_len or cfg.max_len)
    elif isinstance(target, str):
        target_ids = [*_ids(tgt_vocab, target, "target"), tgt_vocab.eos_id]
    else:
        target_ids = _ids(tgt_vocab, target, "target")
    decoder_ids = [tgt_vocab.bos_id, *target_ids[:-1]]
    if len(decoder_ids) > cfg.max_len:
        raise ValueError(f"target: {len(target_ids)} tokens do not fit max_len={cfg.max_len}")
    tgt_in = torch.tensor([decoder_ids], device=src.device)  # (1, tgt_len)
    with EvalMode(model):
        fields = _run(model, src, tgt_in)
    return Trace(**source, target_ids=list(target_ids),
                 target_tokens=[tgt_vocab.tokens[i] for i in target_ids],
                 decoder_input_ids=decoder_ids,
                 decoder_input_tokens=[tgt_vocab.tokens[i] for i in decoder_ids], **fields)
