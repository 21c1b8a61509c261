"""Training the Transformer: seeds, device choice, the learning-rate schedule, the loop, metrics.

References: post "Recap Of Training" and "The Loss Function"; paper §5.3 (Adam, Eq. 3 warm-up
schedule) and §5.4 (label smoothing).
"""
from __future__ import annotations

import contextlib
import hashlib
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from tqdm.auto import tqdm

from ._args import (ArgumentTypeError, check_bool, check_choice, check_instance, check_int,
                    check_real, describe)
from ._atomic import check_writable
from .checkpoint import estimate_bytes, load_training_state, save_checkpoint
from .data import Vocab, collate, detokenize, encode_pairs, tokenize
from .decoding import beam_search, check_model, greedy_decode_batch
from .modules.transformer import Transformer

SCHEDULES = ("constant", "noam", "cosine")

__all__ = ["SCHEDULES", "PRECISIONS", "set_seed", "pick_device", "learning_rate", "History",
           "TrainingDiverged", "train", "exact_match", "reference", "translate",
           "preload_optimizer"]


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


PRECISIONS = ("fp32", "bf16")


@contextlib.contextmanager
def _global_rng_kept(device: torch.device) -> Iterator[None]:
    """Give back the global RNG states (Python, NumPy, torch CPU/CUDA/MPS) on the way out."""
    python, numpy_state, cpu = random.getstate(), np.random.get_state(), torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if device.type == "cuda" or (
        torch.cuda.is_available() and torch.cuda.is_initialized()) else None
    mps = torch.mps.get_rng_state() if device.type == "mps" else None
    try:
        yield
    finally:
        random.setstate(python)
        np.random.set_state(numpy_state)
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)
        if mps is not None:
            torch.mps.set_rng_state(mps)


def _rng_state(device: torch.device) -> dict:
    """The global RNG states a resumed run needs, as tensors, numbers and lists (weights_only)."""
    version, keys, gauss = random.getstate()
    name, mt, pos, has_gauss, cached = np.random.get_state()
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
            "python": [version, list(keys), gauss],
            "numpy": [name, torch.from_numpy(mt.astype(np.int64)), pos, has_gauss, cached]}


def _set_rng_state(state: dict, device: torch.device) -> None:
    """Restore what :func:`_rng_state` saved (a CUDA state only on a CUDA device)."""
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and state["cuda"] is not None:
        try:
            torch.cuda.set_rng_state(state["cuda"], device)
        except RuntimeError:
            raise ValueError("resume: a CUDA generator state torch refuses (field 'rng')") from None
    version, keys, gauss = state["python"]
    random.setstate((version, tuple(keys), gauss))
    name, mt, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, mt.numpy().astype(np.uint32), pos, has_gauss, cached))


def _to_cpu(value: object) -> object:
    """A copy of a nest of dicts/lists/tuples whose tensors are moved to the CPU."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _process_group(distributed: bool | None) -> tuple[int, int, bool]:
    """(rank, world_size, True) under a running process group, (0, 1, False) when alone."""
    if distributed is not None:
        check_bool("distributed", distributed)
    running = dist.is_available() and dist.is_initialized()
    if distributed and not running:
        raise ValueError("distributed: expected a running process group (launch with torchrun "
                         "and call illustrated.distributed.init() first), got none")
    if running and distributed is not False:
        return dist.get_rank(), dist.get_world_size(), True
    return 0, 1, False


def train(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
          *, steps: int = 300, lr: float = 3e-3, warmup: int = 20, schedule: str = "constant",
          label_smoothing: float = 0.0, batch_size: int = 64, clip_grad: float = 1.0,
          device: str | torch.device = "auto", seed: int = 0,
          callback: Callable[[int, History], None] | None = None,
          progress: bool = True, grad_accum_steps: int = 1, precision: str = "fp32",
          distributed: bool | None = None, checkpoint_every: int = 0,
          checkpoint_path: str | os.PathLike | None = None,
          resume: str | os.PathLike | None = None) -> History:
    """Train the model in place with Adam on teacher-forced cross-entropy.

    Each step takes a batch of pairs (shuffled epochs), feeds the target shifted right by one
    (<bos> first) to the decoder, and compares the logits with the target followed by <eos>.
    The global RNGs (Python, NumPy, torch) are seeded with ``seed`` for the run and given back
    to the caller as they were.

    One loop serves one process and several: under a running ``torch.distributed`` process
    group (``torchrun``, :func:`illustrated.distributed.init`) the model is wrapped in
    ``DistributedDataParallel``; every process draws the same shuffled global batch of
    ``batch_size`` pairs and takes pairs ``rank, rank + world_size, ...`` of it (a
    DistributedSampler-style split), and only rank 0 shows progress and writes checkpoints.
    With several processes or ``grad_accum_steps`` > 1, each micro-batch's loss is its summed
    cross-entropy divided by the whole global batch's target tokens, so that the accumulated
    (and DDP-averaged) gradient is the gradient of the global batch's mean loss. Alone and
    without accumulation, the loss is ``F.cross_entropy``'s mean, as it always was.

    Parameters
    ----------
    model : Transformer, trained in place (and moved to ``device``).
    pairs : (source, target) sentences.   src_vocab, tgt_vocab : their vocabularies.
    steps : int, optimiser steps (in all, counting those of a resumed run).
    lr : float, peak learning rate.   warmup : int, linear warm-up steps.
    schedule : "constant", "noam" (paper Eq. 3) or "cosine" (decays to 0 at ``steps``).
    label_smoothing : float in [0, 1), paper §5.4 (same convention as ``F.cross_entropy``).
    batch_size : int, pairs per optimiser step (the global batch, over all processes).
    clip_grad : float, max gradient norm (0 = no clipping).
    device : "auto", "cpu", "cuda", "mps" or a torch.device; under a process group "auto" is
        this rank's GPU with NCCL, the CPU with gloo.
    seed : int, seeds the global RNGs for the run and the batch order.
    callback : called as ``callback(step, history)`` after every step (on every process).
    progress : bool, show a tqdm progress bar (works in terminals and notebooks; rank 0 only).
    grad_accum_steps : int, micro-batches per step; their gradients add up before one update
        (a big batch in the memory of a small one).
    precision : "fp32" or "bf16" (``torch.autocast`` with bfloat16 for the forward pass and the
        loss; weights, gradients and Adam's state stay float32). CUDA (bf16-capable) or CPU.
    distributed : None (default: use DDP when a process group is running), True (require one)
        or False (train alone even so).
    checkpoint_every : int, write ``checkpoint_path`` every that many steps and after the last
        one (0 = never): the model, vocabularies and config as :func:`il.save_checkpoint`, plus
        Adam's state, the step, the batch order, the global RNG states and the history,
        atomically (a crash mid-write leaves the previous checkpoint).
    checkpoint_path : file the checkpoints go to (needed when ``checkpoint_every`` > 0); its
        file system must have room for one (:func:`illustrated.checkpoint.estimate_bytes`)
        before training starts.
    resume : a checkpoint written with ``checkpoint_every``: load its weights into ``model``
        and continue its run up to ``steps``. On one process in fp32, training 20 steps equals
        training 10, checkpointing and resuming to 20, bit for bit. The data (the sha256 of the
        pairs as ids and of both vocabularies, stored in every checkpoint) and the recipe (lr,
        warmup, schedule, label_smoothing, batch_size, clip_grad, seed, grad_accum_steps,
        precision, number of processes) must be the checkpoint's.

    Returns
    -------
    History (a resumed run's includes the steps done before it). Under DDP: the global batch's
    loss per target token and token accuracy, the same on every process.

    Raises
    ------
    TypeError
        If an argument has the wrong type (e.g. ``steps=True``, ``lr='0.1'``); the error is also
        a ValueError.
    ValueError
        For an out-of-range argument (``steps``/``batch_size`` below 1, ``lr`` not finite and
        positive, ``warmup`` negative or not an integer, ``clip_grad`` negative or NaN,
        ``label_smoothing`` outside [0, 1), ``seed`` outside [0, 2**32 - 1], a device that is not
        available, fewer training pairs or a smaller ``batch_size`` than processes,
        ``grad_accum_steps`` giving a micro-batch no pair, ``precision`` unknown or unsupported
        on the device, ``checkpoint_every`` without ``checkpoint_path``, a ``checkpoint_path``
        that cannot be written or whose disk has too little room), a ``resume`` file that is not
        a training checkpoint of this model, data and recipe or was changed after it was written
        (the message names the file and the field; see
        :func:`illustrated.checkpoint.load_training_state`), vocabularies that do not fit the
        model, or an empty ``pairs``. A checkpoint that cannot be written mid-run (a full disk)
        stops training with one error naming ``checkpoint_path``; the previous one is intact.
    TrainingDiverged (a ValueError)
        When the loss or the gradients stop being finite (e.g. a learning rate far too high);
        the model is first restored to its weights from before the step that broke it.

    References
    ----------
    Post "Recap Of Training" and "The Loss Function"; paper §5.3 (Adam β=(0.9, 0.98), ε=1e-9)
    and §5.4; Li et al. 2020 (PyTorch DDP); Micikevicius et al. 2018 (mixed precision).
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
    check_int("grad_accum_steps", grad_accum_steps, low=1, what="a number of micro-batches")
    check_choice("precision", precision, PRECISIONS)
    check_int("checkpoint_every", checkpoint_every, low=0, what="a number of steps (0 = never)")
    learning_rate(1, lr, warmup, schedule, steps)  # validates schedule
    _check_vocabs(model, src_vocab, tgt_vocab)
    rank, world, several = _process_group(distributed)
    if several and device == "auto":  # this rank's GPU with NCCL, the CPU with gloo
        device = torch.device("cuda", torch.cuda.current_device()) \
            if dist.get_backend() == "nccl" else torch.device("cpu")
    device = pick_device(device)
    if precision == "bf16" and not (device.type == "cpu" or (
            device.type == "cuda" and torch.cuda.is_bf16_supported())):
        raise ValueError(f"precision: expected 'fp32' on {device} ('bf16' needs a CPU or a "
                         f"bfloat16-capable CUDA GPU), got 'bf16'")
    if checkpoint_every and checkpoint_path is None:
        raise ValueError(f"checkpoint_path: expected a file path when checkpoint_every="
                         f"{checkpoint_every}, got None")
    if checkpoint_path is not None and rank == 0:  # and room for it, before any training
        check_writable(checkpoint_path, "checkpoint_path", need_bytes=estimate_bytes(
            model.cfg, training=True, steps=steps, pairs=len(pairs)))
    encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
    longest = max(max(len(s), len(t) + 1) for s, t in encoded)
    if longest > model.cfg.max_len:
        raise ValueError(f"pairs: a sentence needs {longest} positions, more than the model's "
                         f"max_len={model.cfg.max_len}")
    if len(encoded) < world:
        raise ValueError(f"pairs: expected at least {world} training pairs, one for each of the "
                         f"{world} processes, got {len(encoded)}")
    if batch_size < world:
        raise ValueError(f"batch_size: expected at least {world}, one pair for each of the "
                         f"{world} processes, got {batch_size}")
    smallest = min(batch_size, len(encoded))  # a batch holds at least this many pairs
    if smallest < world * grad_accum_steps:  # here smallest >= world: at most 1 is possible
        raise ValueError(
            f"grad_accum_steps: expected at most {smallest // world} micro-batches "
            f"(batches of {smallest} pairs, batch_size={batch_size} and {len(encoded)} training "
            f"pairs, over {world} process{'es' if world > 1 else ''}: every micro-batch needs a "
            f"pair), got {grad_accum_steps}")
    recipe = {"lr": lr, "warmup": warmup, "schedule": schedule,
              "label_smoothing": label_smoothing, "batch_size": batch_size,
              "clip_grad": clip_grad, "seed": seed, "grad_accum_steps": grad_accum_steps,
              "precision": precision, "processes": world}
    data = _data_fingerprint(encoded, src_vocab, tgt_vocab)
    resumed = _read_resume(resume, model, data, len(encoded), recipe, steps, device)
    with _global_rng_kept(device):
        set_seed(seed)
        return _loop(model, encoded, src_vocab, tgt_vocab, steps=steps, recipe=recipe,
                     data=data, device=device, rank=rank, world=world, several=several,
                     callback=callback, progress=progress and rank == 0,
                     checkpoint_every=checkpoint_every, checkpoint_path=checkpoint_path,
                     resumed=resumed)


def _data_fingerprint(encoded: list, src_vocab: Vocab, tgt_vocab: Vocab) -> str:
    """sha256 of what training reads: the pairs as ids, in order, and both vocabularies."""
    h = hashlib.sha256()
    for tokens in (src_vocab.tokens, tgt_vocab.tokens):
        h.update(("\x1f".join(tokens) + "\x1e").encode("utf-8"))
    for src, tgt in encoded:
        h.update(f"{','.join(map(str, src))};{','.join(map(str, tgt))}\n".encode())
    return h.hexdigest()


def _adam(model: Transformer, lr: float, device: torch.device) -> torch.optim.Adam:
    """Adam as paper §5.3 sets it; the fused kernel (CPU, CUDA) updates every weight at once."""
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9,
                            fused=device.type in ("cpu", "cuda"))


def _read_resume(resume, model: Transformer, data: str, n_pairs: int, recipe: dict, steps: int,
                 device: torch.device) -> dict | None:
    """The training state of ``resume`` after checking it continues this run, or None."""
    if resume is None:
        return None
    try:
        loaded, _, cfg, training = load_training_state(resume)
    except ValueError as error:
        raise ValueError(f"resume: {str(error).removeprefix('path: ')}") from None
    name = str(resume)
    if cfg != model.cfg:
        raise ValueError(f"resume: {name!r} holds a model of another config than model "
                         f"({cfg} vs {model.cfg})")
    if training["data"] != data:
        raise ValueError(f"resume: {name!r} was trained on other data: its training pairs and "
                         f"vocabularies have the sha256 {training['data'][:12]}..., these "
                         f"{data[:12]}... (the same pairs, min count, test split and seed?)")
    for key, value in recipe.items():
        if key not in training["recipe"]:
            raise ValueError(f"resume: {name!r} has a malformed training state: field 'recipe' "
                             f"has no {key!r}")
        if training["recipe"][key] != value:
            raise ValueError(f"{key}: expected {training['recipe'][key]!r} as in the run "
                             f"being resumed ({name!r}), got {value!r}")
    if training["step"] >= steps:
        raise ValueError(f"steps: expected more than the {training['step']} steps {name!r} "
                         f"has already done, got {steps}")
    order = training["order"]
    if len(order) >= n_pairs or any(i >= n_pairs for i in order):
        raise ValueError(f"resume: {name!r} has a malformed training state: field 'order': "
                         f"expected fewer than {n_pairs} distinct indices below {n_pairs}")
    fresh = _adam(model, recipe["lr"], device).param_groups[0]
    group = training["optimizer"]["param_groups"][0]
    for key, value in fresh.items():
        if key not in ("params", "lr", "fused", "foreach") and (
                key not in group or _plain(group[key]) != _plain(value)):
            raise ValueError(f"resume: {name!r} has a malformed training state: field "
                             f"'optimizer': {key!r} is {group.get(key)!r}, Adam here has "
                             f"{value!r}")
    if sorted(group) != sorted(fresh) or not isinstance(group["lr"], float) \
            or not math.isfinite(group["lr"]) or group["lr"] < 0:
        raise ValueError(f"resume: {name!r} has a malformed training state: field 'optimizer': "
                         f"expected Adam's settings {sorted(fresh)} with a finite lr")
    return {**training, "state_dict": loaded.state_dict()}


def _plain(value: object) -> object:
    """Tuples as lists, for comparing settings that went through a file."""
    return list(value) if isinstance(value, tuple) else value


def _loop(model: Transformer, encoded: list, src_vocab: Vocab, tgt_vocab: Vocab, *, steps: int,
          recipe: dict, data: str, device: torch.device, rank: int, world: int, several: bool,
          callback, progress: bool, checkpoint_every: int, checkpoint_path, resumed) -> History:
    """:func:`train`'s loop, its arguments checked and the global RNGs seeded."""
    lr, warmup, schedule = recipe["lr"], recipe["warmup"], recipe["schedule"]
    label_smoothing, batch_size = recipe["label_smoothing"], recipe["batch_size"]
    clip_grad, accum = recipe["clip_grad"], recipe["grad_accum_steps"]
    if resumed is not None:
        model.load_state_dict(resumed["state_dict"])
    model.to(device).train()
    net = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None) if several else model
    optimizer = _adam(model, lr, device)
    params = [p for p in model.parameters()]
    before = [p.detach().clone() for p in params]  # weights before the latest step
    generator = torch.Generator().manual_seed(recipe["seed"])
    order: list[int] = []
    history = History(device=f"{device} x {world} process{'es' if world > 1 else ''}"
                      if several else str(device))
    first = 1
    if resumed is not None:
        optimizer.load_state_dict(resumed["optimizer"])
        generator.set_state(resumed["generator"])
        order = list(resumed["order"])
        _set_rng_state(resumed["rng"], device)
        for key in ("loss", "lr", "accuracy", "seconds"):
            getattr(history, key).extend(resumed["history"][key])
        first = resumed["step"] + 1
    simple = world == 1 and accum == 1 and not several  # the book's path, kept bit for bit
    bf16 = recipe["precision"] == "bf16"
    start = time.perf_counter() - (history.seconds[-1] if history.seconds else 0.0)
    # As a context manager the bar is closed however training ends (Ctrl-C, an error).
    with tqdm(range(first, steps + 1), desc="training", disable=not progress, leave=False,
              initial=first - 1, total=steps) as bar:
        for step in bar:
            if len(order) < batch_size:  # a new shuffled epoch, the same on every process
                order += torch.randperm(len(encoded), generator=generator).tolist()
            idx, order = order[:batch_size], order[batch_size:]
            optimizer.zero_grad(set_to_none=True)
            if simple:
                batch = collate([encoded[i] for i in idx], src_vocab, tgt_vocab, device=device)
                with _autocast(device, bf16):
                    logits = model(batch.src, batch.tgt_in)  # (batch, tgt_len, tgt_vocab_size)
                    loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                           ignore_index=tgt_vocab.pad_id,
                                           label_smoothing=label_smoothing)
                loss.backward()
                with torch.no_grad():
                    keep = batch.tgt_out != tgt_vocab.pad_id
                    correct = (logits.argmax(-1) == batch.tgt_out) & keep
                    accuracy = float(correct.sum() / keep.sum())
            else:
                loss, accuracy = _accumulate(net, encoded, idx, src_vocab, tgt_vocab, rank=rank,
                                             world=world, accum=accum, device=device, bf16=bf16,
                                             label_smoothing=label_smoothing, several=several)
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
            history.accuracy.append(accuracy)
            history.loss.append(loss.item())
            history.lr.append(rate)
            history.seconds.append(time.perf_counter() - start)
            if progress:
                bar.set_postfix(loss=f"{history.loss[-1]:.3f}",
                                acc=f"{history.accuracy[-1]:.2f}")
            if checkpoint_every and rank == 0 and (step % checkpoint_every == 0 or step == steps):
                _write_checkpoint(checkpoint_path, model, src_vocab, tgt_vocab, step=step,
                                  recipe=recipe, data=data, optimizer=optimizer,
                                  generator=generator, order=order, device=device,
                                  history=history)
            if callback is not None:
                callback(step, history)
    model.eval()
    return history


def _autocast(device: torch.device, bf16: bool):
    """``torch.autocast`` to bfloat16 when asked, else nothing at all (fp32 as it always was)."""
    return torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def _accumulate(net, encoded: list, idx: list[int], src_vocab: Vocab, tgt_vocab: Vocab, *,
                rank: int, world: int, accum: int, device: torch.device, bf16: bool,
                label_smoothing: float, several: bool) -> tuple[torch.Tensor, float]:
    """This process's micro-batches of ``idx``, forward and backward: (mean loss, accuracy)."""
    # Each micro-batch's summed cross-entropy is scaled by world / tokens (tokens: target tokens
    # of the whole global batch): the gradients add up, and DDP's average over the processes
    # makes them, the gradient of the global batch's mean loss; the same numbers on every rank.
    tokens = sum(len(encoded[i][1]) + 1 for i in idx)  # target words + <eos>, whole batch
    shard = idx[rank::world]
    totals = torch.zeros(2, dtype=torch.float64, device=device)  # summed loss, correct tokens
    for m in range(accum):
        batch = collate([encoded[i] for i in shard[m::accum]], src_vocab, tgt_vocab,
                        device=device)
        # DDP all-reduces the gradients once, after the last micro-batch's backward
        sync = contextlib.nullcontext() if not several or m == accum - 1 else net.no_sync()
        with sync:
            with _autocast(device, bf16):
                logits = net(batch.src, batch.tgt_in)  # (micro, tgt_len, tgt_vocab_size)
                summed = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                         reduction="sum", ignore_index=tgt_vocab.pad_id,
                                         label_smoothing=label_smoothing)
            (summed * (world / tokens)).backward()
        with torch.no_grad():
            keep = batch.tgt_out != tgt_vocab.pad_id
            correct = ((logits.argmax(-1) == batch.tgt_out) & keep).sum()
            totals += torch.stack([summed.detach().double(), correct.double()])
    if several:
        dist.all_reduce(totals)
    return totals[0] / tokens, float(totals[1]) / tokens


def _write_checkpoint(path, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, *, step: int,
                      recipe: dict, data: str, optimizer: torch.optim.Optimizer,
                      generator: torch.Generator, order: list[int], device: torch.device,
                      history: History) -> None:
    """Save the model and everything :func:`train` needs to continue after ``step``, atomically."""
    training = {"step": step, "recipe": dict(recipe), "data": data,
                "optimizer": _to_cpu(optimizer.state_dict()), "generator": generator.get_state(),
                "order": list(order), "rng": _rng_state(device),
                "history": {k: list(getattr(history, k)) for k in ("loss", "lr", "accuracy",
                                                                   "seconds")}}
    try:
        save_checkpoint(path, model, (src_vocab, tgt_vocab), model.cfg, training=training)
    except ValueError as error:  # a full disk mid-run: the previous checkpoint is still there
        raise ValueError(f"checkpoint_path: {str(error).removeprefix('path: ')}; training "
                         f"stopped after step {step}") from None


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

    The target is compared as written (:func:`reference`): a word missing from ``tgt_vocab``
    counts as wrong, it is not dropped from the target.

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
    targets = [reference(t) for _, t in pairs]
    return sum(p == t for p, t in zip(predictions, targets)) / len(pairs)


def reference(target: str) -> str:
    """A target sentence as a right translation spells it: its words, tokenized and joined.

    Every word of the target stays, also those missing from the target vocabulary: the model
    cannot write them (it writes ``<unk>``, dropped from its output, or another word), so a
    translation of a sentence with such a word never matches, as it is not right.

    Raises
    ------
    ValueError
        If ``target`` is not a str or holds no word.
    """
    return detokenize(tokenize(target))
