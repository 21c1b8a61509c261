"""Looking inside the model: one run of the Transformer with every intermediate kept, as NumPy.

:func:`trace` runs the model's own ``forward`` with a forward hook on every sub-module and
keeps what each returns (embeddings, W_Q/W_K/W_V outputs, the W_O input, norms, layers, the
feed-forward hidden layer, the logits), and the attention weights that
:func:`~illustrated.modules.recording.recording_attention` reads; only ``q kᵀ`` and its
scaling (the post's attention steps 2 and 3), which no module returns, are computed here.
The chapters' code (:mod:`illustrated.book`) selects from a trace.

References: post, "Bringing The Tensors Into The Picture" to "The Final Linear and Softmax
Layer"; paper §3 and Figure 1.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Sequence

import numpy as np
import torch

from .._args import check_instance
from .._numpy import to_numpy
from ..data import Vocab, encode_sentence
from ..data.vocab import check_vocab_fits
from .decoding import EvalMode, greedy_decode, prepare_source, token_ids
from ..modules.recording import recording_attention
from ..modules.transformer import Transformer
from ..reference import AttentionResult

__all__ = ["to_numpy", "SublayerTrace", "EncoderLayerTrace",
           "DecoderLayerTrace", "Trace", "trace"]


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

    self_attn: AttentionResult
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

    self_attn: AttentionResult
    """Masked self-attention (tgt_len x tgt_len)."""
    self_block: SublayerTrace
    cross_attn: AttentionResult
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


# --------------------------------------------------------------------------- the hooked run

def _np(t: torch.Tensor) -> np.ndarray:
    """The only sentence of a batch of one, as float64 NumPy."""
    return to_numpy(t[0])


@lru_cache(maxsize=None)
def _signature(kind: type) -> inspect.Signature:
    """The parameters of ``kind.forward`` after ``self``."""
    signature = inspect.signature(kind.forward)
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def _hook(calls: dict, name: str, module, args, kwargs, output) -> None:
    """Keep a sub-module's call (its arguments by parameter name, its output); stop at a NaN."""
    if not bool(torch.isfinite(output[0] if isinstance(output, tuple) else output).all()):
        raise ValueError(f"model: the output of {name} is not finite (NaN or infinite weights, "
                         f"or values too large); nothing can be traced")
    calls.setdefault(name, (_signature(type(module)).bind(*args, **kwargs).arguments, output))


def _run(model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor | None) -> dict:
    """``name -> (arguments, output)`` of every sub-module in ``model(src, tgt_in)``
    (``model.encode`` when ``tgt_in`` is None); an attention's output is ``(out, weights)``."""
    calls: dict[str, tuple] = {}
    with EvalMode(model), recording_attention(model) as weights:
        handles = [module.register_forward_hook(partial(_hook, calls, name), with_kwargs=True)
                   for name, module in model.named_modules() if name]
        try:
            model.encode(src) if tgt_in is None else model(src, tgt_in)
        finally:
            for handle in handles:
                handle.remove()
    for name, kept in weights.items():  # each attention ran once
        if name in calls:
            calls[name] = (calls[name][0], (calls[name][1], kept[0]))
    return calls


def _attention(calls: dict, name: str, mha: torch.nn.Module) -> AttentionResult:
    """The attention sub-layer ``name`` from its hooked call and those of W_Q, W_K, W_V, W_O."""
    args, (out, weights) = calls[name]  # (1, seq_q, d_model), (1, n_heads, seq_q, seq_k)
    q, k, v = (mha.split_heads(calls[f"{name}.w_{x}"][1]) for x in "qkv")  # (1, n_heads, seq, d_k)
    concat = calls[f"{name}.w_o"][0]["input"]  # (1, seq_q, d_model)
    scores = q @ k.transpose(-2, -1)  # (1, n_heads, seq_q, seq_k): step 2, returned by no module
    mask = args["mask"].expand(scores.shape)[0, 0]  # (seq_q, seq_k)
    scaled = (scores / math.sqrt(mha.d_k)).masked_fill(~mask, float("-inf"))
    return AttentionResult(*map(_np, (q, k, v, scores, scaled, weights, mha.split_heads(concat),
                                     concat, out)), mask.cpu().numpy().copy())


def _layers(calls: dict, stack: str, layers, sublayers: Sequence[str], norm_first: bool):
    """Per layer of ``stack``: (its attention traces, its Add & Norm blocks, its FFN hidden layer)."""
    traced = []
    for i, layer in enumerate(layers):
        name = f"{stack}.layers.{i}"
        args, out = calls[name]
        norms = [calls[f"{name}.norm{j}"] for j in range(1, len(sublayers) + 1)]
        # The residual stream before each sub-layer and after the last one: pre-LN normalises
        # it on the way into a sub-layer, post-LN after the sum.
        stream = ([a["input"] for a, _ in norms] + [out] if norm_first
                  else [args["x"]] + [o for _, o in norms])
        blocks = []
        for j, sublayer in enumerate(sublayers):
            sub_args, sub_out = calls[f"{name}.{sublayer}"]
            blocks.append(SublayerTrace(*map(_np, (
                stream[j], next(iter(sub_args.values())),
                sub_out[0] if isinstance(sub_out, tuple) else sub_out,
                stream[j + 1] if norm_first else norms[j][0]["input"], stream[j + 1]))))
        attention = [_attention(calls, f"{name}.{sub}", getattr(layer, sub))
                     for sub in sublayers[:-1]]
        traced.append((attention, blocks, _np(calls[f"{name}.feed_forward.linear2"][0]["input"])))
    return traced


def _fields(model: Transformer, calls: dict) -> dict:
    """The Trace's arrays, from the hooked calls."""
    norm_first, positions = model.cfg.norm_first, model.positional.pe
    fields = {}
    for side, stack in (("src", "encoder"), ("tgt", "decoder")):
        if stack in calls:
            x = calls[stack][0]["x"]  # (1, seq, d_model)
            fields.update({f"{side}_lookup": _np(calls[f"{side}_embed.lut"][1]),
                           f"{side}_embeddings": _np(calls[f"{side}_embed"][1]),
                           f"{side}_positions": to_numpy(positions[:x.shape[1]]),
                           f"{stack}_input": _np(x)})
    memory = calls["encoder"][1]  # (1, src_len, d_model)
    with torch.no_grad():  # the keys and values every decoding step's cross-attention reads
        cross = [layer.cross_attn for layer in model.decoder.layers]
        fields.update(memory=_np(memory),
                      memory_keys=[_np(a.split_heads(a.w_k(memory))) for a in cross],
                      memory_values=[_np(a.split_heads(a.w_v(memory))) for a in cross])
    fields["encoder_layers"] = [EncoderLayerTrace(a[0], b[0], h, b[1]) for a, b, h in _layers(
        calls, "encoder", model.encoder.layers, ("self_attn", "feed_forward"), norm_first)]
    if "decoder" in calls:
        fields["decoder_layers"] = [
            DecoderLayerTrace(a[0], b[0], a[1], b[1], h, b[2]) for a, b, h in _layers(
                calls, "decoder", model.decoder.layers,
                ("self_attn", "cross_attn", "feed_forward"), norm_first)]
        fields.update(decoder_output=_np(calls["decoder"][1]),
                      logits=_np(calls["generator"][1]))
    return fields


# --------------------------------------------------------------------------- the public call

def _ids(vocab: Vocab, value: object, name: str) -> list[int]:
    """A sentence (str, unknown words refused) or a sequence of ids, as a list of ids."""
    if isinstance(value, str):
        return encode_sentence(vocab, value, name=name)
    ids = token_ids(value, name).tolist()
    bad = [i for i in ids if not 0 <= i < len(vocab)]
    if bad:
        raise ValueError(f"{name}: token id {bad[0]} is outside the vocabulary [0, {len(vocab)})")
    return ids


def trace(model, sentence: str | Sequence[int], target: str | Sequence[int] | None = None, *,
          src_vocab: Vocab, tgt_vocab: Vocab | None = None, max_len: int | None = None) -> Trace:
    """Run the model on one sentence and keep every intermediate result, as float64 NumPy.

    The model runs its own ``forward`` (``encode`` without ``tgt_vocab``) in eval mode without
    gradients (:class:`~illustrated.inference.decoding.EvalMode`), with forward hooks on its sub-modules
    and :func:`~illustrated.modules.recording.recording_attention` keeping the weights; the
    model's mode is restored and the hooks removed afterwards.

    Parameters
    ----------
    model : illustrated.modules.Transformer
    sentence : str or sequence of int
        The source sentence, or its token ids (a list, tuple, tensor or array: a set or dict has
        no order and is refused). A word the vocabulary does not know is an error (pass ids to
        trace ``<unk>`` on purpose).
    target : str or sequence of int, optional
        The translation to trace (teacher forcing), without ``<bos>``; a str gets ``<eos>``
        appended. None (default): the model's own greedy translation
        (:func:`illustrated.greedy_decode`), ``<eos>`` included when produced.
    src_vocab : Vocab, keyword-only
        The model's source vocabulary: ``cfg.src_vocab_size`` tokens, ``<pad>`` at ``cfg.pad_id``.
    tgt_vocab : Vocab, optional, keyword-only
        The model's target vocabulary (``<pad>`` at ``cfg.tgt_pad_id``); None traces the
        encoder side only (embeddings, encoder layers, memory and the memory's keys and
        values), with ``target`` None.
    max_len : int, optional, keyword-only
        Most tokens of the greedy translation, in [1, cfg.max_len] (only with ``tgt_vocab`` and
        no ``target``); default ``cfg.max_len``.

    Returns
    -------
    Trace
        The decoder reads ``<bos>`` + target without its last token, so ``logits[t]`` is the
        distribution that predicts ``target_ids[t]``; ``logits`` is ``model(src, tgt_in)[0]``
        and every attention weight is what ``recording_attention`` reads. Shapes: see
        :class:`Trace`; src_len = len(source ids), tgt_len = len(target ids).

    Raises
    ------
    ValueError
        If the model is not a Transformer or is on the meta device; a vocabulary is not a
        Vocab, has another size or another ``<pad>`` id than the model's config; the sentence
        or target is empty, of the wrong type, has unknown words, special tokens or ids
        outside the vocabulary, or is longer than the model's ``max_len``; a target is given
        without ``tgt_vocab``; ``max_len`` is outside [1, cfg.max_len] or given with a target;
        a module's output is NaN or infinite (the message names the module). Type errors are
        TypeErrors too.

    References
    ----------
    Post, "Bringing The Tensors Into The Picture" to "The Final Linear and Softmax Layer";
    paper §3, Figure 1.
    """
    check_instance("model", model, Transformer, "an illustrated.modules.Transformer")
    if any(p.device.type == "meta" for p in model.parameters()):
        raise ValueError("model: expected a model whose weights are in memory (CPU or GPU), got "
                         "one on the meta device (it has shapes, no numbers to trace)")
    cfg = model.cfg
    check_vocab_fits("src_vocab", src_vocab, cfg.src_vocab_size, cfg.pad_id)
    if tgt_vocab is not None:
        check_vocab_fits("tgt_vocab", tgt_vocab, cfg.tgt_vocab_size, cfg.tgt_pad_id)
    elif target is not None:
        raise ValueError("target: a target needs tgt_vocab (the model's target vocabulary)")
    if max_len is not None and (target is not None or tgt_vocab is None):
        raise ValueError(f"max_len: expected None (it only limits the greedy translation, traced "
                         f"with tgt_vocab and no target), got {max_len!r}")
    source_ids = _ids(src_vocab, sentence, "sentence")
    src = prepare_source(model, source_ids, name="sentence")  # (1, src_len)
    target_ids: list[int] = []
    decoder_ids: list[int] = []
    if tgt_vocab is not None:
        if target is None:
            target_ids = greedy_decode(model, source_ids, bos_id=tgt_vocab.bos_id,
                                       eos_id=tgt_vocab.eos_id,
                                       max_len=cfg.max_len if max_len is None else max_len)
        else:  # a typed sentence ends with <eos>, as training's targets do
            target_ids = _ids(tgt_vocab, target, "target") \
                + ([tgt_vocab.eos_id] if isinstance(target, str) else [])
        decoder_ids = [tgt_vocab.bos_id, *target_ids[:-1]]
        if len(decoder_ids) > cfg.max_len:
            raise ValueError(f"target: {len(target_ids)} tokens do not fit max_len={cfg.max_len}")
    calls = _run(model, src, torch.tensor([decoder_ids], device=src.device) if decoder_ids
                 else None)
    tokens = [] if tgt_vocab is None else tgt_vocab.tokens
    return Trace(source_ids, [src_vocab.tokens[i] for i in source_ids], list(target_ids),
                 [tokens[i] for i in target_ids], decoder_ids, [tokens[i] for i in decoder_ids],
                 cfg.norm_first, **_fields(model, calls))
