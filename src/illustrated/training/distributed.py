"""Data-parallel training over several processes: ``torch.distributed`` + ``DistributedDataParallel``.

Launched by PyTorch's own ``torchrun`` (we write no launcher), e.g.
``torchrun --nproc_per_node=2 -m illustrated train --pairs my.tsv``. This module only joins the
process group; the training loop is :func:`illustrated.train`'s own, which wraps the model in
``DistributedDataParallel`` whenever a process group is running. Every process draws the same
shuffled global batch from the same seeded generator and takes every ``world_size``-th pair of it
(a DistributedSampler-style split); each one's loss is its share of the global batch's summed
cross-entropy, scaled so that DDP's gradient average equals the gradient of the mean over the
whole batch. Training on N processes therefore follows single-process :func:`illustrated.train`
with the same ``batch_size``, up to floating-point summation order (dropout aside: each process
draws its own masks). The process group waits at most :data:`TIMEOUT` seconds (``--timeout``) for
a process that stopped answering, then the run ends with one line instead of gloo's 30 minutes.

References: Li et al. 2020, "PyTorch Distributed: Experiences on Accelerating Data Parallel
Training" (DDP); paper §5.2 (8 GPUs, batches of about 25000 tokens).
"""
from __future__ import annotations

import contextlib
import datetime
import os

import torch
import torch.distributed as dist

from .._args import check_bool, check_real

__all__ = ["TIMEOUT", "launched_by_torchrun", "init", "is_main", "lost_peer", "leave",
           "process_group", "rank_device", "wrap", "synced_at", "sum_over_processes",
           "average_gradients"]

#: Seconds a process waits for the others in a collective before it gives up: 5 minutes, not
#: the 30 of gloo's and NCCL's own default (a stopped or hung rank then ends the run soon).
TIMEOUT = 300.0


def launched_by_torchrun() -> bool:
    """True when this process is one of several that ``torchrun`` started (``WORLD_SIZE`` > 1)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


#: Longest ``timeout`` (seconds): a week. A longer wait is a hung run, and 1e300 s is more than
#: the process group's timedelta can hold.
MAX_TIMEOUT = 7 * 86400.0


def init(device: str = "auto", *, timeout: float = TIMEOUT) -> torch.device:
    """Join the process group ``torchrun`` set up (env:// rendezvous) and return this rank's device.

    NCCL and ``cuda:LOCAL_RANK`` when CUDA is available and ``device`` is "auto" or "cuda";
    gloo and the CPU otherwise. Calling it again once joined only returns the device.

    Parameters
    ----------
    device : "auto", "cpu" or "cuda".
    timeout : float, seconds a collective (all-reduce, broadcast) waits for the other processes
        before it raises (:func:`is_timeout` recognises the error); default :data:`TIMEOUT`.

    Raises
    ------
    ValueError
        If ``device`` is not "auto", "cpu" or "cuda", or is "cuda" without a GPU, or
        ``timeout`` is not a number of seconds in (0, MAX_TIMEOUT] (a week).
    """
    check_real("timeout", timeout, low=0.0, low_open=True, high=MAX_TIMEOUT,
               what="a number of seconds")
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
        dist.init_process_group("nccl" if cuda else "gloo",
                                timeout=datetime.timedelta(seconds=timeout))
    return chosen


def is_main() -> bool:
    """True on rank 0, or when no process group is running (the one that prints and saves)."""
    return not dist.is_initialized() or dist.get_rank() == 0


def lost_peer(error: BaseException, timeout: float) -> str | None:
    """A one-line account of ``error`` if another process timed out or went away, else None."""
    text = str(error)
    if "timed out" in text.lower() or "timeout" in text.lower():
        return (f"--timeout: another process did not answer within {timeout:g} s (stopped, "
                f"killed or stuck?); training stopped")
    for reason in ("Connection reset by peer", "Connection closed by peer", "Broken pipe"):
        if reason in text:
            return f"another process of the run went away ({reason}); training stopped"
    return None


def leave() -> None:
    """Leave the process group, if one is running."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


# ---- what il.train asks of the process group

def process_group(distributed: bool | None) -> tuple[int, int, bool]:
    """(rank, world_size, True) under a running process group, (0, 1, False) when alone.

    ``distributed``: None uses the group when one is running, True requires one, False trains
    alone even so. Raises ValueError for True without a running group (TypeError, also a
    ValueError, for a non-bool).
    """
    if distributed is not None:
        check_bool("distributed", distributed)
    running = dist.is_available() and dist.is_initialized()
    if distributed and not running:
        raise ValueError("distributed: expected a running process group (launch with torchrun "
                         "and call illustrated.training.distributed.init() first), got none")
    if running and distributed is not False:
        return dist.get_rank(), dist.get_world_size(), True
    return 0, 1, False


def rank_device() -> torch.device:
    """This rank's device under a running group: its GPU with NCCL, the CPU with gloo."""
    return torch.device("cuda", torch.cuda.current_device()) \
        if dist.get_backend() == "nccl" else torch.device("cpu")


def wrap(model: torch.nn.Module, device: torch.device, several: bool) -> torch.nn.Module:
    """The model in ``DistributedDataParallel`` under a process group, the model itself alone."""
    if not several:
        return model
    return torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None)


def synced_at(net: torch.nn.Module, last: bool):
    """Context of one micro-batch's backward: DDP all-reduces the gradients only at the ``last``
    micro-batch of a step (``no_sync`` before it); nothing at all for an unwrapped model."""
    if last or not isinstance(net, torch.nn.parallel.DistributedDataParallel):
        return contextlib.nullcontext()
    return net.no_sync()


def sum_over_processes(totals: torch.Tensor, several: bool) -> torch.Tensor:
    """``totals`` summed over every process (all-reduce) under a group; as it is alone."""
    if several:
        dist.all_reduce(totals)
    return totals


def average_gradients(params, several: bool) -> None:
    """The gradients of ``params``, weights DDP does not wrap (the read-out of
    :mod:`illustrated.training.referent`), averaged over every process as DDP averages the model's; a
    process whose share gave one no gradient counts zeros. Nothing alone."""
    if not several:
        return
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
        dist.all_reduce(p.grad)
        p.grad.div_(dist.get_world_size())
