"""Widgets of chapter 08: label smoothing's epsilon, and the distributions along training.

Glue only: controls and ``interactive_output`` of a function that calls a compute function of
:mod:`illustrated.explain.loss` and :func:`illustrated.plots.distributions.plot_distributions`.
Works with ipywidgets 7.7 (Colab) and 8.

References: post "The Loss Function"; paper §5.4.
"""
from __future__ import annotations

from functools import partial
from typing import Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..explain import loss as loss_explain
from ..plots import distributions as distribution_plots

__all__ = ["label_smoothing_widget", "draw_snapshot", "training_widget"]


def _show_smoothing(target_ids: tuple[int, ...], tokens: tuple[str, ...],
                    position_labels: tuple[str, ...], epsilon: float) -> None:
    targets = loss_explain.smoothed_targets(target_ids, len(tokens), epsilon)
    fig = distribution_plots.plot_distributions(
        {f"target, ε = {epsilon:.2f}": targets}, tokens, position_labels=position_labels,
        highlight=target_ids, title="label-smoothed targets")
    plt.show()
    plt.close(fig)


def label_smoothing_widget(target_ids: Sequence[int], tokens: Sequence[str],
                           position_labels: Sequence[str], *, epsilon: float = 0.1,
                           max_epsilon: float = 0.5) -> widgets.VBox:
    """A slider for epsilon: the one-hot targets give epsilon away, spread evenly over every word.

    Parameters
    ----------
    target_ids : the correct word at each position.   tokens : the vocabulary's words.
    position_labels : one title per position.
    epsilon : float, starting value (the paper's 0.1).   max_epsilon : largest slider value.

    Returns
    -------
    ipywidgets.VBox: the slider above the smoothed targets.

    Shapes
    ------
    The drawn targets are (len(target_ids), len(tokens)).

    Raises
    ------
    ValueError
        If ``epsilon`` is outside [0, max_epsilon] or ``position_labels`` does not have one label
        per target.

    References
    ----------
    Paper §5.4 (epsilon_ls = 0.1).
    """
    if not 0.0 <= epsilon <= max_epsilon <= 1.0:
        raise ValueError(f"epsilon: expected a value in [0, max_epsilon={max_epsilon}], "
                         f"got {epsilon!r}")
    if len(position_labels) != len(target_ids):
        raise ValueError(f"position_labels: expected {len(target_ids)} labels, got "
                         f"{len(position_labels)}")
    slider = widgets.FloatSlider(value=epsilon, min=0.0, max=max_epsilon, step=0.05,
                                 description="ε", readout_format=".2f", continuous_update=False)
    show = partial(_show_smoothing, tuple(int(i) for i in target_ids), tuple(tokens),
                   tuple(position_labels))
    out = widgets.interactive_output(show, {"epsilon": slider})
    return widgets.VBox([slider, out])


def draw_snapshot(snapshots: loss_explain.TrainingSnapshots, index: int):
    """The training widget's picture: the model's distributions at snapshot ``index`` beside the
    one-hot targets (a Figure). Used by the widget and by the static page's precomputed panels.
    Post "Recap Of Training".
    """
    positions = snapshots.positions
    return distribution_plots.plot_distributions(
        {f"model, step {snapshots.steps[index]}": snapshots.probs[index],
         "target": loss_explain.smoothed_targets(positions.target_ids, len(positions.vocab_tokens),
                                                 0.0)},
        positions.vocab_tokens, position_labels=positions.target_tokens,
        highlight=positions.target_ids)


def _show_snapshot(snapshots: loss_explain.TrainingSnapshots, index: int) -> None:
    fig = draw_snapshot(snapshots, index)
    plt.show()
    plt.close(fig)


def training_widget(snapshots: loss_explain.TrainingSnapshots, *,
                    index: int = -1) -> widgets.VBox:
    """A slider over training steps: the model's distributions sharpen towards the targets.

    Parameters
    ----------
    snapshots : the result of :func:`illustrated.explain.loss.train_with_snapshots`.
    index : int, starting snapshot (default the last, the trained model).

    Returns
    -------
    ipywidgets.VBox: the slider above the distributions and the one-hot targets.

    Shapes
    ------
    The drawn distributions are (tgt_len, vocab).

    Raises
    ------
    ValueError
        If ``index`` does not name a snapshot.

    References
    ----------
    Post "The Loss Function" (the trained model's distributions).
    """
    n = len(snapshots.steps)
    if not isinstance(index, int) or not -n <= index < n:
        raise ValueError(f"index: expected an int in [-{n}, {n}), got {index!r}")
    slider = widgets.SelectionSlider(options=[(str(s), i) for i, s in enumerate(snapshots.steps)],
                                     value=index % n, description="step",
                                     continuous_update=False)
    out = widgets.interactive_output(partial(_show_snapshot, snapshots), {"index": slider})
    return widgets.VBox([slider, out])
