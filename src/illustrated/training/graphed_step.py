"""The whole training step as one CUDA graph a bucket shape: forward, objective, backward,
clipping and Adam's update, replayed with one launch.

The step's compiled forward and objective (:class:`~illustrated.training.captured_step.
CapturedStep`), ``backward()``, ``clip_grad_norm_`` and Adam's fused update are captured
together with ``torch.cuda.graph``, one graph a bucket shape, sharing one memory pool. The
first batch of a shape runs uncaptured on the capture stream (it compiles and warms up); the
second records the graph; every later one copies its inputs and the learning rate into the
graph's tensors and replays. On a CPU the same object runs the same step uncaptured. Sources:
CUDA semantics notes, "CUDA Graphs" (whole-network capture); Nguyen et al. 2021.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import torch

from .captured_step import CapturedStep

__all__ = ["GraphedStep"]

#: How many shapes get a graph of their own; batches of any other shape run uncaptured.
_MAX_GRAPHS = 64


class _Graph:
    """One captured step: the graph, its input tensors and its outputs."""

    def __init__(self, graph: torch.cuda.CUDAGraph, inputs: tuple, outputs: tuple) -> None:
        self.graph, self.inputs, self.outputs = graph, inputs, outputs


class GraphedStep:
    """One training step, forward to Adam's update, captured as a CUDA graph per bucket.

    step: the run's :class:`~illustrated.training.captured_step.CapturedStep` (compiled forward and
    loss, padded batches); optimizer: the run's Adam (fused); params: the model's parameters;
    max_norm: the clipping threshold (``math.inf``: no clipping).

    ``graphed(rows, rate)`` takes one step on the pairs ``rows`` with learning rate ``rate`` and
    returns (loss, gradients' norm, correct target tokens), tensors on the device, the loss the
    mean cross-entropy per target token; or None, having done nothing, when the eager step must
    run (a compiler that failed: see :meth:`CapturedStep.declines`). If a capture
    fails, it warns once and runs every later step uncaptured.
    """

    def __init__(self, step: CapturedStep, optimizer: torch.optim.Optimizer, params: list,
                 max_norm: float) -> None:
        self.step, self.optimizer, self.params, self.max_norm = step, optimizer, params, max_norm
        self.capture = step.device.type == "cuda"
        self.graphs: dict[tuple[int, ...], _Graph] = {}
        self.seen: set[tuple[int, ...]] = set()  # shapes stepped once (compiled, warmed up)
        self.pool = None
        if self.capture:
            self.stream = torch.cuda.Stream(step.device)
            self.lr = torch.zeros((), device=step.device)  # what the graphs' Adam reads

    def __call__(self, rows: Sequence[int], rate: float
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        if self.step.declines():
            return None
        batch = self.step.batch(rows)
        shape = tuple(batch[0].shape) + tuple(batch[1].shape)
        graph = self.graphs.get(shape)
        if graph is None and shape in self.seen and self.capture and len(self.graphs) < _MAX_GRAPHS:
            graph = self._record(shape, batch)
        if graph is None:
            out = self._uncaptured(batch)
            self.seen.add(shape)
            return out
        self.lr.fill_(rate)
        for static, new in zip(graph.inputs, batch):
            static.copy_(new, non_blocking=True)
        graph.graph.replay()
        return graph.outputs

    def _body(self, batch: tuple) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """The step: compiled forward and loss, backward, clipping, Adam's update."""
        self.optimizer.zero_grad(set_to_none=True)
        out = self.step.forward(batch)
        if out is None:  # compiling failed: the caller takes the eager step
            return None
        total, loss, correct = out
        total.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.max_norm)
        self.optimizer.step()
        return loss.detach(), norm, correct

    def _uncaptured(self, batch: tuple):
        """The step run as it is; on CUDA on the capture stream, as a warm-up must."""
        if not self.capture:
            return self._body(batch)
        current = torch.cuda.current_stream(self.step.device)
        self.stream.wait_stream(current)
        with torch.cuda.stream(self.stream):
            out = self._body(batch)
        current.wait_stream(self.stream)
        return out

    def _record(self, shape: tuple, batch: tuple) -> _Graph | None:
        """Capture the step for ``shape`` (nothing runs), or None if capturing fails."""
        inputs = tuple(t.clone() for t in batch)
        groups = self.optimizer.param_groups
        rates = [group["lr"] for group in groups]
        graph = torch.cuda.CUDAGraph()
        self.optimizer.zero_grad(set_to_none=True)  # the graph's backward makes the gradients
        try:
            for group in groups:  # Adam reads its rate from a tensor, and checks it may be captured
                group["lr"], group["capturable"] = self.lr, True
            with torch.cuda.graph(graph, pool=self.pool, stream=self.stream):
                outputs = self._body(inputs)
            if outputs is None:
                raise RuntimeError("the compiled forward declined inside the capture")
        except Exception as err:  # noqa: BLE001 - the step runs uncaptured from now on
            self.capture = False
            warnings.warn(f"compile: capturing the training step as a CUDA graph failed, so "
                          f"it runs uncaptured: {type(err).__name__}: "
                          f"{' '.join(str(err).split())[:300]}", stacklevel=4)
            return None
        finally:
            for group, rate in zip(groups, rates):
                group["lr"], group["capturable"] = rate, False
        self.pool = graph.pool()
        self.graphs[shape] = _Graph(graph, inputs, outputs)
        return self.graphs[shape]

    def release(self) -> None:
        """Drop the graphs and the gradients that point into their memory."""
        if self.graphs:
            self.graphs.clear()
            self.optimizer.zero_grad(set_to_none=True)
