"""Training the Transformer: seeds, device choice, the learning-rate schedule, the loop, metrics.

References: post "Recap Of Training" and "The Loss Function"; paper §5.3 (Adam, Eq. 3 warm-up
schedule) and §5.4 (label smoothing).
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from ._args import (ArgumentTypeError, check_bool, check_choice, check_instance, check_int,
                    check_real, describe)
from .data import Vocab, collate, encode_pairs
from .decoding import beam_search, check_model, greedy_decode_batch
from .modules.transformer import Transformer

SCHEDULES = ("constant", "noam", "cosine")

__all__ = ["SCHEDULES", "set_seed", "pick_device", "learning_rate", "History", "TrainingDiverged", "train",
           "exact_match", "translate", "preload_optimizer"]


#: Seeds NumPy accepts: integers in [0, 2**32 - 1].
MAX_SEED = 2**32 - 1


def set_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy and torch (CPU and every CUDA device).

    Raises
    ------
    TypeError
        If ``seed`` is not an integer (the error is also a ValueError).
    ValueError
        If ``seed`` is outside [0, 2**32 - 1] (NumPy's range).
    """
    check_int("seed", seed, low=0, high=MAX_SEED)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def preload_optimizer() -> float:
    """Pay ``torch.optim``'s one-time start-up cost now and return it in seconds.

    The first optimizer a process builds makes torch import ``torch._dynamo`` (about 2 s on
    2 CPU cores with torch 2.13), whatever the model. Callers that time training (the command
    line, ``benchmarks/corpora.py``) call this first so that the time they report is training
    time, and report this cost beside it. Calling it again costs almost nothing.
    """
    start = time.perf_counter()
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    return time.perf_counter() - start


def pick_device(device: str | torch.device = "auto") -> torch.device:
    """Choose where to run: "auto" picks CUDA, then Apple's MPS, then the CPU.

    Raises
    ------
    TypeError
        If ``device`` is neither a str nor a torch.device (the error is also a ValueError).
    ValueError
        If ``device`` names a device type, or a device index, that is not available here
        (a ``torch.device`` as much as a string).
    """
    if not isinstance(device, (str, torch.device)):
        raise ArgumentTypeError(f"device: expected 'auto', 'cpu', 'cuda', 'mps' or a "
                                f"torch.device, got {type(device).__name__} {describe(device)}")
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        chosen = device if isinstance(device, torch.device) else torch.device(device)
    except RuntimeError:
        raise ValueError(f"device: expected 'auto', 'cpu', 'cuda' or 'mps', "
                         f"got {device!r}") from None
    if chosen.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device: expected an available device, got {str(chosen)!r} but no "
                             "CUDA GPU is available here; use 'auto' or 'cpu'")
        if chosen.index is not None and chosen.index >= torch.cuda.device_count():
            raise ValueError(f"device: expected a CUDA index below {torch.cuda.device_count()}, "
                             f"got {str(chosen)!r}")
    elif chosen.type == "mps":
        if getattr(torch.backends, "mps", None) is None or not torch.backends.mps.is_available():
            raise ValueError(f"device: expected an available device, got {str(chosen)!r} but MPS "
                             "is not available here; use 'auto' or 'cpu'")
    elif chosen.type != "cpu":
        raise ValueError(f"device: expected 'auto', 'cpu', 'cuda' or 'mps', got {str(chosen)!r}")
    return chosen


def _check_schedule(step: int, lr: float, warmup: int, schedule: str,
                    total_steps: int | None) -> None:
    """The arguments of :func:`learning_rate`, checked (ValueError/TypeError naming each)."""
    check_int("step", step, low=1)
    check_real("lr", lr, low=0.0, what="a learning rate")
    check_int("warmup", warmup, low=0, what="a number of steps")
    check_choice("schedule", schedule, SCHEDULES)
    if total_steps is not None:
        check_int("total_steps", total_steps, low=1)
    elif schedule == "cosine":
        raise ValueError("total_steps: the 'cosine' schedule needs the number of steps, got None")


def learning_rate(step: int, lr: float, warmup: int, schedule: str = "constant",
                  total_steps: int | None = None) -> float:
    """Learning rate at a 1-based ``step``: linear warm-up over ``warmup`` steps to the peak ``lr``,
    then one of three shapes.

    - "constant": stays at ``lr``.
    - "noam": paper Eq. 3, d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), rescaled so that its
      peak (at ``step == warmup``) is ``lr`` instead of (d_model · warmup)^-0.5: ``lr·sqrt(warmup/step)``.
    - "cosine": half a cosine from ``lr`` down to 0 at ``total_steps`` (needs ``total_steps``).

    Raises
    ------
    TypeError
        If an argument has the wrong type (the error is also a ValueError).
    ValueError
        For a ``step`` below 1, a negative or non-finite ``lr``, a negative ``warmup``, an
        unknown ``schedule``, or "cosine" without ``total_steps``.

    References
    ----------
    Paper §5.3, Eq. 3; Loshchilov & Hutter 2017 (SGDR) for the cosine shape.
    """
    _check_schedule(step, lr, warmup, schedule, total_steps)
    if warmup > 0 and step < warmup:
        return lr * step / warmup
    if schedule == "noam" and warmup > 0:
        return lr * math.sqrt(warmup / step)
    if schedule == "cosine":
        progress = (step - warmup) / max(total_steps - warmup, 1)
        return lr * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return lr


@dataclass
class History:
    """What happened at every training step.

    Attributes
    ----------
    loss : list of floats, cross-entropy per target token (nats), label smoothing included.
    lr : list of floats, learning rate used at each step.
    accuracy : list of floats in [0, 1], share of target tokens predicted right (teacher forcing).
    seconds : list of floats, wall-clock seconds since training started, at the end of each step.
    device : str, where training ran.
    """

    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    device: str = "cpu"

    @property
    def steps(self) -> int:
        """Number of completed steps."""
        return len(self.loss)


class TrainingDiverged(ValueError):
    """Raised when the loss stops being finite; ``history`` holds the steps done before."""

    def __init__(self, message: str, history: History) -> None:
        super().__init__(message)
        self.history = history


def _check_pairs(pairs: object) -> list:
    """``pairs`` as a non-empty list; ValueError/TypeError naming ``pairs`` otherwise."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise ArgumentTypeError(f"pairs: expected a list of (source, target) sentence pairs, "
                                f"got {type(pairs).__name__} {describe(pairs)}")
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs: expected at least one (source, target) pair, got none")
    return pairs


def _check_vocabs(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab) -> None:
    check_instance("src_vocab", src_vocab, Vocab, "a Vocab")
    check_instance("tgt_vocab", tgt_vocab, Vocab, "a Vocab")
    cfg = model.cfg
    for name, vocab, size, pad in (("src_vocab", src_vocab, cfg.src_vocab_size, cfg.pad_id),
                                   ("tgt_vocab", tgt_vocab, cfg.tgt_vocab_size, cfg.tgt_pad_id)):
        if len(vocab) != size or vocab.pad_id != pad:
            raise ValueError(f"{name}: has {len(vocab)} tokens and pad id {vocab.pad_id}, but the "
                             f"model expects {size} tokens and pad id {pad}")


def train(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
          *, steps: int = 300, lr: float = 3e-3, warmup: int = 20, schedule: str = "constant",
          label_smoothing: float = 0.0, batch_size: int = 64, clip_grad: float = 1.0,
          device: str | torch.device = "auto", seed: int = 0,
          callback: Callable[[int, History], None] | None = None,
          progress: bool = True) -> History:
    """Train the model in place with Adam on teacher-forced cross-entropy.

    Each step takes a batch of pairs (shuffled epochs), feeds the target shifted right by one
    (<bos> first) to the decoder, and compares the logits with the target followed by <eos>.

    Parameters
    ----------
    model : Transformer, trained in place (and moved to ``device``).
    pairs : (source, target) sentences.   src_vocab, tgt_vocab : their vocabularies.
    steps : int, optimiser steps.   lr : float, peak learning rate.
    warmup : int, linear warm-up steps.
    schedule : "constant", "noam" (paper Eq. 3) or "cosine" (decays to 0 at ``steps``).
    label_smoothing : float in [0, 1), paper §5.4 (same convention as ``F.cross_entropy``).
    batch_size : int.   clip_grad : float, max gradient norm (0 = no clipping).
    device : "auto", "cpu", "cuda", "mps" or a torch.device.   seed : int, seeds everything.
    callback : called as ``callback(step, history)`` after every step.
    progress : bool, show a tqdm progress bar (works in terminals and notebooks).

    Returns
    -------
    History.

    Raises
    ------
    TypeError
        If an argument has the wrong type (e.g. ``steps=True``, ``lr='0.1'``); the error is also
        a ValueError.
    ValueError
        For an out-of-range argument (``steps``/``batch_size`` below 1, ``lr`` not finite and
        positive, ``warmup`` negative or not an integer, ``clip_grad`` negative or NaN,
        ``label_smoothing`` outside [0, 1), ``seed`` outside [0, 2**32 - 1], a device that is not
        available), vocabularies that do not fit the model, or an empty ``pairs``.
    TrainingDiverged (a ValueError)
        When the loss or the gradients stop being finite (e.g. a learning rate far too high);
        the model is first restored to its weights from before the step that broke it.

    References
    ----------
    Post "Recap Of Training" and "The Loss Function"; paper §5.3 (Adam β=(0.9, 0.98), ε=1e-9)
    and §5.4.
    """
    check_model("model", model)
    pairs = _check_pairs(pairs)
    check_int("steps", steps, low=1)
    check_int("batch_size", batch_size, low=1)
    check_real("lr", lr, low=0.0, low_open=True, what="a learning rate")
    check_real("label_smoothing", label_smoothing, low=0.0, high=1.0, high_open=True,
               what="a smoothing epsilon")
    check_int("warmup", warmup, low=0, what="a number of steps")
    check_real("clip_grad", clip_grad, low=0.0, what="a gradient norm (0 = no clipping)")
    check_int("seed", seed, low=0, high=MAX_SEED)
    if callback is not None and not callable(callback):
        raise ArgumentTypeError(f"callback: expected a function callback(step, history) or "
                                f"None, got {type(callback).__name__}")
    check_bool("progress", progress)
    learning_rate(1, lr, warmup, schedule, steps)  # validates schedule
    _check_vocabs(model, src_vocab, tgt_vocab)
    device = pick_device(device)
    set_seed(seed)
    encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
    longest = max(max(len(s), len(t) + 1) for s, t in encoded)
    if longest > model.cfg.max_len:
        raise ValueError(f"pairs: a sentence needs {longest} positions, more than the model's "
                         f"max_len={model.cfg.max_len}")
    model.to(device).train()
    # The fused kernel updates every parameter in one call: much less overhead on small models.
    fused = device.type in ("cpu", "cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9,
                                 fused=fused)
    params = [p for p in model.parameters()]
    before = [p.detach().clone() for p in params]  # weights before the latest step
    generator = torch.Generator().manual_seed(seed)
    order: list[int] = []
    history = History(device=str(device))
    start = time.perf_counter()
    # As a context manager the bar is closed however training ends (Ctrl-C, an error).
    with tqdm(range(1, steps + 1), desc="training", disable=not progress, leave=False) as bar:
        for step in bar:
            if len(order) < batch_size:  # a new shuffled epoch
                order += torch.randperm(len(encoded), generator=generator).tolist()
            idx, order = order[:batch_size], order[batch_size:]
            batch = collate([encoded[i] for i in idx], src_vocab, tgt_vocab, device=device)
            logits = model(batch.src, batch.tgt_in)  # (batch, tgt_len, tgt_vocab_size)
            loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                   ignore_index=tgt_vocab.pad_id, label_smoothing=label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(params,
                                                       clip_grad if clip_grad > 0 else math.inf)
            if not (torch.isfinite(loss) and torch.isfinite(grad_norm)):
                with torch.no_grad():
                    for p, old in zip(params, before):
                        p.copy_(old)
                raise TrainingDiverged(
                    f"lr: the loss became {loss.item():.3g} at step {step} with lr={lr:g}; "
                    f"training stopped and the model was restored to its weights before step "
                    f"{max(step - 1, 1)}. Try a smaller lr.", history)
            with torch.no_grad():
                for p, old in zip(params, before):
                    old.copy_(p)
            rate = learning_rate(step, lr, warmup, schedule, steps)
            for group in optimizer.param_groups:
                group["lr"] = rate
            optimizer.step()
            with torch.no_grad():
                keep = batch.tgt_out != tgt_vocab.pad_id
                correct = (logits.argmax(-1) == batch.tgt_out) & keep
                history.accuracy.append(float(correct.sum() / keep.sum()))
            history.loss.append(loss.item())
            history.lr.append(rate)
            history.seconds.append(time.perf_counter() - start)
            if progress:
                bar.set_postfix(loss=f"{history.loss[-1]:.3f}",
                                acc=f"{history.accuracy[-1]:.2f}")
            if callback is not None:
                callback(step, history)
    model.eval()
    return history


def translate(model: Transformer, sentences: Sequence[str], src_vocab: Vocab, tgt_vocab: Vocab,
              *, beam_size: int = 1, max_len: int | None = None) -> list[str]:
    """Translate sentences with greedy decoding (``beam_size=1``, batched) or beam search.

    Returns
    -------
    list of target sentences (special tokens dropped).

    Raises
    ------
    TypeError
        If an argument has the wrong type, e.g. a str for ``sentences`` (it would be read
        letter by letter); the error is also a ValueError.
    ValueError
        For an empty sentence or one longer than the model's ``max_len``, vocabularies that do
        not fit the model, or a bad ``beam_size`` or ``max_len`` (see :func:`beam_search`).
        An empty list of sentences gives an empty list.
    """
    check_model("model", model)
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Iterable):
        raise ArgumentTypeError(f"sentences: expected a list of str sentences, got "
                                f"{type(sentences).__name__} {describe(sentences)}")
    sentences = list(sentences)
    _check_vocabs(model, src_vocab, tgt_vocab)
    check_int("beam_size", beam_size, low=1)
    if max_len is None:  # not `max_len or ...`: max_len=0 is an error, not the default
        max_len = model.cfg.max_len - 1
    check_int("max_len", max_len, low=1, high=model.cfg.max_len,
              what="a number of generated tokens")
    if not sentences:
        return []
    encoded = []
    for i, sentence in enumerate(sentences):
        try:
            encoded.append(src_vocab.encode(sentence))
        except ValueError as error:
            raise ValueError(f"sentences: sentence {i}: {error}") from None
    for sentence, ids in zip(sentences, encoded):
        if len(ids) > model.cfg.max_len:
            raise ValueError(f"sentences: {sentence!r:.60} has {len(ids)} tokens, more than "
                             f"max_len={model.cfg.max_len}")
    if beam_size == 1:
        src = torch.nn.utils.rnn.pad_sequence([torch.tensor(ids) for ids in encoded],
                                              batch_first=True, padding_value=src_vocab.pad_id)
        outputs = greedy_decode_batch(model, src, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                      max_len=max_len)
    else:
        outputs = [beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                               beam_size=beam_size, max_len=max_len)[0][0] for ids in encoded]
    return [tgt_vocab.decode(ids) for ids in outputs]


def exact_match(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                tgt_vocab: Vocab, *, beam_size: int = 1) -> float:
    """Share of pairs whose translation equals the target exactly (token by token), in [0, 1].

    Raises
    ------
    TypeError
        If an argument has the wrong type (the error is also a ValueError).
    ValueError
        If ``pairs`` is empty or holds something other than (source, target) sentence pairs,
        or as :func:`translate`.
    """
    pairs = _check_pairs(pairs)
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"pairs: expected (source, target) pairs, got {describe(pair)} "
                             f"at position {i}")
    predictions = translate(model, [s for s, _ in pairs], src_vocab, tgt_vocab, beam_size=beam_size)
    targets = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]
    return sum(p == t for p, t in zip(predictions, targets)) / len(pairs)
