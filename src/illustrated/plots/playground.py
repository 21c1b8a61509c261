"""The playground's pictures: a (live) loss curve and the encoder-decoder attention of one sentence.

Arrays and labels in, Figure out; nothing here trains, decodes or computes a weight (see
:mod:`illustrated.explain.playground`).

References: post "Go Forth And Transform", "Recap Of Training", "The Decoder Side"; paper §3.2.3.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .primitives import colorbar, heatmap
from .style import CMAP, COLORS

__all__ = ["plot_loss_curve", "plot_cross_attention"]

_INK = COLORS["text"]


def plot_loss_curve(steps: Sequence[int], losses: Sequence[float], *,
                    total_steps: int | None = None, title: str = "",
                    fig: Figure | None = None) -> Figure:
    """The training loss against the step, on a log scale: the curve drawn while the model learns.

    Parameters
    ----------
    steps : the steps seen so far.   losses : the loss at each (nats per target token).
    total_steps : fixes the x range to the whole run, so a live curve grows into a fixed frame.
    title : axes title.   fig : a Figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure with one axes and one line (``ax.lines[0]`` holds ``steps`` and ``losses``).

    Shapes
    ------
    ``steps`` and ``losses`` (n,).

    Raises
    ------
    ValueError
        If the lengths differ or a loss is not positive (a log scale needs > 0).

    References
    ----------
    Post "Recap Of Training", "The Loss Function".
    """
    x, y = np.asarray(steps, dtype=np.float64), np.asarray(losses, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"losses: expected one loss per step ({x.shape}), got shape {y.shape}")
    if np.any(y <= 0):
        raise ValueError("losses: expected positive values (the curve uses a log scale)")
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(5.5, 3.0)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(x, y, color=COLORS["query"], lw=1.2)
    ax.set_yscale("log")
    if total_steps:
        ax.set_xlim(0, total_steps)
    ax.set(xlabel="step", ylabel="cross-entropy (nats per token)")
    if title:
        ax.set_title(title, fontsize=10, color=_INK)
    fig.tight_layout()
    return fig


def plot_cross_attention(weights: object, source_tokens: Sequence[str],
                         output_tokens: Sequence[str], *, title: str = "",
                         annotate: bool = True) -> Figure:
    """Encoder-decoder attention as a heatmap: source words across, output words down.

    Parameters
    ----------
    weights : (out_len, src_len) attention weights, each row summing to 1.
    source_tokens : column labels.   output_tokens : row labels (the word each row produced).
    title : axes title.   annotate : write each weight in its cell (2 decimals, ink or
        white for contrast).

    Returns
    -------
    Figure with the heatmap axes (``ax.images[0].get_array()`` is ``weights``) and a colour bar.

    Shapes
    ------
    ``weights`` (len(output_tokens), len(source_tokens)).

    Raises
    ------
    ValueError
        If ``weights`` is not 2-D or does not match the labels.

    References
    ----------
    Post "The Decoder Side" (encoder-decoder attention); paper §3.2.3.
    """
    array = np.asarray(weights, dtype=np.float64)
    if array.ndim != 2 or array.shape != (len(output_tokens), len(source_tokens)):
        raise ValueError(f"weights: expected shape ({len(output_tokens)}, {len(source_tokens)}) "
                         f"(output words, source words), got {array.shape}")
    rows, cols = array.shape
    fig, ax = plt.subplots(figsize=(0.55 * cols + 2.2, 0.45 * rows + 1.4), layout="constrained")
    image = heatmap(ax, array, row_labels=output_tokens, col_labels=source_tokens, cmap=CMAP,
                    vmin=0.0, vmax=1.0, annotate=annotate, col_rotation=45)
    ax.set_xlabel("source word (key)", fontsize=9)
    ax.set_ylabel("output word (query)", fontsize=9)
    if title:
        ax.set_title(title, fontsize=10, color=_INK)
    colorbar(fig, image, ax)
    return fig
