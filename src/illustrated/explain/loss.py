"""The loss function in numbers: output distributions, their targets, cross-entropy, KL, smoothing.

Compute functions for chapter 08. They run a real model on the post's sentences and return NumPy
arrays and word labels for :mod:`illustrated.plots.distributions`.

References: post "Recap Of Training" and "The Loss Function"; paper §5.4 (label smoothing).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .. import reference
from ..data import Vocab, load_corpus
from ..modules.transformer import Transformer
from ..tracing import trace
from ..training import History, set_seed, train
from ._checks import encode_sentence

__all__ = ["untrained_model", "PositionDistributions", "position_distributions",
           "LossBreakdown", "loss_breakdown", "TrainingSnapshots", "train_with_snapshots",
           "smoothed_targets"]


def _check_corpus(corpus: str) -> None:
    from ..presets import SETTINGS

    if corpus not in SETTINGS:
        raise ValueError(f"corpus: expected one of {sorted(SETTINGS)}, got {corpus!r}")


def untrained_model(corpus: str = "post", *, seed: int = 0) -> tuple[Transformer, Vocab, Vocab]:
    """The model before training: its weights are initialized randomly (seeded).

    The corpus's default configuration (``il.SETTINGS``) built exactly as
    :func:`il.train_corpus` builds it, so it is the starting point of that training.

    Parameters
    ----------
    corpus : str, a corpus of :data:`il.data.CORPORA` (default the post's two sentences).
    seed : int.

    Returns
    -------
    (model, src_vocab, tgt_vocab); the model is in eval mode on the CPU.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        For an unknown corpus.

    References
    ----------
    Post "The Loss Function" ("the model's parameters (weights) are all initialized randomly").
    """
    from ..presets import make_config

    _check_corpus(corpus)
    _, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    cfg = make_config(corpus, src_vocab, tgt_vocab)
    set_seed(seed)
    return Transformer(cfg).eval(), src_vocab, tgt_vocab


class PositionDistributions(NamedTuple):
    """The model's output distribution at every target position, and the targets."""

    source_tokens: list[str]
    """The source words."""
    input_tokens: list[str]
    """The decoder's input (teacher forcing): ``<bos>`` and the target words."""
    target_tokens: list[str]
    """What each position must predict: the target words and ``<eos>``."""
    target_ids: np.ndarray
    """Their ids, shape (tgt_len,)."""
    logits: np.ndarray
    """The final linear layer's scores, shape (tgt_len, vocab)."""
    probs: np.ndarray
    """softmax(logits), shape (tgt_len, vocab)."""
    vocab_tokens: list[str]
    """The target vocabulary; column i of ``probs`` is the word ``vocab_tokens[i]``."""


def position_distributions(model: Transformer, source: str, target: str, src_vocab: Vocab,
                           tgt_vocab: Vocab) -> PositionDistributions:
    """The model successively outputs probability distributions, one per target position.

    The decoder gets the target shifted right (``<bos>`` first), as during training, so every
    position's distribution comes out of one forward pass (selected from :func:`il.trace`).

    Parameters
    ----------
    model : Transformer.   source, target : str, one sentence pair.
    src_vocab, tgt_vocab : the model's vocabularies.

    Returns
    -------
    PositionDistributions.

    Shapes
    ------
    target_ids (tgt_len,); logits, probs (tgt_len, vocab); tgt_len = number of target words + 1.

    Raises
    ------
    ValueError
        For a model that is not a Transformer, vocabularies that do not fit it, or empty
        sentences or words the vocabularies do not know.

    References
    ----------
    Post "The Loss Function" (one distribution per output position); paper §3.1 (outputs
    shifted right).
    """
    if not isinstance(model, Transformer):
        raise ValueError(f"model: expected an il.modules.Transformer, got {type(model).__name__}")
    for name, vocab, size in (("src_vocab", src_vocab, model.cfg.src_vocab_size),
                              ("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)):
        if not isinstance(vocab, Vocab) or len(vocab) != size:
            raise ValueError(f"{name}: expected the model's Vocab of {size} tokens, got {vocab!r}")
    # the batch of one that training builds: source words; <bos> + target in, target + <eos> out
    t = trace(model, encode_sentence(src_vocab, source, name="source"), target,
              src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    return PositionDistributions(t.source_tokens, t.decoder_input_tokens, t.target_tokens,
                                 np.array(t.target_ids), t.logits, t.probs,
                                 list(tgt_vocab.tokens))


class LossBreakdown(NamedTuple):
    """One loss computed four ways (all in nats, means over positions)."""

    targets: np.ndarray
    """The target distributions: one-hot, or smoothed with ``label_smoothing``, (n, vocab)."""
    per_position: np.ndarray
    """Cross-entropy of each position, shape (n,)."""
    cross_entropy: float
    """Mean of ``il.reference.cross_entropy(targets, softmax(logits))``."""
    kl_divergence: float
    """Mean of ``il.reference.kl_divergence(targets, softmax(logits))``."""
    target_entropy: float
    """Mean entropy of the targets: ``cross_entropy - kl_divergence`` (0 for one-hot targets)."""
    from_logits: float
    """``il.reference.cross_entropy_from_logits(logits, ids, label_smoothing)``."""
    torch: float
    """``F.cross_entropy(logits, ids, label_smoothing=...)`` in float64."""


def loss_breakdown(logits: np.ndarray, target_ids: Sequence[int], *,
                   label_smoothing: float = 0.0) -> LossBreakdown:
    """How far the model's distributions are from the targets: cross-entropy and KL divergence.

    Parameters
    ----------
    logits : array (n, vocab), one score vector per position.
    target_ids : n ints, the correct word at each position.
    label_smoothing : float in [0, 1], epsilon of :func:`il.reference.smooth_labels`.

    Returns
    -------
    LossBreakdown; ``cross_entropy``, ``from_logits`` and ``torch`` agree, and
    ``cross_entropy - kl_divergence == target_entropy``.

    Shapes
    ------
    logits (n, vocab); target_ids (n,); targets (n, vocab); per_position (n,).

    Raises
    ------
    ValueError
        If ``logits`` is not 2-D, ``target_ids`` does not have one id per row or holds an id
        outside the vocabulary, or ``label_smoothing`` is outside [0, 1].

    References
    ----------
    Post "The Loss Function" (cross-entropy, Kullback-Leibler divergence); paper §5.4.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2:
        raise ValueError(f"logits: expected shape (n, vocab), got {logits.shape}")
    ids = np.asarray(target_ids)
    if ids.shape != logits.shape[:1] or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"target_ids: expected {logits.shape[0]} integer ids, got {ids!r}")
    targets = reference.smooth_labels(ids, logits.shape[1], label_smoothing)  # (n, vocab)
    probs = reference.softmax(logits, axis=-1)  # (n, vocab)
    per_position = reference.cross_entropy(targets, probs)  # (n,)
    kl = reference.kl_divergence(targets, probs)  # (n,)
    entropy = reference.cross_entropy(targets, targets)  # (n,)
    torch_loss = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(ids).long(),
                                 label_smoothing=label_smoothing)
    return LossBreakdown(targets, per_position, float(per_position.mean()), float(kl.mean()),
                         float(entropy.mean()),
                         reference.cross_entropy_from_logits(logits, ids, label_smoothing),
                         float(torch_loss))


class TrainingSnapshots(NamedTuple):
    """The output distributions of one sentence pair at chosen training steps."""

    steps: list[int]
    """The steps snapshotted; 0 is the untrained model."""
    probs: np.ndarray
    """Distributions per snapshot, shape (n_snapshots, tgt_len, vocab)."""
    positions: PositionDistributions
    """The trained model's distributions (the last snapshot) with the labels."""
    history: History
    """Loss, learning rate and accuracy of every training step."""
    model: Transformer
    """The trained model (eval mode, CPU)."""
    src_vocab: Vocab
    """Its source vocabulary."""
    tgt_vocab: Vocab
    """Its target vocabulary."""


def train_with_snapshots(corpus: str = "post", source: str = "je suis étudiant",
                         target: str = "i am a student", *, snapshot_steps: Sequence[int] = (),
                         label_smoothing: float = 0.0, seed: int = 0,
                         **train_overrides) -> TrainingSnapshots:
    """Train the corpus's default model (as :func:`il.train_corpus`) and watch one pair learn.

    The model is built as :func:`untrained_model` builds it and trained with the corpus's
    settings (``il.SETTINGS``) on the CPU; after each step in ``snapshot_steps`` the output
    distributions of ``source`` -> ``target`` are recorded, before training as step 0.

    Parameters
    ----------
    corpus : str.   source, target : str, the pair to watch.
    snapshot_steps : ints in [0, steps], the steps to record (the last step is always added).
    label_smoothing : float in [0, 1), paper §5.4.   seed : int.
    train_overrides : keywords of :func:`il.train` that replace the corpus's settings.

    Returns
    -------
    TrainingSnapshots.

    Shapes
    ------
    probs (n_snapshots, tgt_len, vocab).

    Raises
    ------
    ValueError
        For an unknown corpus, a snapshot step outside [0, steps], or a bad training keyword.

    References
    ----------
    Post "The Loss Function" (the trained model's distributions); paper §5.3, §5.4.
    """
    from ..presets import SETTINGS

    _check_corpus(corpus)
    options = {**SETTINGS[corpus]["train"], "seed": seed, "device": "cpu", "progress": False,
               "label_smoothing": label_smoothing, **train_overrides}
    total = options["steps"]
    wanted = sorted(set(snapshot_steps) | {total})
    if any(not isinstance(s, int) or not 0 <= s <= total for s in wanted):
        raise ValueError(f"snapshot_steps: expected ints in [0, steps={total}], "
                         f"got {list(snapshot_steps)}")
    model, src_vocab, tgt_vocab = untrained_model(corpus, seed=seed)
    pairs, _, _ = load_corpus(corpus, "train")
    snapshots: dict[int, np.ndarray] = {}

    def record(step: int, history: History | None = None) -> None:
        if step in wanted:
            snapshots[step] = position_distributions(model, source, target, src_vocab,
                                                     tgt_vocab).probs

    record(0)
    history = train(model, pairs, src_vocab, tgt_vocab, callback=record, **options)
    model.cpu()
    positions = position_distributions(model, source, target, src_vocab, tgt_vocab)
    return TrainingSnapshots(wanted, np.stack([snapshots[s] for s in wanted]), positions,
                             history, model, src_vocab, tgt_vocab)  # probs (n_snapshots, tgt_len, vocab)


def smoothed_targets(target_ids: Sequence[int], vocab_size: int, epsilon: float) -> np.ndarray:
    """Label smoothing: each target keeps 1 - epsilon and every word gets epsilon / vocab_size.

    Our convention (as ``F.cross_entropy(..., label_smoothing=epsilon)``): the uniform share
    goes to all ``vocab_size`` words, the correct one and the special tokens included.

    Parameters
    ----------
    target_ids : ints, the correct word at each position.   vocab_size : int.
    epsilon : float in [0, 1].

    Returns
    -------
    numpy.ndarray, float64; each row sums to 1.

    Shapes
    ------
    (len(target_ids), vocab_size).

    Raises
    ------
    ValueError
        As :func:`il.reference.smooth_labels`.

    References
    ----------
    Paper §5.4 (epsilon_ls = 0.1); Szegedy et al. 2016 §7.
    """
    return reference.smooth_labels(np.asarray(target_ids), vocab_size, epsilon)  # (n, vocab)
