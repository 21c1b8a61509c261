"""What self-attention computes, in numbers a chapter can print and draw (chapters 03 and 04).

* Attention of a trained model: the encoder self-attention weights of every layer and head for
  one sentence (:func:`encoder_self_attention`), the row of one word such as "it"
  (:func:`word_attention`), which heads follow the referent of "it" (:func:`resolution_scores`)
  and which heads look hardest at given words (:func:`telling_heads`).
* Why divide by sqrt(d_k): :func:`scaled_softmax` (the post's 112, 96 -> 14, 12 -> 0.88, 0.12),
  :func:`saturation_example` and :func:`saturation_curve` (random queries and keys with
  unit-variance components: the dot product has variance d_k, so unscaled softmaxes saturate).
* Multi-head bookkeeping: :func:`multi_head_example` (real small matrices, head by head),
  :func:`multiply_adds` / :func:`multiply_add_table` (splitting d_model across heads costs the
  same multiply-adds as one big head), :func:`torch_flops` (the same count measured by torch)
  and :func:`to_torch_multihead` (our module's weights copied into ``torch.nn.MultiheadAttention``).

Everything returns NumPy arrays and labels; the drawings are in :mod:`illustrated.plots.attention`
and :mod:`illustrated.plots.matrices`.

References: post "Self-Attention at a High Level", "Self-Attention in Detail", "Matrix
Calculation of Self-Attention", "The Beast With Many Heads"; paper §3.2.1 (Eq. 1 and footnote 4),
§3.2.2.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from .. import reference
from ..decoding import EvalMode
from ..tracing import trace

__all__ = ["SentenceAttention", "WordAttention", "TellingHead", "CrossAttention", "ScaledSoftmax",
           "SaturationExample", "SaturationCurve", "MultiHeadExample", "MultiplyAdds",
           "encoder_self_attention", "word_attention", "cross_attention_at",
           "resolution_scores", "best_head",
           "telling_heads", "scaled_softmax", "saturation_example", "saturation_curve",
           "multi_head_example", "multiply_adds", "multiply_add_table", "torch_flops",
           "to_torch_multihead"]


# --------------------------------------------------------------------------------------------
# Attention of a trained model
# --------------------------------------------------------------------------------------------

class SentenceAttention(NamedTuple):
    """The encoder self-attention weights of one sentence, every layer and head."""

    tokens: list[str]
    """The source words, one per position."""
    weights: np.ndarray
    """Attention weights, shape (n_layers, n_heads, seq, seq); row = query word, column = key word."""


class WordAttention(NamedTuple):
    """How one word (e.g. "it") spreads its attention over the sentence, per layer and head."""

    tokens: list[str]
    """The source words, one per position."""
    query: int
    """Position of the word whose attention this is."""
    weights: np.ndarray
    """Its attention weights, shape (n_layers, n_heads, seq); each (layer, head) row sums to 1."""


class TellingHead(NamedTuple):
    """A head that puts much of one word's attention on a target word."""

    layer: int
    head: int
    target: str
    """The target word."""
    weight: float
    """The attention weight on the target word (summed over its occurrences)."""


def encoder_self_attention(model: nn.Module, src_vocab, sentence: str) -> SentenceAttention:
    """The encoder's self-attention weights for one sentence: where each word looks, per layer and head.

    A selection from :func:`illustrated.trace` (the encoder side, whose weights are those of
    ``model.encode(src, return_attention=True)``).

    Parameters
    ----------
    model : illustrated.modules.Transformer
        A (trained) model.
    src_vocab : illustrated.data.Vocab
        Its source vocabulary.
    sentence : str
        A source sentence; every word should be in the vocabulary.

    Returns
    -------
    SentenceAttention
        ``tokens`` (the words) and ``weights`` (n_layers, n_heads, seq, seq) as float64.

    Shapes
    ------
    ``weights`` (n_layers, n_heads, seq, seq).

    Raises
    ------
    ValueError
        If ``sentence`` is empty or has a word the vocabulary does not know (its attention
        would be that of ``<unk>``; see :func:`illustrated.data.encode_sentence`).

    References
    ----------
    Post "Self-Attention at a High Level" (the visualisation of "it"); paper §3.2.1.
    """
    t = trace(model, sentence, src_vocab=src_vocab)  # the encoder side only
    return SentenceAttention(t.source_tokens, t.encoder_attention())


def _position(tokens: Sequence[str], word: str | int, name: str = "word") -> int:
    if isinstance(word, (int, np.integer)) and not isinstance(word, bool):
        if not 0 <= word < len(tokens):
            raise ValueError(f"{name}: expected a position in [0, {len(tokens)}), got {word}")
        return int(word)
    if isinstance(word, str) and word in tokens:
        return list(tokens).index(word)
    raise ValueError(f"{name}: expected one of the sentence's words {list(tokens)} or a position, "
                     f"got {word!r}")


def word_attention(model: nn.Module, src_vocab, sentence: str, word: str | int = "it"
                   ) -> WordAttention:
    """Where one word of the sentence looks: its row of the encoder's attention, per layer and head.

    Parameters
    ----------
    model : illustrated.modules.Transformer
        A (trained) model.
    src_vocab : illustrated.data.Vocab
        Its source vocabulary.
    sentence : str
        A source sentence.
    word : str or int
        The query word (its first occurrence) or its position; default ``"it"``.

    Returns
    -------
    WordAttention
        ``tokens``, ``query`` (the word's position) and ``weights`` (n_layers, n_heads, seq).

    Shapes
    ------
    ``weights`` (n_layers, n_heads, seq).

    Raises
    ------
    ValueError
        If ``sentence`` is empty or has unknown words, or ``word`` is not in it.

    References
    ----------
    Post "Self-Attention at a High Level" and "The Beast With Many Heads" (the heads on "it").
    """
    tokens, weights = encoder_self_attention(model, src_vocab, sentence)
    query = _position(tokens, word)
    return WordAttention(tokens, query, weights[:, :, query, :].copy())  # (n_layers, n_heads, seq)


class CrossAttention(NamedTuple):
    """Where the decoder looked in the source sentence when it wrote one word of its translation."""

    source: list[str]
    """The source words."""
    output: list[str]
    """The model's translation, word by word (greedy decoding, without ``<eos>``)."""
    step: int
    """Position in ``output`` of the word looked at (e.g. the pronoun)."""
    weights: np.ndarray
    """Encoder-decoder attention at that step, shape (n_layers, n_heads, src_len)."""


def cross_attention_at(model: nn.Module, src_vocab, tgt_vocab, sentence: str,
                       words: str | Sequence[str] = ("il", "elle"), *,
                       max_len: int | None = None) -> CrossAttention:
    """Translate the sentence, then show where the decoder looked while it wrote a given word.

    A selection from :func:`illustrated.trace` of the model's greedy translation: the
    encoder-decoder attention of the step that produced the first of ``words`` found in it.
    For the coreference corpus the default looks at the step that writes ``il`` or ``elle``.

    Parameters
    ----------
    model : illustrated.modules.Transformer
        A (trained) model.
    src_vocab, tgt_vocab : illustrated.data.Vocab
        Its vocabularies.
    sentence : str
        The source sentence.
    words : str or sequence of str
        The output word(s) to look for, in order of preference.
    max_len : int, optional, keyword-only
        Longest translation, in tokens; default ``model.cfg.max_len - 1``.

    Returns
    -------
    CrossAttention
        ``source``, ``output``, ``step`` and ``weights`` (n_layers, n_heads, src_len).

    Shapes
    ------
    ``weights`` (n_layers, n_heads, src_len).

    Raises
    ------
    ValueError
        If the sentence is empty or has unknown words, or the translation contains none of
        ``words``.

    References
    ----------
    Post "The Decoder Side" (encoder-decoder attention); paper §3.2.3.
    """
    t = trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
              max_len=max_len or model.cfg.max_len - 1)  # the greedy translation
    output = t.target_tokens[:-1] if t.target_ids[-1] == tgt_vocab.eos_id else t.target_tokens
    wanted = [words] if isinstance(words, str) else [str(w) for w in words]
    found = [w for w in wanted if w in output]
    if not found:
        raise ValueError(f"words: expected one of {wanted} in the translation {output}, "
                         f"found none")
    step = output.index(found[0])
    # Decoder position `step` reads <bos> + output[:step] and predicts output[step].
    weights = t.cross_attention()[:, :, step, :]  # (n_layers, n_heads, src_len)
    return CrossAttention(t.source_tokens, output, step, weights)


def _weight_on(att: WordAttention, word: str, name: str) -> np.ndarray:
    """Attention on every occurrence of ``word``, summed: shape (n_layers, n_heads)."""
    positions = [i for i, t in enumerate(att.tokens) if t == word]
    if not positions:
        raise ValueError(f"{name}: expected one of the sentence's words {att.tokens}, got {word!r}")
    return att.weights[:, :, positions].sum(axis=-1)  # (n_layers, n_heads)


def resolution_scores(att_a: WordAttention, att_b: WordAttention, referent_a: str,
                      referent_b: str) -> np.ndarray:
    """How much each head moves the word's attention to its referent when the referent changes.

    For two sentences that differ in what "it" refers to (``referent_a`` in sentence a, e.g.
    "animal" with "tired"; ``referent_b`` in sentence b, e.g. "street" with "wide"), a head that
    resolves "it" puts more weight on the right noun in each:
    ``score = (w_a[ref_a] - w_a[ref_b]) + (w_b[ref_b] - w_b[ref_a])``, in [-2, 2]. A head that
    ignores the difference scores 0; one that always looks at the right noun alone scores 2.

    Parameters
    ----------
    att_a, att_b : WordAttention
        The word's attention in the two sentences (same model, so same layers and heads).
    referent_a, referent_b : str
        The noun "it" refers to in sentence a and in sentence b; both must occur in both.

    Returns
    -------
    numpy.ndarray
        One score per layer and head.

    Shapes
    ------
    (n_layers, n_heads).

    Raises
    ------
    ValueError
        If the two attentions have different layer/head counts or a referent is missing.

    References
    ----------
    Post "Self-Attention at a High Level" ("is it referring to the street or to the animal?").
    """
    if att_a.weights.shape[:2] != att_b.weights.shape[:2]:
        raise ValueError(f"att_b: expected {att_a.weights.shape[:2]} layers and heads like att_a, "
                         f"got {att_b.weights.shape[:2]}")
    a_right = _weight_on(att_a, referent_a, "referent_a")
    a_wrong = _weight_on(att_a, referent_b, "referent_b")
    b_right = _weight_on(att_b, referent_b, "referent_b")
    b_wrong = _weight_on(att_b, referent_a, "referent_a")
    return (a_right - a_wrong) + (b_right - b_wrong)  # (n_layers, n_heads)


def best_head(scores: object) -> tuple[int, int]:
    """The (layer, head) with the largest score, e.g. of :func:`resolution_scores`.

    Parameters
    ----------
    scores : array_like
        One score per layer and head.

    Returns
    -------
    (layer, head) : tuple of int
        The first maximum in row-major order.

    Shapes
    ------
    ``scores`` (n_layers, n_heads).

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 2-D array.

    References
    ----------
    Post "The Beast With Many Heads" (looking for the telling heads).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.size == 0:
        raise ValueError(f"scores: expected a non-empty (n_layers, n_heads) array, got shape "
                         f"{scores.shape}")
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head)


def telling_heads(att: WordAttention, targets: Sequence[str]) -> list[TellingHead]:
    """For each target word, the head that puts the most of the word's attention on it.

    The post's second visualisation shows one head of "it" on "the animal" and another on
    "tired"; ``telling_heads(att, ["animal", "tired"])`` picks such heads. Each head is used
    once, so two targets get two different heads; the (target, head) pairs are assigned
    greedily, largest weight first, so a head that looks at both words goes to the word it
    looks at most.

    Parameters
    ----------
    att : WordAttention
        The word's attention in one sentence.
    targets : sequence of str
        Words of the sentence, at most as many as there are heads in all layers.

    Returns
    -------
    list of TellingHead
        One per target, in the order of ``targets``: ``layer``, ``head``, ``target`` and the
        ``weight`` on it.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If a target is not in the sentence, there are no targets, or more targets than heads.

    References
    ----------
    Post "The Beast With Many Heads" (one head on "the animal", another on "tired").
    """
    targets = [str(t) for t in targets]
    n_layers, n_heads = att.weights.shape[:2]
    if not targets or len(targets) > n_layers * n_heads:
        raise ValueError(f"targets: expected 1 to {n_layers * n_heads} words, got {targets}")
    on_target = np.stack([_weight_on(att, t, "targets") for t in targets])  # (n_targets, n_layers, n_heads)
    picked: dict[int, TellingHead] = {}
    used: set[tuple[int, int]] = set()
    # Greedy over all (target, head) pairs, largest weight first: the strongest link is kept
    # even when another target comes first in the list.
    for flat in np.argsort(-on_target, axis=None, kind="stable"):
        t, layer, head = (int(i) for i in np.unravel_index(flat, on_target.shape))
        if t not in picked and (layer, head) not in used:
            used.add((layer, head))
            picked[t] = TellingHead(layer, head, targets[t], float(on_target[t, layer, head]))
    return [picked[t] for t in range(len(targets))]


# --------------------------------------------------------------------------------------------
# Why divide by sqrt(d_k)
# --------------------------------------------------------------------------------------------

class ScaledSoftmax(NamedTuple):
    """Steps 2-4 of the post for one query: scores, scores / sqrt(d_k), softmax."""

    scores: np.ndarray
    """The dot products q . k, shape (n,)."""
    scaled: np.ndarray
    """The scores divided by sqrt(d_k), shape (n,)."""
    weights: np.ndarray
    """Their softmax, shape (n,); sums to 1."""


def _check_d_k(d_k: object, name: str = "d_k") -> int:
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"{name}: expected a positive integer, got {d_k!r}")
    return int(d_k)


def scaled_softmax(scores: object, d_k: int = 64) -> ScaledSoftmax:
    """Divide the scores by the square root of the key dimension, then softmax them.

    With the post's scores 112 and 96 and the paper's d_k = 64: 14 and 12, then 0.8808 and 0.1192.

    Parameters
    ----------
    scores : array_like
        The scores of one query against each key (finite numbers).
    d_k : int
        The dimension of the key vectors; the scores are divided by sqrt(d_k).

    Returns
    -------
    ScaledSoftmax
        ``scores``, ``scaled`` and ``weights`` as float64 arrays.

    Shapes
    ------
    ``scores`` (n,) -> ``scaled``, ``weights`` (n,).

    Raises
    ------
    ValueError
        If ``scores`` is not a non-empty 1-D array of finite numbers or ``d_k`` is not a
        positive integer.

    References
    ----------
    Post "Self-Attention in Detail" (third and fourth steps); paper §3.2.1, Eq. (1).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0 or not np.all(np.isfinite(scores)):
        raise ValueError(f"scores: expected a non-empty 1-D array of finite numbers, got {scores!r}")
    d_k = _check_d_k(d_k)
    scaled = scores / math.sqrt(d_k)  # (n,)
    return ScaledSoftmax(scores, scaled, reference.softmax(scaled))


class SaturationExample(NamedTuple):
    """One random query against a few random keys, softmaxed with and without the scaling."""

    d_k: int
    scores: np.ndarray
    """q . k_j for each key, shape (n_keys,)."""
    unscaled: np.ndarray
    """softmax(scores), shape (n_keys,)."""
    scaled: np.ndarray
    """softmax(scores / sqrt(d_k)), shape (n_keys,)."""


def _unit_normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def saturation_example(d_k: int, n_keys: int = 8, seed: int = 0) -> SaturationExample:
    """One query and ``n_keys`` keys with independent unit-variance components, softmaxed both ways.

    The paper's footnote: with such components, ``q . k`` has mean 0 and variance d_k, so the
    unscaled scores spread out as d_k grows and their softmax approaches a one-hot vector;
    dividing by sqrt(d_k) brings the variance back to 1.

    Parameters
    ----------
    d_k : int
        Dimension of the query and key vectors.
    n_keys : int
        Number of keys (words attended to), at least 2.
    seed : int
        Seed of the random numbers.

    Returns
    -------
    SaturationExample
        ``d_k``, ``scores``, ``unscaled`` and ``scaled`` softmax weights.

    Shapes
    ------
    ``scores``, ``unscaled``, ``scaled`` (n_keys,).

    Raises
    ------
    ValueError
        If ``d_k`` is not a positive integer or ``n_keys`` < 2.

    References
    ----------
    Post "Self-Attention in Detail" ("more stable gradients"); paper §3.2.1 and footnote 4.
    """
    d_k = _check_d_k(d_k)
    n_keys = _check_d_k(n_keys, "n_keys")
    if n_keys < 2:
        raise ValueError(f"n_keys: expected at least 2 keys, got {n_keys}")
    rng = np.random.default_rng(seed)
    q = _unit_normal(rng, d_k)  # (d_k,)
    k = _unit_normal(rng, n_keys, d_k)  # (n_keys, d_k)
    scores = k @ q  # (n_keys,)
    return SaturationExample(d_k, scores, reference.softmax(scores),
                             reference.softmax(scores / math.sqrt(d_k)))


class SaturationCurve(NamedTuple):
    """Averages over many random queries and keys, per d_k: how the softmax saturates."""

    d_k: np.ndarray
    """The key dimensions, shape (m,)."""
    score_variance: np.ndarray
    """Empirical variance of q . k (the paper's footnote says d_k), shape (m,)."""
    max_weight_unscaled: np.ndarray
    """Mean of the largest softmax weight without scaling (1 = one-hot), shape (m,)."""
    max_weight_scaled: np.ndarray
    """The same after dividing by sqrt(d_k), shape (m,)."""
    gradient_unscaled: np.ndarray
    """Mean Frobenius norm of the softmax Jacobian diag(p) - p p^T without scaling, shape (m,)."""
    gradient_scaled: np.ndarray
    """The same with scaling, shape (m,)."""


def _jacobian_norm(p: np.ndarray) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian diag(p) - p p^T, for each row of p (..., n)."""
    jac = np.einsum("...i,ij->...ij", p, np.eye(p.shape[-1])) - p[..., :, None] * p[..., None, :]
    return np.sqrt((jac ** 2).sum(axis=(-2, -1)))  # (...,)


def saturation_curve(d_k_values: Sequence[int] = tuple(2 ** i for i in range(11)),
                     n_keys: int = 8, n_samples: int = 1000, seed: int = 0) -> SaturationCurve:
    """Why the scores are divided by sqrt(d_k): variance, peak weight and gradient size per d_k.

    For each d_k, ``n_samples`` queries are scored against ``n_keys`` keys, all with independent
    standard-normal components. Without scaling the variance of the scores grows like d_k, the
    largest softmax weight tends to 1 and the softmax's Jacobian (its gradient) to 0; with the
    scaling all three stay put.

    Parameters
    ----------
    d_k_values : sequence of int
        Key dimensions to try (default 1, 2, 4, ..., 1024).
    n_keys : int
        Keys per query, at least 2.
    n_samples : int
        Queries per d_k.
    seed : int
        Seed of the random numbers.

    Returns
    -------
    SaturationCurve
        One value per d_k in each field.

    Shapes
    ------
    Every field (len(d_k_values),).

    Raises
    ------
    ValueError
        If ``d_k_values`` is empty or holds a non-positive value, ``n_keys`` < 2 or
        ``n_samples`` < 2.

    References
    ----------
    Post "Self-Attention in Detail"; paper §3.2.1 and footnote 4.
    """
    values = [_check_d_k(d, "d_k_values") for d in d_k_values]
    if not values:
        raise ValueError("d_k_values: expected at least one key dimension, got none")
    n_keys = _check_d_k(n_keys, "n_keys")
    n_samples = _check_d_k(n_samples, "n_samples")
    if n_keys < 2 or n_samples < 2:
        raise ValueError(f"n_keys, n_samples: expected at least 2 each, got {n_keys}, {n_samples}")
    rng = np.random.default_rng(seed)
    fields: list[list[float]] = [[] for _ in range(5)]
    for d_k in values:
        q = _unit_normal(rng, n_samples, 1, d_k)  # (n_samples, 1, d_k)
        k = _unit_normal(rng, n_samples, n_keys, d_k)  # (n_samples, n_keys, d_k)
        scores = (q * k).sum(axis=-1)  # (n_samples, n_keys)
        unscaled = reference.softmax(scores)  # (n_samples, n_keys)
        scaled = reference.softmax(scores / math.sqrt(d_k))  # (n_samples, n_keys)
        for field, value in zip(fields, (scores.var(), unscaled.max(-1).mean(),
                                         scaled.max(-1).mean(), _jacobian_norm(unscaled).mean(),
                                         _jacobian_norm(scaled).mean())):
            field.append(float(value))
    return SaturationCurve(np.array(values), *(np.array(f) for f in fields))


# --------------------------------------------------------------------------------------------
# Multi-head bookkeeping
# --------------------------------------------------------------------------------------------

class MultiHeadExample(NamedTuple):
    """Small integer matrices for multi-head attention, and every intermediate result."""

    words: list[str]
    """One word per row of X."""
    X: np.ndarray
    """Inputs, shape (seq, d_model)."""
    W_Q: np.ndarray
    """Query weights of all heads side by side, shape (d_model, d_model)."""
    W_K: np.ndarray
    """Key weights, shape (d_model, d_model)."""
    W_V: np.ndarray
    """Value weights, shape (d_model, d_model)."""
    W_O: np.ndarray
    """Output weights, shape (d_model, d_model)."""
    n_heads: int
    d_k: int
    result: reference.MultiHeadResult
    """Fields q, k, v, weights, z (per head), concat, output."""

    def projections(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K, V of all heads side by side (``X @ W_Q`` etc.), each (seq, d_model)."""
        return tuple(reference.merge_heads(m) for m in (self.result.q, self.result.k,
                                                        self.result.v))

    def head_weights(self, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The post's W_Q^h, W_K^h, W_V^h: columns ``h*d_k:(h+1)*d_k``, each (d_model, d_k)."""
        if not 0 <= head < self.n_heads:
            raise ValueError(f"head: expected a head in [0, {self.n_heads}), got {head}")
        cols = slice(head * self.d_k, (head + 1) * self.d_k)
        return self.W_Q[:, cols], self.W_K[:, cols], self.W_V[:, cols]


def multi_head_example(d_model: int = 8, n_heads: int = 2,
                       words: Sequence[str] = reference.THINKING_MACHINES_WORDS,
                       seed: int = 0) -> MultiHeadExample:
    """Multi-headed self-attention on small integer matrices, every intermediate kept.

    The inputs and weights depend on ``d_model``, ``words`` and ``seed`` only, so changing
    ``n_heads`` cuts the same matrices into a different number of heads. The entries of X and
    of the weights are integers in {-1, 0, 1}, so Q, K, V and the scores are small integers.

    Parameters
    ----------
    d_model : int
        Model width (2 to 16, so the matrices stay printable).
    n_heads : int
        Number of heads; must divide ``d_model``.
    words : sequence of str
        The input words, one row of X each (1 to 8).
    seed : int
        Seed of the random integers.

    Returns
    -------
    MultiHeadExample
        X, W_Q, W_K, W_V, W_O, n_heads, d_k and the result of
        :func:`illustrated.reference.multi_head_attention` (no biases).

    Shapes
    ------
    ``X`` (seq, d_model); weights (d_model, d_model); ``result.z`` (n_heads, seq, d_k);
    ``result.concat``, ``result.output`` (seq, d_model).

    Raises
    ------
    ValueError
        If ``d_model`` is outside [2, 16], ``n_heads`` does not divide it, or ``words`` has not
        1 to 8 words.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    d_model = _check_d_k(d_model, "d_model")
    if not 2 <= d_model <= 16:
        raise ValueError(f"d_model: expected 2 to 16 (printable matrices), got {d_model}")
    n_heads = _check_d_k(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(f"n_heads: expected a divisor of d_model={d_model}, got {n_heads}")
    words = [str(w) for w in words]
    if not 1 <= len(words) <= 8:
        raise ValueError(f"words: expected 1 to 8 words, got {len(words)}")
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(len(words), d_model)).astype(np.float64)  # (seq, d_model)
    W_Q, W_K, W_V, W_O = (rng.integers(-1, 2, size=(d_model, d_model)).astype(np.float64)
                          for _ in range(4))  # each (d_model, d_model)
    result = reference.multi_head_attention(X, X, X, W_Q, W_K, W_V, W_O, n_heads)
    return MultiHeadExample(words, X, W_Q, W_K, W_V, W_O, n_heads, d_model // n_heads, result)


class MultiplyAdds(NamedTuple):
    """Multiply-adds of one multi-head self-attention layer, stage by stage."""

    n_heads: int
    d_k: int
    projections: int
    """Q, K and V: 3 * seq * d_model * (n_heads * d_k)."""
    scores: int
    """Q K^T in every head: n_heads * seq * seq * d_k."""
    weighted_sum: int
    """weights @ V in every head: n_heads * seq * seq * d_k."""
    output: int
    """concat @ W_O: seq * (n_heads * d_k) * d_model."""
    exponentials: int
    """Softmax exponentials (not multiply-adds, counted apart): n_heads * seq * seq."""

    @property
    def total(self) -> int:
        """All multiply-adds (the exponentials are not counted)."""
        return self.projections + self.scores + self.weighted_sum + self.output


def multiply_adds(seq: int, d_model: int, n_heads: int, d_k: int | None = None) -> MultiplyAdds:
    """Count the multiply-adds of multi-headed self-attention on ``seq`` words.

    With the default ``d_k = d_model / n_heads`` the count does not depend on ``n_heads``: the
    heads share out the width rather than multiply it. Pass ``d_k=d_model`` to count heads that
    each keep the full width (n_heads times the work).

    Parameters
    ----------
    seq : int
        Number of words.
    d_model : int
        Model width.
    n_heads : int
        Number of heads.
    d_k : int, optional
        Width of each head's queries, keys and values; default ``d_model // n_heads`` (then
        ``n_heads`` must divide ``d_model``).

    Returns
    -------
    MultiplyAdds
        Counts per stage and their ``total``.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``n_heads`` does not divide ``d_model`` (with
        the default ``d_k``).

    References
    ----------
    Post "Self-Attention in Detail" ("an architecture choice to make the computation of
    multiheaded attention (mostly) constant"); paper §3.2.2 (last paragraph).
    """
    seq, d_model, n_heads = (_check_d_k(v, n) for v, n in
                             ((seq, "seq"), (d_model, "d_model"), (n_heads, "n_heads")))
    if d_k is None:
        if d_model % n_heads:
            raise ValueError(f"n_heads: expected a divisor of d_model={d_model}, got {n_heads}")
        d_k = d_model // n_heads
    d_k = _check_d_k(d_k)
    width = n_heads * d_k
    return MultiplyAdds(n_heads, d_k, projections=3 * seq * d_model * width,
                        scores=n_heads * seq * seq * d_k, weighted_sum=n_heads * seq * seq * d_k,
                        output=seq * width * d_model, exponentials=n_heads * seq * seq)


def multiply_add_table(seq: int, d_model: int, heads: Sequence[int] = (1, 2, 4, 8)
                       ) -> list[MultiplyAdds]:
    """:func:`multiply_adds` for each head count (d_k = d_model / n_heads), to print as a table.

    Parameters
    ----------
    seq, d_model : int
        Number of words and model width.
    heads : sequence of int
        Head counts, each dividing ``d_model``.

    Returns
    -------
    list of MultiplyAdds
        One per head count, in order.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        As :func:`multiply_adds`, or if ``heads`` is empty.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    if len(heads) == 0:
        raise ValueError("heads: expected at least one head count, got none")
    return [multiply_adds(seq, d_model, h) for h in heads]


def torch_flops(module: nn.Module, x: torch.Tensor) -> int:
    """Floating-point operations of ``module(x, x, x)`` as counted by ``torch.utils.flop_counter``.

    Torch counts a multiply-add as 2 operations and counts matrix products only (no softmax,
    no bias additions), so for :class:`illustrated.modules.MultiHeadAttention` the result is
    twice :attr:`MultiplyAdds.total`.

    Parameters
    ----------
    module : torch.nn.Module
        Called as ``module(x, x, x)`` (self-attention), in eval mode and without gradients;
        :class:`illustrated.modules.MultiHeadAttention` with ``return_attention=True``, so that
        its step-by-step path (the matrix products of paper Eq. 1) is what is counted.
    x : torch.Tensor
        Input.

    Returns
    -------
    int
        Total counted operations.

    Shapes
    ------
    ``x`` (batch, seq, d_model).

    Raises
    ------
    ValueError
        If ``x`` is not a 3-D tensor.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x: expected a (batch, seq, d_model) tensor, got {getattr(x, 'shape', x)!r}")
    from torch.utils.flop_counter import FlopCounterMode

    from ..modules import MultiHeadAttention

    # Ours runs the book's step-by-step path (return_attention=True), whose products are the
    # ones the chapter counts; otherwise it would take a faster path (batched products on a
    # CPU, a fused kernel that torch counts as one opaque call on a GPU).
    keywords = {"return_attention": True} if isinstance(module, MultiHeadAttention) else {}
    with EvalMode(module), FlopCounterMode(display=False) as counter:
        module(x, x, x, **keywords)
    return int(counter.get_total_flops())


def to_torch_multihead(mha: nn.Module) -> nn.MultiheadAttention:
    """The same multi-head attention as a ``torch.nn.MultiheadAttention`` with copied weights.

    Torch stores the three input projections stacked in ``in_proj_weight`` (queries, keys,
    values, each d_model rows, head h in rows ``h*d_k:(h+1)*d_k``: the same slicing as ours) and
    W_O in ``out_proj``.

    Parameters
    ----------
    mha : illustrated.modules.MultiHeadAttention
        The module to copy (with biases).

    Returns
    -------
    torch.nn.MultiheadAttention
        ``batch_first=True``, same dtype, no dropout, in eval mode.

    Shapes
    ------
    Both take (batch, seq, d_model) and give (batch, seq, d_model).

    Raises
    ------
    ValueError
        If ``mha`` lacks biases (our module's ``bias=False``) or is not a MultiHeadAttention.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2; ``torch.nn.MultiheadAttention``.
    """
    for name in ("w_q", "w_k", "w_v", "w_o", "n_heads", "d_model"):
        if not hasattr(mha, name):
            raise ValueError(f"mha: expected an illustrated.modules.MultiHeadAttention, "
                             f"got {type(mha).__name__} without {name!r}")
    if mha.w_q.bias is None:
        raise ValueError("mha: expected a module with biases (bias=True), got bias=False")
    dtype = mha.w_q.weight.dtype
    theirs = nn.MultiheadAttention(mha.d_model, mha.n_heads, dropout=0.0, bias=True,
                                   batch_first=True, dtype=dtype)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
        theirs.out_proj.weight.copy_(mha.w_o.weight)
        theirs.out_proj.bias.copy_(mha.w_o.bias)
    return theirs.eval()
