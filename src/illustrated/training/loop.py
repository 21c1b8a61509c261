"""Training the Transformer: the loop (``train``), what it records, its seeds and its device.

One step of the recipe: draw a batch of pairs (shuffled epochs), compute the loss and the token
accuracy (one function, for one process or several, a whole batch or its micro-batches), back-
propagate, clip the gradients, stop if anything is no longer finite, set the learning rate from
the schedule, take Adam's step. The schedules live in :mod:`illustrated.training.schedules`,
the saved state of a run in :mod:`illustrated.files.training_state`, the process group in
:mod:`illustrated.training.distributed`, translation and exact match in
:mod:`illustrated.inference.translate`.

References: post "Recap Of Training" and "The Loss Function"; paper §5.3 (Adam, Eq. 3 warm-up
schedule) and §5.4 (label smoothing).
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from . import distributed as ddp
from .._args import (MAX_SEED, ArgumentTypeError, check_bool, check_choice, check_int, check_pairs,
                    describe)
from .captured_step import captured_step, check_compile
from .graphed_step import GraphedStep
from ..files.atomic import check_writable
from ..files.checkpoint import estimate_bytes
from ..config import TransformerConfig
from ..data import Vocab, collate, encode_pairs
from ..data.batching import pair_widths, token_epoch, tokens_fit
from ..data.vocab import check_vocab_fits
from ..modules.transformer import Transformer, check_model
from .objective import objective
from .referent import ReferentObjective
from ..recipe import PRECISIONS, Recipe
from .schedules import learning_rate
from ..files.training_state import data_fingerprint, restore, resume_state, save_training_state

__all__ = ["MAX_SEED", "PRECISIONS", "Recipe", "set_seed", "pick_device", "preload_optimizer", "History",
           "TrainingDiverged", "train", "seconds_per_step"]


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

    The first optimizer a process builds makes torch import ``torch._dynamo``, whatever the
    model. Callers that time training (the command
    line, ``benchmarks/corpora.py``) call this first so that the time they report is training
    time, and report this cost beside it. Calling it again costs almost nothing.
    """
    start = time.perf_counter()
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    return time.perf_counter() - start


def pick_device(device: str | torch.device = "auto") -> torch.device:
    """Choose where to run: "auto" picks CUDA, then Apple's MPS, then the CPU.

    On a GPU ``train`` captures the whole step as one CUDA graph (``compile="auto"``);
    measurements: ``benchmarks/results/gpu.json``.

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
    elif chosen.index not in (None, 0):
        raise ValueError(f"device: expected 'cpu' (this machine has one CPU device), got "
                         f"{str(chosen)!r}")
    return chosen


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

    def record(self, loss: float, lr: float, accuracy: float, seconds: float) -> None:
        """Add one step's numbers."""
        self.loss.append(loss)
        self.lr.append(lr)
        self.accuracy.append(accuracy)
        self.seconds.append(seconds)


class TrainingDiverged(ValueError):
    """Raised when the loss stops being finite; ``history`` holds the steps done before."""

    def __init__(self, message: str, history: History) -> None:
        super().__init__(message)
        self.history = history


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


def train(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
          recipe: Recipe | None = None, *, device: str | torch.device = "auto",
          callback: Callable[[int, History], None] | None = None, progress: bool = True,
          distributed: bool | None = None, checkpoint_every: int = 0,
          checkpoint_path: str | os.PathLike | None = None,
          resume: str | os.PathLike | None = None, compile: bool | str = "auto",
          **overrides) -> History:
    """Train the model in place with Adam on teacher-forced cross-entropy, as ``recipe`` says.

    model: a Transformer (moved to ``device``); pairs: (source, target) sentences; src_vocab,
    tgt_vocab: their vocabularies; recipe: :class:`illustrated.recipe.Recipe` (default
    ``Recipe()``), ``**overrides`` its fields (``steps=500, lr=1e-2``); device: "auto", "cpu",
    "cuda", "mps" or a torch.device; callback(step, history) after every step; progress: a
    tqdm bar; distributed: None (DDP under a running process group), True or False;
    checkpoint_every/checkpoint_path: a resumable checkpoint every that many steps; resume: such
    a checkpoint to go on from; compile: "auto" (CUDA), True, False or a backend's name (the
    captured step, :mod:`illustrated.training.captured_step`). Returns the History (loss per
    target token, lr, token accuracy, seconds per step). The global RNGs are seeded with the
    recipe's seed and given back. Raises TypeError (also a ValueError) / ValueError naming the
    argument for every bad argument; TrainingDiverged (a ValueError) when the loss stops being
    finite, the model restored to its weights before. The whole contract: ``docs/training.md``.
    Post "Recap Of Training", "The Loss Function"; paper §5.3 (Adam, Eq. 3), §5.4.
    """
    recipe = Recipe.from_overrides(recipe, **overrides)
    compile = check_compile(compile)
    run = _Run.checked(model, pairs, src_vocab, tgt_vocab, recipe=recipe, device=device,
                       callback=callback, progress=progress, distributed=distributed,
                       checkpoint_every=checkpoint_every, checkpoint_path=checkpoint_path)
    steps, clip_grad = recipe.steps, recipe.clip_grad
    resumed = resume_state(resume, model, recipe=run.saved, encoded=run.encoded,
                           vocabs=(src_vocab, tgt_vocab), steps=steps,
                           optimizer=_adam(model, recipe, run.device))
    history = History(device=run.device_text)
    with _global_rng_kept(run.device):
        set_seed(recipe.seed)
        generator = torch.Generator().manual_seed(recipe.seed)
        model.to(run.device).train()
        optimizer = _adam(model, recipe, run.device)
        if recipe.referent_weight > 0:  # after set_seed: the read-out's weights follow the seed
            run.referent = ReferentObjective(model, pairs, run.encoded, recipe.referent_weight,
                                             run.device)
            optimizer.add_param_group({"params": list(run.referent.readout.parameters())})
        readout = run.referent.readout if run.referent else None
        first, order = restore(resumed, model, optimizer, generator, history, run.device,
                               readout=readout) if resumed is not None else (1, [])
        net = ddp.wrap(model, run.device, run.several)
        captured = captured_step(model, compile, src_vocab, tgt_vocab, device=run.device,
                                 encoded=run.encoded, processes=run.world,
                                 grad_accum_steps=recipe.grad_accum_steps,
                                 precision=recipe.precision,
                                 label_smoothing=recipe.label_smoothing, referent=run.referent)
        params = list(model.parameters())
        graphed = GraphedStep(captured, optimizer, params, clip_grad if clip_grad > 0
                              else math.inf) if captured is not None else None
        # The weights from before the latest step and from before the one before it: the
        # divergence check reads the step's loss only after the step (see _read_step).
        kept = [[p.detach().clone() for p in params] for _ in range(2)]
        start = time.perf_counter() - (history.seconds[-1] if history.seconds else 0.0)
        # As a context manager the bar is closed however training ends (Ctrl-C, an error).
        with tqdm(range(first, steps + 1), desc="training", disable=not run.progress,
                  leave=False, initial=first - 1, total=steps) as bar, (
                _released(graphed)):
            for step in bar:
                idx, order = run.next_batch(order, generator)  # the same on every process
                rate = learning_rate(step, recipe.lr, recipe.warmup, recipe.schedule, steps)
                for group in optimizer.param_groups:
                    group["lr"] = rate
                with torch.no_grad():
                    torch._foreach_copy_(kept[1], params)  # one launch for every weight
                taken = graphed(idx, rate) if graphed is not None else None
                if taken is None:  # the eager step
                    optimizer.zero_grad(set_to_none=True)
                    loss, accuracy = _loss_and_accuracy(net, run, idx, src_vocab, tgt_vocab)
                    grad_norm = torch.nn.utils.clip_grad_norm_(
                        params, clip_grad if clip_grad > 0 else math.inf)
                    optimizer.step()
                else:  # one process, one micro-batch: the batch's mean loss as it is
                    loss, grad_norm, correct = taken
                    accuracy = correct.double() / run.tokens(idx)
                loss_value, accuracy = _read_step(loss, grad_norm, accuracy, params, kept[0],
                                                  step, recipe.lr, history)
                kept.reverse()  # the weights before this step are now the latest kept
                history.record(loss_value, rate, accuracy, time.perf_counter() - start)
                if run.progress:
                    bar.set_postfix(loss=f"{loss_value:.3f}", acc=f"{accuracy:.2f}")
                if checkpoint_every and run.rank == 0 and (step % checkpoint_every == 0
                                                           or step == steps):
                    save_training_state(checkpoint_path, model, (src_vocab, tgt_vocab),
                                        step=step, recipe=run.saved, data=run.data,
                                        optimizer=optimizer, generator=generator, order=order,
                                        device=run.device, history=history, readout=readout)
                if callback is not None:
                    callback(step, history)
    model.eval()
    return history


def _loss_and_accuracy(net: torch.nn.Module, run: "_Run", idx: list[int], src_vocab: Vocab,
                       tgt_vocab: Vocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward and backward of this process's share of the batch ``idx``, in micro-batches:
    (the global batch's mean loss per target token, its token accuracy), two float64 scalar
    tensors left on the device (the loop reads them once a step, with the gradients' norm).

    Each micro-batch's mean cross-entropy is weighted by its share of the global batch's target
    tokens times the number of processes: the gradients add up, and DDP's average over the
    processes makes them the gradient of the whole batch's mean loss, the same numbers on every
    process. Alone and without accumulation the weight is exactly 1 (the plain loop's mean).
    The "it" objective's mean over a micro-batch's labelled pairs is weighted likewise by their
    share of the batch's labelled pairs, and its read-out's gradients averaged over processes.
    """
    tokens = run.tokens(idx)
    labelled = run.referent.count(idx) if run.referent else 0  # pairs the "it" objective reads
    shard = idx[run.rank::run.world]  # this process's pairs (a DistributedSampler-style split)
    accum = run.recipe.grad_accum_steps
    totals = torch.zeros(2, dtype=torch.float64, device=run.device)  # summed loss, correct
    for m in range(accum):
        rows = shard[m::accum]
        micro = [run.encoded[i] for i in rows]
        n_tokens = sum(len(tgt) + 1 for _, tgt in micro)
        # DDP all-reduces the gradients once, after the last micro-batch's backward
        with ddp.synced_at(net, last=m == accum - 1):
            batch = collate(micro, src_vocab, tgt_vocab, device=run.device)
            it, noun = run.referent.targets(rows, run.device) if labelled else (None, None)
            loss, correct, it_loss = objective(
                functools.partial(net, return_memory=True), batch.src, batch.tgt_in,
                batch.tgt_out, pad_id=tgt_vocab.pad_id,
                label_smoothing=run.recipe.label_smoothing,
                bf16=run.recipe.precision == "bf16", referent=run.referent if labelled else None,
                it=it, noun=noun)
            total = loss * (n_tokens * run.world / tokens)
            if labelled:  # its mean over the labelled pairs here, weighted by their share
                total = total + it_loss * (run.referent.count(rows) * run.world / labelled)
            total.backward()
        with torch.no_grad():
            totals += torch.stack([loss.detach().double() * n_tokens, correct.double()])
    if labelled:  # the read-out is not in DDP: its gradients are averaged here
        ddp.average_gradients(run.referent.readout.parameters(), run.several)
    ddp.sum_over_processes(totals, run.several)
    return totals[0] / tokens, totals[1] / tokens


def _read_step(loss: torch.Tensor, grad_norm: torch.Tensor, accuracy: torch.Tensor,
               params: list, before: list, step: int, lr: float, history: History
               ) -> tuple[float, float]:
    """(loss, accuracy) of the step just taken, read from the device in one transfer, the one
    wait for the GPU a step.

    Raise TrainingDiverged, the weights put back to ``before`` (those before the previous
    step), if the loss or the gradients were not finite: the previous step's update broke the
    model, and the update just taken, from those gradients, is discarded with it."""
    values = torch.stack([loss.detach().double(), grad_norm.detach().double(),
                          accuracy.detach().double()]).tolist()
    if not (math.isfinite(values[0]) and math.isfinite(values[1])):
        with torch.no_grad():
            torch._foreach_copy_(params, before)
        raise TrainingDiverged(
            f"lr: the loss became {values[0]:.3g} at step {step} with lr={lr:g}; "
            f"training stopped and the model was restored to its weights before step "
            f"{max(step - 1, 1)}. Try a smaller lr.", history)
    return values[0], values[2]


@contextlib.contextmanager
def _released(graphed: GraphedStep | None) -> Iterator[None]:
    """Drop a run's CUDA graphs, and the gradients in their memory, however training ends."""
    try:
        yield
    finally:
        if graphed is not None:
            graphed.release()


def _adam(model: Transformer, recipe: Recipe, device: torch.device) -> torch.optim.Adam:
    """Adam as the recipe (paper §5.3) sets it; the fused kernel (CPU, CUDA) updates every
    weight at once."""
    return torch.optim.Adam(model.parameters(), lr=recipe.lr, betas=recipe.adam_betas,
                            eps=recipe.adam_eps, fused=device.type in ("cpu", "cuda"))


@dataclass
class _Run:
    """A training run's checked arguments: the recipe, where it runs, the pairs as ids."""

    recipe: Recipe
    device: torch.device
    rank: int
    world: int
    several: bool
    encoded: list
    data: dict
    progress: bool
    referent: ReferentObjective | None = None  # the auxiliary objective, when it is on

    @property
    def device_text(self) -> str:
        """Where training runs, for History.device."""
        return f"{self.device} x {self.world} process{'es' if self.world > 1 else ''}" \
            if self.several else str(self.device)

    def tokens(self, idx: list[int]) -> int:
        """The target tokens (words + <eos>) of the pairs ``idx``."""
        return sum(len(self.encoded[i][1]) + 1 for i in idx)

    @functools.cached_property
    def widths(self) -> list[tuple[int, int]]:
        """Each pair's source and target positions (:func:`pair_widths`)."""
        return pair_widths(self.encoded)

    @property
    def saved(self) -> dict:
        """The recipe a checkpoint keeps and a resumed run must share, with the processes."""
        return {**self.recipe.resumed(), "processes": self.world}

    def next_batch(self, order: list[int], generator: torch.Generator
                   ) -> tuple[list[int], list[int]]:
        """(the pairs of the next global batch, the order left): ``batch_size`` pairs of shuffled
        epochs, or by tokens (:func:`illustrated.data.batching.token_epoch`), a new epoch
        drawn from ``generator`` when the order left cannot fill a batch."""
        size, tokens = self.recipe.batch_size, self.recipe.tokens_per_batch
        least = self.world * self.recipe.grad_accum_steps  # a pair for every micro-batch
        if len(order) < (least if tokens else size):
            order = order + (token_epoch(self.widths, tokens, generator) if tokens
                             else torch.randperm(len(self.encoded), generator=generator).tolist())
        if tokens:
            size = tokens_fit(order, self.widths, tokens, at_least=least)
        return order[:size], order[size:]

    @classmethod
    def checked(cls, model, pairs, src_vocab, tgt_vocab, *, recipe, device, callback,
                progress, distributed, checkpoint_every, checkpoint_path) -> "_Run":
        """Every argument of :func:`train` checked, before anything is spent on training (the
        recipe checked itself when it was made)."""
        check_model("model", model)
        pairs = check_pairs(pairs)
        if callback is not None and not callable(callback):
            raise ArgumentTypeError(f"callback: expected a function callback(step, history) or "
                                    f"None, got {type(callback).__name__}")
        check_bool("progress", progress)
        check_int("checkpoint_every", checkpoint_every, low=0,
                  what="a number of steps (0 = never)")
        check_vocab_fits("src_vocab", src_vocab, model.cfg.src_vocab_size, model.cfg.pad_id)
        check_vocab_fits("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size, model.cfg.tgt_pad_id)
        rank, world, several = ddp.process_group(distributed)
        device = pick_device(ddp.rank_device() if several and device == "auto" else device)
        if recipe.precision == "bf16" and not (device.type == "cpu" or (
                device.type == "cuda" and torch.cuda.is_bf16_supported())):
            raise ValueError(f"precision: expected 'fp32' on {device} ('bf16' needs a CPU or a "
                             f"bfloat16-capable CUDA GPU), got 'bf16'")
        if checkpoint_every and checkpoint_path is None:
            raise ValueError(f"checkpoint_path: expected a file path when checkpoint_every="
                             f"{checkpoint_every}, got None")
        if checkpoint_path is not None and rank == 0:  # and room for it, before any training
            check_writable(checkpoint_path, "checkpoint_path", need_bytes=estimate_bytes(
                model.cfg, training=True, steps=recipe.steps, pairs=len(pairs),
                referent=recipe.referent_weight > 0))
        encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
        longest = max(max(len(s), len(t) + 1) for s, t in encoded)
        if longest > model.cfg.max_len:
            raise ValueError(f"pairs: a sentence needs {longest} positions, more than the "
                             f"model's max_len={model.cfg.max_len}")
        _check_shares(len(encoded), recipe, world, longest)
        return cls(recipe, device, rank, world, several, encoded,
                   data_fingerprint(encoded, src_vocab, tgt_vocab), progress and rank == 0)


def _check_shares(n_pairs: int, recipe: Recipe, world: int, longest: int) -> None:
    """ValueError unless every process, and every micro-batch of it, gets at least one pair."""
    batch_size, accum, tokens = recipe.batch_size, recipe.grad_accum_steps, \
        recipe.tokens_per_batch
    processes = f"{world} process{'es' if world > 1 else ''}"
    if n_pairs < world:
        raise ValueError(f"pairs: expected at least {world} training pairs, one for each of the "
                         f"{world} processes, got {n_pairs}")
    if tokens:
        if n_pairs < world * accum:
            raise ValueError(f"grad_accum_steps: expected at most {n_pairs // world} "
                             f"micro-batches ({n_pairs} training pairs over {processes}: every "
                             f"micro-batch needs a pair), got {accum}")
        if tokens < world * accum * longest:
            raise ValueError(
                f"tokens_per_batch: expected at least {world * accum * longest} (the longest "
                f"pair takes {longest} positions, and each of {accum} micro-batches over "
                f"{processes} needs one), got {tokens}")
        return
    if batch_size < world:
        raise ValueError(f"batch_size: expected at least {world}, one pair for each of the "
                         f"{world} processes, got {batch_size}")
    smallest = min(batch_size, n_pairs)  # a batch holds at least this many pairs
    if smallest < world * accum:  # here smallest >= world: at most 1 is possible
        raise ValueError(
            f"grad_accum_steps: expected at most {smallest // world} micro-batches "
            f"(batches of {smallest} pairs, batch_size={batch_size} and {n_pairs} training "
            f"pairs, over {processes}: every micro-batch needs a pair), got {accum}")


def seconds_per_step(cfg: TransformerConfig, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                     tgt_vocab: Vocab, *, batch_size: int, device: str | torch.device = "auto",
                     grad_accum_steps: int = 1, precision: str = "fp32",
                     tokens_per_batch: int = 0) -> float:
    """Seconds one training step of a fresh ``Transformer(cfg)`` takes here: the second of two.

    The steps (forward, backward, Adam) run on a model of its own, on ``batch_size`` pairs
    spread over ``pairs`` (with ``tokens_per_batch``, on the first batch of that many tokens);
    the caller's RNG states and models are left as they were. The first step pays what a run
    pays once (torch.optim's import, Adam's state, the allocator's first blocks), so only the
    second is timed. The command line
    multiplies it by the steps to warn before a run of more than a few minutes.
    """
    check_choice("precision", precision, PRECISIONS)
    device = pick_device(device)
    encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
    stride = max(1, len(encoded) // max(batch_size, 1))
    idx = list(range(0, len(encoded), stride))[:batch_size]
    with _global_rng_kept(device):
        if tokens_per_batch:
            order = token_epoch(pair_widths(encoded), tokens_per_batch, torch.Generator())
            idx = order[:tokens_fit(order, pair_widths(encoded), tokens_per_batch)]
        accum = max(1, min(grad_accum_steps, len(idx)))
        model = Transformer(cfg).to(device).train()
        recipe = Recipe(lr=1e-9, grad_accum_steps=accum, precision=precision)
        optimizer = _adam(model, recipe, device)
        run = _Run(recipe, device, 0, 1, False, encoded, {}, False)
        for _ in range(2):  # the second step is timed
            start = time.perf_counter()
            _loss_and_accuracy(model, run, idx, src_vocab, tgt_vocab)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        return time.perf_counter() - start
