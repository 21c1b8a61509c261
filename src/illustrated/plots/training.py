"""Training curves: loss and accuracy per step, several runs side by side."""
from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["plot_training_curves"]


def plot_training_curves(runs: Mapping[str, Mapping[str, Sequence[float]]], *,
                         title: str = "", log_loss: bool = True) -> Figure:
    """Loss (left) and token accuracy (right) against the step, one line per run.

    Parameters
    ----------
    runs : {label: {"loss": [...], "accuracy": [...]}} (e.g. ``vars(history)`` of ``il.train``);
        "accuracy" is optional.
    title : figure title.   log_loss : plot the loss on a log scale.

    Returns
    -------
    Figure with two axes: ``axes[0]`` loss (nats per token), ``axes[1]`` accuracy.

    Raises
    ------
    ValueError
        If ``runs`` is empty.
    """
    if not runs:
        raise ValueError("runs: expected at least one run to plot, got none")
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(8.0, 3.2), constrained_layout=True)
    for label, run in runs.items():
        steps = range(1, len(run["loss"]) + 1)
        ax_loss.plot(steps, run["loss"], label=label)
        if run.get("accuracy"):
            ax_acc.plot(steps, run["accuracy"], label=label)
    if log_loss:
        ax_loss.set_yscale("log")
    ax_loss.set(xlabel="step", ylabel="cross-entropy (nats per token)", title="loss")
    ax_acc.set(xlabel="step", ylabel="token accuracy", title="accuracy", ylim=(0, 1.02))
    ax_loss.legend()
    if title:
        fig.suptitle(title)
    return fig
