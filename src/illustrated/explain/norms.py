"""Compute functions of chapter 06: residual connections, layer norm, and where the norm sits.

* :func:`describe_stack` reads the structure the diagrams draw (sub-layers, norms, final norms)
  from the real modules a config builds;
* :func:`add_norm_vectors` follows real vectors through "X + Z -> LayerNorm" in a trained model;
* :func:`norm_placement_experiment` trains post-LN and pre-LN twins on a toy corpus;
* :func:`gradient_norms_at_init` measures, before any training, how large each layer's gradient
  is under either placement (the observation of Xiong et al. 2020).

References: post "The Residuals"; paper §3.1 (LayerNorm(x + Sublayer(x))) and §5.3 (warm-up);
Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture".
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .. import reference
from ..config import TINY, TransformerConfig
from ..data import CORPORA, Vocab, collate, encode_pairs, load_corpus
from ..decoding import greedy_decode
from ..modules.decoder import Decoder
from ..modules.encoder import Encoder
from ..modules.feed_forward import FeedForward
from ..modules.multi_head import MultiHeadAttention
from ..modules.transformer import Transformer
from ..tracing import trace
from ..training import History, TrainingDiverged, set_seed, train, translate
from ._checks import encode_sentence, to_numpy

__all__ = ["SUBLAYER_NAMES", "StackPlan", "describe_stack", "AddNormVectors", "add_norm_vectors",
           "NormRun", "norm_placement_experiment", "GradientNorms", "gradient_norms_at_init"]

SUBLAYER_NAMES = {"self_attn": "Self-Attention", "cross_attn": "Encoder-Decoder Attention",
                  "feed_forward": "Feed Forward"}
"""The post's name of each sub-layer attribute of the encoder and decoder layers."""


def _tiny_config(src_vocab: Vocab, tgt_vocab: Vocab, **fields) -> TransformerConfig:
    """TINY sized for the vocabularies: fixed sizes, so the lead's per-corpus tuning leaves the
    experiment as it is."""
    return replace(TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                   pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id, **fields)


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one CPU thread, then restore the thread count.

    Models this small spend more time coordinating threads than computing, and a single thread
    also makes the sums come out in the same order on every machine.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class StackPlan(NamedTuple):
    """What the residual diagrams draw, read from the modules a config builds."""

    norm_first: bool
    """False: post-LN (paper, post); True: pre-LN."""
    encoder: list[list[str]]
    """Per encoder layer, its sub-layers in order (post's names)."""
    decoder: list[list[str]]
    """Per decoder layer, its sub-layers in order."""
    encoder_final_norm: bool
    """Whether the encoder stack ends with its own LayerNorm (pre-LN only)."""
    decoder_final_norm: bool
    """Whether the decoder stack ends with its own LayerNorm (pre-LN only)."""


def _sublayers(layer: nn.Module) -> list[str]:
    names = [SUBLAYER_NAMES[name] for name, child in layer.named_children()
             if isinstance(child, (MultiHeadAttention, FeedForward))]
    norms = [child for child in layer.children() if isinstance(child, nn.LayerNorm)]
    if len(norms) != len(names):  # every sub-layer has its own Add & Norm
        raise RuntimeError(f"{type(layer).__name__}: {len(names)} sub-layers but "
                           f"{len(norms)} norms")
    return names


def describe_stack(cfg: TransformerConfig) -> StackPlan:
    """Each sub-layer in each encoder and decoder, with its residual and its layer norm.

    The structure is read from real :class:`~illustrated.modules.Encoder` and
    :class:`~illustrated.modules.Decoder` modules built from ``cfg`` (with the widths shrunk,
    since the structure does not depend on them), so the drawing follows the code.

    Parameters
    ----------
    cfg : TransformerConfig
        Uses ``n_layers``, ``n_heads`` and ``norm_first``.

    Returns
    -------
    StackPlan

    Shapes
    ------
    ``encoder`` and ``decoder``: n_layers lists of 2 and 3 names.

    Raises
    ------
    ValueError
        If ``cfg`` is not a TransformerConfig.

    References
    ----------
    Post "The Residuals" (two encoders and two decoders); paper §3.1, Figure 1.
    """
    if not isinstance(cfg, TransformerConfig):
        raise ValueError(f"cfg: expected a TransformerConfig, got {type(cfg).__name__}")
    small = replace(cfg, d_model=cfg.n_heads, d_ff=1, dropout=0.0)
    encoder, decoder = Encoder(small), Decoder(small)
    return StackPlan(cfg.norm_first, [_sublayers(layer) for layer in encoder.layers],
                     [_sublayers(layer) for layer in decoder.layers],
                     isinstance(encoder.norm, nn.LayerNorm), isinstance(decoder.norm, nn.LayerNorm))


class AddNormVectors(NamedTuple):
    """Real vectors around the first Add & Norm of an encoder layer (post-LN or pre-LN)."""

    words: list[str]
    """The sentence's words."""
    x: np.ndarray
    """The layer's input X (the residual), shape (seq, d_model)."""
    z: np.ndarray
    """Self-attention's output Z, shape (seq, d_model)."""
    summed: np.ndarray
    """X + Z, shape (seq, d_model)."""
    mean: np.ndarray
    """Mean of each row of what norm1 normalizes (X + Z post-LN, X pre-LN), shape (seq, 1)."""
    variance: np.ndarray
    """Biased variance of each row of it, shape (seq, 1)."""
    normalized: np.ndarray
    """(it - mean) / sqrt(variance + eps), shape (seq, d_model)."""
    output: np.ndarray
    """The model's norm1 output (learned gamma and beta): ``norm1(X + Z)``, the layer's next
    residual stream (post-LN), or ``norm1(X)``, what self-attention reads (pre-LN); shape
    (seq, d_model)."""
    gamma: np.ndarray
    """norm1's learned scale, shape (d_model,)."""
    beta: np.ndarray
    """norm1's learned shift, shape (d_model,)."""
    eps: float
    """norm1's epsilon."""
    norm_first: bool = False
    """False: post-LN, LayerNorm(X + Z) (paper, post); True: pre-LN, X + Z(LayerNorm(X))."""


def add_norm_vectors(model: Transformer, vocab: Vocab, sentence: str,
                     layer: int = 0) -> AddNormVectors:
    """Add self-attention's output Z to its input X, then layer-normalize the sum, in a real model.

    Parameters
    ----------
    model : Transformer
        Post-LN (``cfg.norm_first`` False, the paper and the post) or pre-LN.
    vocab : Vocab
        Its source vocabulary.
    sentence : str
        Words of the vocabulary.
    layer : int, default 0
        Which encoder layer (its input is the previous layer's output).

    Returns
    -------
    AddNormVectors
        X, Z, X + Z and norm1's output are selected from :func:`illustrated.trace`;
        ``mean``, ``variance`` and ``normalized`` come from
        :func:`illustrated.reference.layer_norm_steps`.

    Shapes
    ------
    x, z, summed, normalized, output (seq, d_model); mean, variance (seq, 1).

    Raises
    ------
    ValueError
        If ``layer`` is out of range, ``vocab`` does not fit the model, or the sentence is
        empty or has unknown words.

    References
    ----------
    Post "The Residuals" (the figure with X, Z and LayerNorm(X + Z)); paper §3.1.
    """
    n_layers = model.cfg.n_layers
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < n_layers:
        raise ValueError(f"layer: expected an int in [0, {n_layers}), got {layer!r}")
    if len(vocab) != model.cfg.src_vocab_size:
        raise ValueError(f"vocab: has {len(vocab)} tokens, the model expects "
                         f"{model.cfg.src_vocab_size}")
    t = trace(model, sentence, src_vocab=vocab)  # the encoder side only
    block, norm = t.encoder_layers[layer].attn_block, model.encoder.layers[layer].norm1
    if t.norm_first:  # x + Sublayer(LayerNorm(x)): norm1 normalizes the residual stream X
        normed, output = block.residual_input, block.sublayer_input
    else:  # LayerNorm(x + Sublayer(x)): norm1 normalizes X + Z
        normed, output = block.summed, block.output
    steps = reference.layer_norm_steps(normed, eps=norm.eps)
    return AddNormVectors(t.source_tokens, block.residual_input, block.sublayer_output,
                          block.summed, steps.mean, steps.variance, steps.normalized, output,
                          to_numpy(norm.weight), to_numpy(norm.bias), float(norm.eps),
                          t.norm_first)


class NormRun(NamedTuple):
    """One training run of the post-LN / pre-LN experiment."""

    history: History
    """Loss, learning rate and accuracy per step (cut short if training diverged)."""
    diverged: bool
    """True when training stopped because the loss stopped being finite."""
    snapshots: list[tuple[int, str]]
    """(step, greedy output for the sample sentence), every ``record_every`` steps."""
    exact_match: float
    """Share of the first ``test_pairs`` test pairs translated exactly after training (greedy
    decoding of at most the longest source length + 2 tokens)."""


def norm_placement_experiment(corpus: str = "reverse", *, n_layers: int = 3,
                              steps: int = 120, lr: float = 1e-2, warmup: int = 0,
                              batch_size: int = 32, seed: int = 0, sample: str | None = None,
                              record_every: int = 10,
                              test_pairs: int = 50) -> dict[str, NormRun]:
    """Train one model twice: norm after the residual (post-LN), then before the sub-layer (pre-LN).

    Both runs start from the same seed and see the same batches; only ``norm_first`` differs.
    The model is ``il.TINY`` with ``n_layers`` layers (fixed sizes, whatever the corpus's
    tuned defaults are), trained with a constant learning rate after ``warmup`` linear steps.
    Training runs on the CPU with one thread (faster for a model this small, and the same sums
    in the same order everywhere); torch's thread count is restored afterwards.

    Parameters
    ----------
    corpus : str, default "reverse"
        A corpus of :data:`illustrated.data.CORPORA`.
    n_layers : int, default 3
        Encoder and decoder layers (deeper stacks make the difference clearer).
    steps, lr, warmup, batch_size, seed
        As :func:`illustrated.train` (``warmup=0``: the full learning rate from step 1).
    sample : str, optional
        A source sentence translated every ``record_every`` steps; by default the first test
        sentence.
    record_every : int, default 10
        Steps between snapshots.
    test_pairs : int, default 50
        Test pairs for the final exact match.

    Returns
    -------
    dict
        ``{"post-LN": NormRun, "pre-LN": NormRun}``.

    Shapes
    ------
    Each history has ``steps`` entries (fewer if it diverged).

    Raises
    ------
    ValueError
        For an unknown corpus, or a bad training argument (see :func:`illustrated.train`).

    References
    ----------
    Post "The Residuals"; paper §3.1 and §5.3 (warm-up); Xiong et al. 2020, "On Layer
    Normalization in the Transformer Architecture".
    """
    if corpus not in CORPORA:
        raise ValueError(f"corpus: expected one of {sorted(CORPORA)}, got {corpus!r}")
    for name, value in (("record_every", record_every), ("test_pairs", test_pairs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    test, _, _ = load_corpus(corpus, "test")
    sample = test[0][0] if sample is None else sample
    sample_ids = encode_sentence(src_vocab, sample, name="sample")
    runs: dict[str, NormRun] = {}
    with _one_thread():
        for label, norm_first in (("post-LN", False), ("pre-LN", True)):
            runs[label] = _train_once(pairs, test[:test_pairs], src_vocab, tgt_vocab,
                                      sample_ids, norm_first=norm_first, n_layers=n_layers,
                                      steps=steps, lr=lr, warmup=warmup,
                                      batch_size=batch_size, seed=seed,
                                      record_every=record_every)
    return runs


def _train_once(pairs, test, src_vocab: Vocab, tgt_vocab: Vocab, sample_ids: list[int], *,
                norm_first: bool, n_layers: int, steps: int, lr: float, warmup: int,
                batch_size: int, seed: int, record_every: int) -> NormRun:
    """One run of :func:`norm_placement_experiment`."""
    cfg = _tiny_config(src_vocab, tgt_vocab, norm_first=norm_first, n_layers=n_layers)
    set_seed(seed)
    model = Transformer(cfg)
    snapshots: list[tuple[int, str]] = []

    def record(step: int, history: History) -> None:
        if step % record_every == 0:
            out = greedy_decode(model, sample_ids, bos_id=tgt_vocab.bos_id,
                                eos_id=tgt_vocab.eos_id, max_len=len(sample_ids) + 2)
            snapshots.append((step, tgt_vocab.decode(out)))

    try:
        history = train(model, pairs, src_vocab, tgt_vocab, steps=steps, lr=lr,
                        warmup=warmup, batch_size=batch_size, device="cpu", seed=seed,
                        callback=record, progress=False)
        diverged = False
    except TrainingDiverged as error:
        history, diverged = error.history, True
    # Greedy translations (decoding runs in eval mode itself), at most two words longer than
    # the longest source (the outputs of a corpus like "reverse" are as long as their inputs):
    # much cheaper than decoding to max_len.
    longest = max(len(src_vocab.encode(source)) for source, _ in test)
    predictions = translate(model, [source for source, _ in test], src_vocab, tgt_vocab,
                            max_len=longest + 2)
    targets = [tgt_vocab.decode(tgt_vocab.encode(target)) for _, target in test]
    score = sum(p == t for p, t in zip(predictions, targets)) / len(test)
    return NormRun(history, diverged, snapshots, score)


class GradientNorms(NamedTuple):
    """Gradient norm of one weight per layer, at initialization, for post-LN and pre-LN."""

    encoder: dict[str, np.ndarray]
    """{"post-LN": (n_layers,), "pre-LN": (n_layers,)}, encoder layers bottom to top."""
    decoder: dict[str, np.ndarray]
    """The same for the decoder layers."""
    parameter: str
    """Which weight: the feed-forward network's second linear layer (W_2)."""


def gradient_norms_at_init(corpus: str = "reverse", *, n_layers: int = 6, n_pairs: int = 64,
                           seed: int = 0) -> GradientNorms:
    """How strongly the loss pulls on each layer before training, under either norm placement.

    One batch of ``n_pairs`` training pairs, one forward and backward pass per placement, from
    the same initial weights (``il.TINY`` with ``n_layers`` layers); no optimiser step.

    Parameters
    ----------
    corpus : str, default "reverse"
        A corpus of :data:`illustrated.data.CORPORA`.
    n_layers : int, default 6
        Encoder and decoder layers (the paper's six).
    n_pairs : int, default 64
        Pairs in the batch.
    seed : int, default 0
        Seed of the initial weights.

    Returns
    -------
    GradientNorms
        Frobenius norms of the gradient of ``feed_forward.linear2.weight`` of every layer.

    Shapes
    ------
    each array (n_layers,).

    Raises
    ------
    ValueError
        For an unknown corpus or a non-positive ``n_pairs`` / ``n_layers``.

    References
    ----------
    Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (gradients at
    initialization: large near the output with post-LN, level across layers with pre-LN);
    paper §3.1.
    """
    if corpus not in CORPORA:
        raise ValueError(f"corpus: expected one of {sorted(CORPORA)}, got {corpus!r}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
        raise ValueError(f"n_pairs: expected a positive integer, got {n_pairs!r}")
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    batch = collate(encode_pairs(pairs[:n_pairs], src_vocab, tgt_vocab), src_vocab, tgt_vocab,
                    device="cpu")
    encoder: dict[str, np.ndarray] = {}
    decoder: dict[str, np.ndarray] = {}
    with _one_thread():
        for label, norm_first in (("post-LN", False), ("pre-LN", True)):
            cfg = _tiny_config(src_vocab, tgt_vocab, norm_first=norm_first, n_layers=n_layers)
            set_seed(seed)
            model = Transformer(cfg)
            logits = model(batch.src, batch.tgt_in)  # (batch, tgt_len, tgt_vocab_size)
            loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                   ignore_index=tgt_vocab.pad_id)
            loss.backward()
            encoder[label] = np.array([float(layer.feed_forward.linear2.weight.grad.norm())
                                       for layer in model.encoder.layers])
            decoder[label] = np.array([float(layer.feed_forward.linear2.weight.grad.norm())
                                       for layer in model.decoder.layers])
    return GradientNorms(encoder, decoder, "feed_forward.linear2.weight (W_2)")
