"""Compute functions of chapter 05: where the positional vectors come from and what they do.

Each function returns plain NumPy arrays and labels for :mod:`illustrated.plots.positional`:
a real sentence's embeddings plus its positional vectors, the two layouts of the sinusoids side
by side, the fixed matrix that shifts every position by ``k``, and self-attention's blindness
to word order when no positions are added.

References: post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
"""
from __future__ import annotations

from collections import defaultdict, deque
from typing import NamedTuple, Sequence

import numpy as np
import torch

from .. import reference
from ..data import Vocab
from ..decoding import EvalMode
from ..modules.transformer import Transformer
from ..tracing import trace
from ._checks import encode_sentence, to_numpy

__all__ = [
    "SentenceWithPositions", "embed_with_positions",
    "LayoutComparison", "compare_layouts", "regroup_interleaved",
    "RelativeShift", "relative_shift",
    "OrderBlindness", "order_blindness",
]


class SentenceWithPositions(NamedTuple):
    """A sentence's embeddings, its positional vectors and their sum, row by row."""

    words: list[str]
    """The sentence's words, one per row."""
    embedding: np.ndarray
    """Embeddings as the model computes them (scaled by sqrt(d_model)), shape (seq, d_model)."""
    position: np.ndarray
    """The positional vectors of positions 0..seq-1, shape (seq, d_model)."""
    total: np.ndarray
    """What the first encoder receives: the model's PositionalEncoding output, (seq, d_model)."""


def embed_with_positions(model: Transformer, vocab: Vocab, sentence: str,
                         side: str = "source") -> SentenceWithPositions:
    """Each word's embedding, plus the vector that says where the word is: the encoder's input.

    Parameters
    ----------
    model : Transformer
        A (trained) model; its embedding table and its ``positional`` module are used as they are.
    vocab : Vocab
        The vocabulary of ``side`` (source vocabulary for ``"source"``).
    sentence : str
        Words separated by spaces.
    side : {"source", "target"}
        Which embedding table: the encoder's (``src_embed``) or the decoder's (``tgt_embed``).

    Returns
    -------
    SentenceWithPositions
        ``words``, ``embedding``, ``position`` and ``total``; ``total`` is computed by the model's
        own ``PositionalEncoding`` (in eval mode, so without dropout).

    Shapes
    ------
    embedding, position, total: (seq, d_model).

    Raises
    ------
    ValueError
        If ``side`` is unknown, ``vocab`` does not fit the model, the sentence is empty or holds
        a word outside the vocabulary, or it is longer than the model's ``max_len``.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (first figure);
    paper §3.4 (embeddings times sqrt(d_model)) and §3.5.
    """
    if side not in ("source", "target"):
        raise ValueError(f"side: expected 'source' or 'target', got {side!r}")
    embed = model.src_embed if side == "source" else model.tgt_embed
    if len(vocab) != embed.lut.num_embeddings:
        raise ValueError(f"vocab: has {len(vocab)} tokens but the model's {side} embedding table "
                         f"has {embed.lut.num_embeddings} rows")
    ids = encode_sentence(vocab, sentence)
    if len(ids) > model.cfg.max_len:
        raise ValueError(f"sentence: {len(ids)} words, more than max_len={model.cfg.max_len}")
    if side == "source":  # the encoder's input, selected from the trace of the encoder side
        t = trace(model, ids, src_vocab=vocab)
        return SentenceWithPositions(t.source_tokens, t.src_embeddings, t.src_positions,
                                     t.encoder_input)
    # The decoder's input needs no source sentence: the embedding and positional modules alone.
    with EvalMode(model):
        tokens = torch.tensor([ids], device=model.positional.pe.device)  # (1, seq)
        embedding = embed(tokens)  # (1, seq, d_model)
        total = model.positional(embedding)  # (1, seq, d_model)
    return SentenceWithPositions([vocab.token(i) for i in ids], to_numpy(embedding[0]),
                                 to_numpy(model.positional.pe[:len(ids)]), to_numpy(total[0]))


def regroup_interleaved(pe: np.ndarray) -> np.ndarray:
    """Reorder the paper's interleaved columns as sines first, then cosines (the post's layout).

    Parameters
    ----------
    pe : numpy.ndarray
        An interleaved table: column 2i holds a sine, column 2i+1 the matching cosine.

    Returns
    -------
    numpy.ndarray
        The same numbers with columns [0, 2, 4, ..., 1, 3, 5, ...]: a pure column permutation.

    Shapes
    ------
    (n_positions, d_model) -> (n_positions, d_model).

    Raises
    ------
    ValueError
        If ``pe`` is not 2-D with an even number of columns.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (July 2020 update);
    paper §3.5.
    """
    pe = np.asarray(pe, dtype=np.float64)
    if pe.ndim != 2 or pe.shape[1] % 2:
        raise ValueError(f"pe: expected shape (n_positions, even d_model), got {pe.shape}")
    d_model = pe.shape[1]
    order = np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])  # (d_model,)
    return pe[:, order]


class LayoutComparison(NamedTuple):
    """The post's (tensor2tensor) table beside the paper's, and how far apart they are."""

    concatenated: np.ndarray
    """tensor2tensor's table: all sines, then all cosines, shape (n_positions, d_model)."""
    interleaved: np.ndarray
    """The paper's table: sin on even, cos on odd columns, shape (n_positions, d_model)."""
    regrouped: np.ndarray
    """``interleaved``, columns reordered into the concatenated layout, (n_positions, d_model)."""
    frequencies_concatenated: np.ndarray
    """tensor2tensor's angular frequencies exp(-i ln(10^4) / (d/2 - 1)), shape (d_model/2,)."""
    frequencies_interleaved: np.ndarray
    """The paper's angular frequencies 1 / 10000^(2i/d), shape (d_model/2,)."""
    frequency_ratio: np.ndarray
    """``frequencies_interleaved / frequencies_concatenated``, shape (d_model/2,)."""
    difference: np.ndarray
    """``concatenated - regrouped``, shape (n_positions, d_model)."""
    max_difference: float
    """Largest |concatenated - regrouped| over the table."""
    worst_column_match: float
    """Over the columns of ``concatenated``, the largest distance to the closest column of
    ``interleaved`` (max |difference| over positions): > 0 means that no permutation of the
    paper's columns gives the post's table."""


def compare_layouts(n_positions: int = 20, d_model: int = 512) -> LayoutComparison:
    """Show that the post's table and the paper's differ in column order and in frequencies.

    Parameters
    ----------
    n_positions : int, default 20
        Rows (positions 0..n_positions-1), as in the post's figure.
    d_model : int, default 512
        Even width, as in the post's figure.

    Returns
    -------
    LayoutComparison

    Shapes
    ------
    tables (n_positions, d_model); frequencies (d_model/2,).

    Raises
    ------
    ValueError
        If ``n_positions`` < 1 or ``d_model`` is not an even integer >= 4 (with two frequency
        pairs or fewer the spacings coincide).

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding" (July 2020 update);
    paper §3.5; tensor2tensor ``get_timing_signal_1d``.
    """
    if isinstance(n_positions, bool) or not isinstance(n_positions, (int, np.integer)) \
            or n_positions < 1:
        raise ValueError(f"n_positions: expected a positive integer, got {n_positions!r}")
    if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) or d_model < 4 \
            or d_model % 2:
        raise ValueError(f"d_model: expected an even integer >= 4, got {d_model!r}")
    concatenated = reference.positional_encoding(n_positions, d_model, "concatenated")
    interleaved = reference.positional_encoding(n_positions, d_model, "interleaved")
    regrouped = regroup_interleaved(interleaved)  # (n_positions, d_model)
    w_concat = reference.positional_frequencies(d_model, "concatenated")  # (d_model/2,)
    w_inter = reference.positional_frequencies(d_model, "interleaved")  # (d_model/2,)
    # For each post column, the distance (max over positions) to the closest paper column;
    # one column at a time keeps the memory at (n_positions, d_model).
    closest = np.array([np.abs(interleaved - column[:, None]).max(axis=0).min()  # column (n, 1)
                        for column in concatenated.T])  # (d_model,)
    return LayoutComparison(concatenated, interleaved, regrouped, w_concat, w_inter,
                            w_inter / w_concat, concatenated - regrouped,
                            float(np.abs(concatenated - regrouped).max()), float(closest.max()))


class RelativeShift(NamedTuple):
    """The fixed matrix M_k and the check PE(pos + k) = M_k PE(pos)."""

    k: int
    """The offset."""
    matrix: np.ndarray
    """M_k, shape (d_model, d_model)."""
    pe: np.ndarray
    """The positional table, shape (n_positions, d_model)."""
    position: int
    """The position shown."""
    rotated: np.ndarray
    """``M_k @ PE(position)``, shape (d_model,)."""
    shifted: np.ndarray
    """``PE(position + k)`` read from the table, shape (d_model,)."""
    max_error: float
    """Largest |M_k PE(p) - PE(p + k)| over every position p with p + k in the table."""


def relative_shift(k: int, position: int, d_model: int = 16, layout: str = "interleaved",
                   n_positions: int = 50) -> RelativeShift:
    """Moving k words further is the same matrix for every position: PE(pos + k) = M_k PE(pos).

    Parameters
    ----------
    k : int
        Offset, 0 <= k < n_positions.
    position : int
        The position shown, with 0 <= position and position + k < n_positions.
    d_model : int, default 16
        Even width.
    layout : {"interleaved", "concatenated"}
        Column layout of the table.
    n_positions : int, default 50
        Rows of the table the check runs over.

    Returns
    -------
    RelativeShift

    Shapes
    ------
    matrix (d_model, d_model); pe (n_positions, d_model); rotated, shifted (d_model,).

    Raises
    ------
    ValueError
        If ``k`` or ``position`` is out of range, or as
        :func:`illustrated.reference.relative_position_matrix`.

    References
    ----------
    Paper §3.5 ("for any fixed offset k, PE_pos+k can be represented as a linear function of
    PE_pos"); post "Representing The Order of The Sequence Using Positional Encoding".
    """
    if isinstance(n_positions, bool) or not isinstance(n_positions, (int, np.integer)) \
            or n_positions < 2:
        raise ValueError(f"n_positions: expected an integer >= 2, got {n_positions!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < n_positions:
        raise ValueError(f"k: expected an integer in [0, {n_positions}), got {k!r}")
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) \
            or not 0 <= position < n_positions - k:
        raise ValueError(f"position: expected an integer in [0, {n_positions - k}) so that "
                         f"position + k={k} stays in the table, got {position!r}")
    matrix = reference.relative_position_matrix(int(k), d_model, layout)  # (d_model, d_model)
    pe = reference.positional_encoding(n_positions, d_model, layout)  # (n_positions, d_model)
    moved = pe[: n_positions - k] @ matrix.T  # (n_positions - k, d_model)
    return RelativeShift(int(k), matrix, pe, int(position), moved[position], pe[position + k],
                         float(np.abs(moved - pe[k:]).max()))


class OrderBlindness(NamedTuple):
    """Self-attention's outputs for two orderings of the same words, without and with positions."""

    words_a: list[str]
    """First sentence."""
    words_b: list[str]
    """Second sentence: the same words in another order."""
    permutation: np.ndarray
    """``permutation[j]`` = the position in ``words_a`` of the word at position j of ``words_b``."""
    z_a: np.ndarray
    """Self-attention output of sentence a without positions, shape (seq, d_model)."""
    z_b: np.ndarray
    """Self-attention output of sentence b without positions, shape (seq, d_model)."""
    z_a_positions: np.ndarray
    """Output of sentence a with positional vectors added first, shape (seq, d_model)."""
    z_b_positions: np.ndarray
    """Output of sentence b with positional vectors added first, shape (seq, d_model)."""
    gap_without: float
    """max |z_b - z_a[permutation]|: 0 (up to rounding) means b's outputs are a's, reordered."""
    gap_with: float
    """max |z_b_positions - z_a_positions[permutation]|: clearly > 0."""


def _matching_permutation(words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
    slots: dict[str, deque[int]] = defaultdict(deque)
    for i, word in enumerate(words_a):
        slots[word].append(i)
    permutation = []
    for word in words_b:
        if not slots[word]:
            raise ValueError(f"words_b: expected the same words as words_a in another order, "
                             f"got {' '.join(words_b)!r} for {' '.join(words_a)!r}")
        permutation.append(slots[word].popleft())
    return np.array(permutation)


def order_blindness(sentence_a: str = "the dog bit the man",
                    sentence_b: str = "the man bit the dog", *, d_model: int = 8,
                    seed: int = 0, layout: str = "interleaved") -> OrderBlindness:
    """Without positions, self-attention gives the same vectors for any order of the same words.

    Every word gets a random embedding (one per distinct word) and one random set of
    W_Q, W_K, W_V is used, so the demonstration holds for any weights, trained or not.

    Parameters
    ----------
    sentence_a, sentence_b : str
        Two sentences made of the same words (with the same counts) in different orders.
    d_model : int, default 8
        Even width of the embeddings (and of queries, keys and values).
    seed : int, default 0
        Seed of the random embeddings and weights.
    layout : {"interleaved", "concatenated"}
        Layout of the positional vectors added in the second half.

    Returns
    -------
    OrderBlindness

    Shapes
    ------
    z_* (seq, d_model); permutation (seq,).

    Raises
    ------
    ValueError
        If the sentences are empty or not made of the same words, or ``d_model`` is not a
        positive even integer.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5
    ("since our model contains no recurrence and no convolution ... we must inject some
    information about the relative or absolute position").
    """
    words_a, words_b = sentence_a.split(), sentence_b.split()
    if not words_a:
        raise ValueError(f"sentence_a: expected at least one word, got {sentence_a!r}")
    if len(words_b) != len(words_a):
        raise ValueError(f"sentence_b: expected {len(words_a)} words like sentence_a, "
                         f"got {len(words_b)}")
    permutation = _matching_permutation(words_a, words_b)  # (seq,)
    pe = reference.positional_encoding(len(words_a), d_model, layout)  # (seq, d_model)
    rng = np.random.default_rng(seed)
    vocabulary = sorted(set(words_a))
    table = dict(zip(vocabulary, rng.normal(size=(len(vocabulary), d_model))))
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
    x_a = np.stack([table[w] for w in words_a])  # (seq, d_model)
    x_b = np.stack([table[w] for w in words_b])  # (seq, d_model)
    z_a = reference.self_attention(x_a, W_Q, W_K, W_V).z
    z_b = reference.self_attention(x_b, W_Q, W_K, W_V).z
    z_a_pe = reference.self_attention(x_a + pe, W_Q, W_K, W_V).z
    z_b_pe = reference.self_attention(x_b + pe, W_Q, W_K, W_V).z
    return OrderBlindness(words_a, words_b, permutation, z_a, z_b, z_a_pe, z_b_pe,
                          float(np.abs(z_b - z_a[permutation]).max()),
                          float(np.abs(z_b_pe - z_a_pe[permutation]).max()))
