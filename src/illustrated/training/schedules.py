"""The learning-rate schedules of training: linear warm-up, then constant, Noam (paper Eq. 3) or cosine.

References: paper §5.3 (Eq. 3, the warm-up schedule); Loshchilov & Hutter 2017 (SGDR) for the
cosine shape.
"""
from __future__ import annotations

import math

from .._args import check_choice, check_int, check_real
from ..recipe import SCHEDULES

__all__ = ["SCHEDULES", "learning_rate"]



def learning_rate(step: int, lr: float, warmup: int, schedule: str = "constant",
                  total_steps: int | None = None) -> float:
    """Learning rate at a 1-based ``step``: linear warm-up over ``warmup`` steps to the peak ``lr``,
    then one of three shapes.

    - "constant": stays at ``lr``.
    - "noam": paper Eq. 3, d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), rescaled so that its
      peak (at ``step == warmup``) is ``lr`` instead of (d_model · warmup)^-0.5: ``lr·sqrt(warmup/step)``.
    - "cosine": half a cosine from ``lr`` down to 0 at ``total_steps`` (needs ``total_steps``);
      0 after it.

    Edges: ``warmup=0`` starts at the peak; ``step == warmup`` is the peak; with warm-up, step 1
    is ``lr / warmup`` (never 0: the first step moves the weights).

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
    check_int("step", step, low=1)
    check_real("lr", lr, low=0.0, what="a learning rate")
    check_int("warmup", warmup, low=0, what="a number of steps")
    check_choice("schedule", schedule, SCHEDULES)
    if total_steps is not None:
        check_int("total_steps", total_steps, low=1)
    elif schedule == "cosine":
        raise ValueError("total_steps: the 'cosine' schedule needs the number of steps, got None")
    if step < warmup:
        return lr * step / warmup
    if schedule == "noam" and warmup > 0:
        return lr * math.sqrt(warmup / step)
    if schedule == "cosine":
        progress = (step - warmup) / max(total_steps - warmup, 1)
        return lr * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return lr
