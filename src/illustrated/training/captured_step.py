"""A training step the GPU runs as one piece: the forward pass and the objective, compiled,
over batches padded to a few shapes.

Each batch is padded to a bucket shape (:func:`bucket`: source length, target length and number
of sentences, each rounded up to the ladder 8, 10, 12, 14, 16, 20, 24, ...), so that the
compiled step (``torch.compile``) and, on CUDA, its graph
(:class:`~illustrated.training.graphed_step.GraphedStep`) are recorded once a bucket. Padding
changes no number up to float rounding: padded source positions are hidden keys, padded target
positions are ignored by the loss and come after every real one, padded sentences copy the
first with every target ignored. The step calls the model's ``encode_unchecked`` and
``decode_unchecked`` (the loop checked the data before training: no value check reads the GPU
mid-graph) and :func:`~illustrated.training.objective.objective`, the eager step's. The same function
runs on a CPU with any backend ("aot_eager" in the tests). Measurements:
``benchmarks/results/gpu_profile.json``. Sources: PyTorch ``torch.compile`` and "CUDA Graphs"
(CUDA semantics notes); Nguyen et al. 2021, "Accelerating PyTorch with CUDA Graphs".
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import torch

from .._args import ArgumentTypeError, describe
from ..data.vocab import Vocab
from ..masks import padding_mask
from .objective import objective
from .referent import ReferentObjective

__all__ = ["COMPILE_CHOICES", "bucket", "PaddedPairs", "padded_batch", "check_compile",
           "CapturedStep", "captured_step"]

#: What ``train(compile=...)`` takes besides the name of a ``torch.compile`` backend.
COMPILE_CHOICES = ("auto", True, False)

#: The bucket sizes: 4, 5, 6 and 7 times 2**k, from 8 (8, 10, 12, 14, 16, 20, 24, 28, 32, 40,
#: ...): a padded side is at most 1.25 times the longest sentence (or the batch), and at most
#: 4 shapes per octave.
_LADDER = tuple(sorted({base << k for base in (4, 5, 6, 7) for k in range(1, 24)}))

#: How many shapes torch.compile may record for the step (torch's own default is 8 per function).
_MAX_SHAPES = 64


def bucket(n: int, cap: int | None = None) -> int:
    """The smallest bucket size (8, 10, 12, 14, 16, 20, 24, ...) that holds ``n``, but at most
    ``cap`` (a model's ``max_len``) when ``cap`` holds ``n``."""
    size = next(b for b in _LADDER if b >= n)
    return max(n, min(size, cap)) if cap is not None else size


class PaddedPairs:
    """The training pairs as padded id tables, so that a batch is a gather, not a Python loop.

    encoded: (source ids, target ids) pairs of :func:`~illustrated.data.encode_pairs`, trusted
    (the training loop checked them). Built once a run: three tables of one row a pair, as wide
    as the corpus's longest source and target + 1, in the smallest integer type that holds the
    vocabulary (int16 for fewer than 32,768 words): ``src`` (ids, then padding), ``tgt_in``
    (<bos>, ids, padding) and ``tgt_out`` (ids, <eos>, padding), with each pair's lengths.
    """

    def __init__(self, encoded: Sequence[tuple[list[int], list[int]]], src_vocab: Vocab,
                 tgt_vocab: Vocab) -> None:
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        self.src_len = np.fromiter((len(s) for s, _ in encoded), np.int64, len(encoded))
        self.tgt_len = np.fromiter((len(t) + 1 for _, t in encoded), np.int64, len(encoded))
        dtype = np.min_scalar_type(-max(len(src_vocab), len(tgt_vocab)))  # a signed type
        self.src = np.full((len(encoded), self.src_len.max()), src_vocab.pad_id, dtype)
        self.tgt_in = np.full((len(encoded), self.tgt_len.max()), tgt_vocab.pad_id, dtype)
        self.tgt_out = self.tgt_in.copy()
        for i, (s, t) in enumerate(encoded):
            self.src[i, :len(s)] = s
            self.tgt_in[i, 0] = tgt_vocab.bos_id
            self.tgt_in[i, 1:len(t) + 1] = t
            self.tgt_out[i, :len(t)] = t
            self.tgt_out[i, len(t)] = tgt_vocab.eos_id

    def batch(self, rows: Sequence[int], *, max_len: int | None = None,
              device: torch.device | str | None = None
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """src, tgt_in, tgt_out (int64, on ``device``) of the pairs ``rows``, padded to their
        bucket: (bucket(len(rows)), bucket(longest source)) and (bucket(len(rows)),
        bucket(longest target + 1)), each length at most ``max_len`` when that holds it. Rows
        past the batch repeat the first pair's src and tgt_in, with tgt_out all padding (no
        loss, no gradient): a sentence of padding only would leave its queries no key."""
        rows = np.asarray(rows, dtype=np.int64)
        src_len = bucket(int(self.src_len[rows].max()), max_len)
        tgt_len = bucket(int(self.tgt_len[rows].max()), max_len)
        filled = np.concatenate([rows, np.full(bucket(len(rows)) - len(rows), rows[0])])
        src = _widened(self.src[filled], src_len, self.src_vocab.pad_id)
        tgt_in = _widened(self.tgt_in[filled], tgt_len, self.tgt_vocab.pad_id)
        tgt_out = _widened(self.tgt_out[filled], tgt_len, self.tgt_vocab.pad_id)
        tgt_out[len(rows):] = self.tgt_vocab.pad_id  # the filler rows' targets are ignored
        return tuple(torch.from_numpy(a).to(device, non_blocking=True)
                     for a in (src, tgt_in, tgt_out))


def _widened(table: np.ndarray, width: int, pad_id: int) -> np.ndarray:
    """The rows of ``table`` as int64, cut or padded with ``pad_id`` to ``width`` columns."""
    out = np.full((len(table), width), pad_id, dtype=np.int64)
    keep = min(width, table.shape[1])
    out[:, :keep] = table[:, :keep]
    return out


def padded_batch(encoded: Sequence[tuple[list[int], list[int]]], src_vocab: Vocab,
                 tgt_vocab: Vocab, *, max_len: int | None = None,
                 device: torch.device | str | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """src, tgt_in, tgt_out of :func:`~illustrated.data.collate`, padded to a bucket shape.

    encoded: (source ids, target ids) pairs of :func:`~illustrated.data.encode_pairs`, trusted
    (the training loop checked them). Returns three int64 tensors on ``device``: src
    (bucket(batch), bucket(longest source)), tgt_in and tgt_out (bucket(batch), bucket(longest
    target + 1)); lengths at most ``max_len``. Rows past the batch copy the first pair's src and
    tgt_in, with tgt_out all padding (ignored by the loss). :class:`PaddedPairs` does the same
    for a run's pairs, built once. Paper §5.1 (batches of sentence pairs of similar length);
    post "Recap Of Training".
    """
    return PaddedPairs(encoded, src_vocab, tgt_vocab).batch(range(len(encoded)),
                                                            max_len=max_len, device=device)


def check_compile(value: object) -> bool | str:
    """``value`` if it is "auto", True, False or a ``torch.compile`` backend's name."""
    if value in COMPILE_CHOICES and isinstance(value, (bool, str)):
        return value
    if isinstance(value, str):
        backends = torch.compiler.list_backends(exclude_tags=())
        if value in backends:
            return value
        raise ValueError(f"compile: expected 'auto', True, False or a torch.compile backend "
                         f"({', '.join(backends)}), got {value!r}")
    raise ArgumentTypeError(f"compile: expected 'auto', True, False or a torch.compile "
                            f"backend's name, got {type(value).__name__} {describe(value)}")


class CapturedStep:
    """The forward pass, the loss and the token accuracy of one micro-batch, compiled.

    ``step.batch(rows)`` pads the pairs ``rows`` of ``encoded`` (the run's (source ids, target
    ids) pairs) to their bucket (:class:`PaddedPairs`), with the "it" labels (``referent``, a
    :class:`~illustrated.training.referent.ReferentObjective`) when the objective is on;
    ``step.forward(batch)`` returns (total, loss, correct) of
    :func:`~illustrated.training.objective.objective`: the loss plus the "it" term (what
    ``backward`` takes), the mean cross-entropy per target token, the right target tokens.
    ``step.declines()`` is True from the first time ``torch.compile`` fails on a new bucket
    (no C compiler, no Triton: "auto" must never stop a run that eager would finish), when
    ``forward`` returns None, with one warning: the caller runs its eager step then. The
    model's hooks are traced into the compiled step (on CUDA they run when a bucket's graph
    is captured, not at each replay: ``compile=False`` for a hook that must see every step).
    :class:`~illustrated.training.graphed_step.GraphedStep` calls them.
    backend: ``torch.compile``'s ("inductor"; no ``mode``: on CUDA
    :class:`~illustrated.training.graphed_step.GraphedStep` captures the whole step itself).
    Paper §5.3-5.4 (the loss, label smoothing); post "The Loss Function".
    """

    def __init__(self, model: torch.nn.Module, src_vocab: Vocab, tgt_vocab: Vocab, *,
                 device: torch.device, encoded: Sequence[tuple[list[int], list[int]]] = (),
                 label_smoothing: float = 0.0, bf16: bool = False,
                 backend: str = "inductor", referent: ReferentObjective | None = None) -> None:
        self.model, self.src_vocab, self.tgt_vocab = model, src_vocab, tgt_vocab
        self.referent = referent
        self.pairs = PaddedPairs(encoded, src_vocab, tgt_vocab) if encoded else None
        self.device, self.backend = device, backend
        self.shapes: set[tuple[int, ...]] = set()  # the buckets compiled so far
        self.failed = False  # torch.compile failed once: the eager step from then on
        src_pad, tgt_pad = model.cfg.pad_id, tgt_vocab.pad_id

        def logits_and_memory(src: torch.Tensor, tgt_in: torch.Tensor):
            src_mask = padding_mask(src, src_pad)  # (batch, 1, 1, src_len)
            memory = model.encode_unchecked(src, src_mask)  # (batch, src_len, d_model)
            out = model.decode_unchecked(tgt_in, memory, src_mask)  # (batch, tgt_len, d_model)
            return model.generator(out), memory  # (batch, tgt_len, tgt_vocab_size), memory

        def forward_loss(src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor,
                         it: torch.Tensor | None = None, noun: torch.Tensor | None = None):
            loss, correct, it_loss = objective(
                logits_and_memory, src, tgt_in, tgt_out, pad_id=tgt_pad,
                label_smoothing=label_smoothing, bf16=bf16, referent=referent, it=it, noun=noun)
            return loss + it_loss, loss, correct  # what backward takes, what is reported

        self.forward_loss = forward_loss  # the uncompiled function, for tests
        self.compiled = torch.compile(forward_loss, backend=backend, dynamic=False)

    def declines(self) -> bool:
        """True when the eager step must run: compiling failed once."""
        return self.failed

    def batch(self, rows: Sequence[int]) -> tuple[torch.Tensor, ...]:
        """The micro-batch ``rows`` padded to its bucket, on the step's device: src, tgt_in,
        tgt_out, and with the "it" objective each row's position of "it" and its noun."""
        batch = self.pairs.batch(rows, max_len=self.model.cfg.max_len, device=self.device)
        if self.referent is None:
            return batch
        return batch + self.referent.targets(rows, self.device, size=batch[0].shape[0])

    def forward(self, batch: tuple[torch.Tensor, ...]
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(total, loss, correct) of a padded batch, compiled; None (with one warning) from the
        first time ``torch.compile`` fails on a new shape."""
        shape = tuple(batch[0].shape) + tuple(batch[1].shape)
        try:
            with torch._dynamo.config.patch(recompile_limit=_MAX_SHAPES):
                out = self.compiled(*batch)
        except Exception as err:  # noqa: BLE001 - compiling a new shape failed: eager from now
            if shape in self.shapes:
                raise
            self.failed = True
            warnings.warn(f"compile: torch.compile ({self.backend}) failed on the first batch "
                          f"of shape {shape}, so training runs the eager step: "
                          f"{type(err).__name__}: {' '.join(str(err).split())[:300]}",
                          stacklevel=6)  # the caller of train()
            return None
        self.shapes.add(shape)
        return out


def captured_step(model: torch.nn.Module, compile: bool | str, src_vocab: Vocab,
                  tgt_vocab: Vocab, *, device: torch.device,
                  encoded: Sequence[tuple[list[int], list[int]]] = (), processes: int = 1,
                  grad_accum_steps: int = 1, precision: str = "fp32",
                  label_smoothing: float = 0.0,
                  referent: ReferentObjective | None = None) -> CapturedStep | None:
    """The :class:`CapturedStep` that ``train(compile=...)`` asks for here, or None (the eager
    step), over the run's pairs ``encoded``. "auto" compiles on CUDA only; True compiles on
    any device with inductor; a backend's name compiles with it (on CUDA the training loop
    captures the whole step as a CUDA graph either way: :mod:`illustrated.training.graphed_step`).
    One process and no gradient accumulation only: with several processes (DDP) or
    micro-batches the eager step runs, with one warning."""
    if compile is False or (compile == "auto" and device.type != "cuda"):
        return None
    if processes > 1 or grad_accum_steps > 1:
        warnings.warn(f"compile: the captured step runs one process without gradient "
                      f"accumulation; with {processes} process(es) and grad_accum_steps="
                      f"{grad_accum_steps} training runs the eager step", stacklevel=3)
        return None
    backend = "inductor" if compile in ("auto", True) else compile
    return CapturedStep(model, src_vocab, tgt_vocab, device=device, encoded=encoded,
                        label_smoothing=label_smoothing, bf16=precision == "bf16",
                        backend=backend, referent=referent)

