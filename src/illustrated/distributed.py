"""Data-parallel training over several processes: ``torch.distributed`` + ``DistributedDataParallel``.

Launched by PyTorch's own ``torchrun`` (we write no launcher), e.g.
``torchrun --nproc_per_node=2 -m illustrated train --pairs my.tsv``. Every process draws the same
shuffled global batch from the same seeded generator and takes every ``world_size``-th pair of it
(a DistributedSampler-style split); each one's loss is its share of the global batch's summed
cross-entropy, scaled so that DDP's gradient average equals the gradient of the mean over the
whole batch. Training on N processes therefore follows single-process :func:`illustrated.train`
with the same ``batch_size``, up to floating-point summation order (dropout aside: each process
draws its own masks).

References: Li et al. 2020, "PyTorch Distributed: Experiences on Accelerating Data Parallel
Training" (DDP); paper §5.2 (8 GPUs, batches of about 25000 tokens).
"""
from __future__ import annotations

import math
import os
import time
from typing import Sequence

import torch
import torch.distributed as dist
import torch.nn.functional as F

from ._args import check_int, check_real
from .data import Vocab, collate, encode_pairs
from .decoding import check_model
from .modules.transformer import Transformer
from .training import (MAX_SEED, History, TrainingDiverged, _check_pairs, _check_vocabs,
                       learning_rate, set_seed)

__all__ = ["launched_by_torchrun", "init", "is_main", "train_ddp"]


def launched_by_torchrun() -> bool:
    """True when this process is one of several that ``torchrun`` started (``WORLD_SIZE`` > 1)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init(device: str = "auto") -> torch.device:
    """Join the process group ``torchrun`` set up (env:// rendezvous) and return this rank's device.

    NCCL and ``cuda:LOCAL_RANK`` when CUDA is available and ``device`` is "auto" or "cuda";
    gloo and the CPU otherwise. Calling it again once joined only returns the device.

    Raises
    ------
    ValueError
        If ``device`` is not "auto", "cpu" or "cuda", or is "cuda" without a GPU.
    """
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device: expected 'auto', 'cpu' or 'cuda' under torchrun, got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: expected an available device, got 'cuda' but no CUDA GPU is "
                         "available here; use 'auto' or 'cpu'")
    cuda = device != "cpu" and torch.cuda.is_available()
    chosen = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if cuda else \
        torch.device("cpu")
    if cuda:
        torch.cuda.set_device(chosen)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    return chosen


def is_main() -> bool:
    """True on rank 0, or when no process group is running (the one that prints and saves)."""
    return not dist.is_initialized() or dist.get_rank() == 0


def train_ddp(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
              tgt_vocab: Vocab, *, steps: int = 300, lr: float = 3e-3, warmup: int = 20,
              schedule: str = "constant", label_smoothing: float = 0.0, batch_size: int = 64,
              clip_grad: float = 1.0, seed: int = 0) -> History:
    """Train the model in place on this process's share of every batch, under DDP.

    Needs a running process group (:func:`init`); every process calls it with the same arguments.
    ``batch_size`` is the global batch: each of the ``world_size`` processes takes pairs
    ``rank, rank + world_size, ...`` of it. The recipe is :func:`illustrated.train`'s
    (Adam β=(0.9, 0.98), ε=1e-9, the same schedules and clipping of the global gradient norm).

    Returns
    -------
    History with the global batch's loss (per target token) and token accuracy, the same on
    every process.

    Raises
    ------
    ValueError
        If no process group is running, ``batch_size`` is below the number of processes, or an
        argument is out of range as in :func:`illustrated.train`.
    TrainingDiverged (a ValueError)
        When the loss or the gradient norm stops being finite (on every process at once).
    """
    if not dist.is_initialized():
        raise ValueError("train_ddp: expected a running process group (launch with torchrun and "
                         "call illustrated.distributed.init() first), got none")
    rank, world = dist.get_rank(), dist.get_world_size()
    check_model("model", model)
    pairs = _check_pairs(pairs)
    check_int("steps", steps, low=1)
    check_int("batch_size", batch_size, low=world, what="a global batch of at least one pair "
                                                        "per process")
    check_real("lr", lr, low=0.0, low_open=True, what="a learning rate")
    check_real("label_smoothing", label_smoothing, low=0.0, high=1.0, high_open=True,
               what="a smoothing epsilon")
    check_real("clip_grad", clip_grad, low=0.0, what="a gradient norm (0 = no clipping)")
    check_int("seed", seed, low=0, high=MAX_SEED)
    learning_rate(1, lr, warmup, schedule, steps)  # validates warmup and schedule
    _check_vocabs(model, src_vocab, tgt_vocab)
    device = next(model.parameters()).device if dist.get_backend() != "nccl" else \
        torch.device("cuda", torch.cuda.current_device())
    set_seed(seed)
    encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
    longest = max(max(len(s), len(t) + 1) for s, t in encoded)
    if longest > model.cfg.max_len:
        raise ValueError(f"pairs: a sentence needs {longest} positions, more than the model's "
                         f"max_len={model.cfg.max_len}")
    model.to(device).train()
    ddp = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9,
                                 fused=device.type in ("cpu", "cuda"))
    params = list(model.parameters())
    generator = torch.Generator().manual_seed(seed)
    order: list[int] = []
    history = History(device=f"{device} x {world} processes")
    start = time.perf_counter()
    for step in range(1, steps + 1):
        if len(order) < batch_size:  # a new shuffled epoch, the same on every process
            order += torch.randperm(len(encoded), generator=generator).tolist()
        idx, order = order[:batch_size], order[batch_size:]
        tokens = sum(len(encoded[i][1]) + 1 for i in idx)  # target words + <eos>, whole batch
        batch = collate([encoded[i] for i in idx[rank::world]], src_vocab, tgt_vocab,
                        device=device)
        logits = ddp(batch.src, batch.tgt_in)  # (batch / world, tgt_len, tgt_vocab_size)
        summed = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), reduction="sum",
                                 ignore_index=tgt_vocab.pad_id, label_smoothing=label_smoothing)
        optimizer.zero_grad(set_to_none=True)
        (summed * (world / tokens)).backward()  # DDP averages: mean over the global batch
        grad_norm = torch.nn.utils.clip_grad_norm_(params, clip_grad if clip_grad > 0 else math.inf)
        with torch.no_grad():
            keep = batch.tgt_out != tgt_vocab.pad_id
            correct = ((logits.argmax(-1) == batch.tgt_out) & keep).sum()
            totals = torch.stack([summed.detach().double(), correct.double()])  # (2,)
            dist.all_reduce(totals)
        loss = float(totals[0]) / tokens
        if not (math.isfinite(loss) and torch.isfinite(grad_norm)):
            raise TrainingDiverged(f"lr: the loss became {loss:.3g} at step {step} with "
                                   f"lr={lr:g}; training stopped. Try a smaller lr.", history)
        rate = learning_rate(step, lr, warmup, schedule, steps)
        for group in optimizer.param_groups:
            group["lr"] = rate
        optimizer.step()
        history.loss.append(loss)
        history.accuracy.append(float(totals[1]) / tokens)
        history.lr.append(rate)
        history.seconds.append(time.perf_counter() - start)
    model.eval()
    return history
