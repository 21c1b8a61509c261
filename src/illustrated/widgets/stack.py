"""Widgets of chapters 01-02: the encoder/decoder stacks as n_layers changes, and which rows move
when one position's input is nudged.

Glue only: each widget is a few controls and ``interactive_output`` of a function that calls a
compute function (:mod:`illustrated.explain.tensors`) and a plot function
(:mod:`illustrated.plots.diagrams`, :mod:`illustrated.plots.vectors`). Works with ipywidgets
7.7 (Colab) and 8.

References: post "A High-Level Look" and "Bringing The Tensors Into The Picture".
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from ..explain import tensors
from ..plots import diagrams, vectors

__all__ = ["draw_stack", "stack_widget", "draw_perturbation", "perturbation_widget"]


def draw_stack(n_layers: int, source: str, target: str):
    """The widget's picture: the encoder-decoder stack with ``n_layers`` a side (a Figure).

    Used by the widget and by the static page's precomputed panels. Post "A High-Level Look".
    """
    return diagrams.encoder_decoder_stack(n_layers, source=source, target=target,
                                          title=f"n_layers = {n_layers}")


def _show_stack(n_layers: int, source: str, target: str) -> None:
    fig = draw_stack(n_layers, source, target)
    plt.show()
    plt.close(fig)


def stack_widget(source: str, target: str, *, n_layers: int = 6,
                 max_layers: int = 6) -> widgets.VBox:
    """A slider over the number of layers; the stack of encoders and decoders is redrawn to match.

    Parameters
    ----------
    source, target : str
        Input sentence and output sentence written under and over the stacks.
    n_layers : int, default 6
        Starting value (the paper's six, as in the post's figure).
    max_layers : int, default 6
        Largest value of the slider, at most :data:`illustrated.plots.diagrams.MAX_DRAWN_LAYERS`.

    Returns
    -------
    ipywidgets.VBox
        The slider above the drawing.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``max_layers`` is not in [1, MAX_DRAWN_LAYERS] or ``n_layers`` not in [1, max_layers].

    References
    ----------
    Post "A High-Level Look" ("nothing magical about the number six"); paper §3.1, Table 3 (N).
    """
    if not isinstance(max_layers, int) or not 1 <= max_layers <= diagrams.MAX_DRAWN_LAYERS:
        raise ValueError(f"max_layers: expected an int in [1, {diagrams.MAX_DRAWN_LAYERS}], "
                         f"got {max_layers!r}")
    if not isinstance(n_layers, int) or not 1 <= n_layers <= max_layers:
        raise ValueError(f"n_layers: expected an int in [1, {max_layers}], got {n_layers!r}")
    slider = widgets.IntSlider(value=n_layers, min=1, max=max_layers, step=1,
                               description="n_layers", continuous_update=False)
    out = widgets.interactive_output(_show_stack, {"n_layers": slider,
                                                   "source": widgets.fixed(source),
                                                   "target": widgets.fixed(target)})
    return widgets.VBox([slider, out])


def draw_perturbation(position: int, delta: float, x: np.ndarray,
                      params: Mapping[str, np.ndarray], n_heads: int, words: Sequence[str]):
    """The widget's picture: nudge one input row by ``delta``, draw how every output row moves.

    ``x`` (seq, d_model); returns the Figure. Used by the widget and by the static page's
    precomputed panels. Post "Now We're Encoding!".
    """
    effect = tensors.perturbation_effect(x, params, n_heads, position, delta=delta)
    return vectors.change_heatmaps(effect.changes, words, perturbed=position,
                                   row_change=effect.row_change,
                                   title=f"nudging the input of {words[position]!r} "
                                         f"(position {position}) by {delta:g}")


def _show_perturbation(position: int, delta: float, x: np.ndarray,
                       params: Mapping[str, np.ndarray], n_heads: int,
                       words: Sequence[str]) -> None:
    fig = draw_perturbation(position, delta, x, params, n_heads, words)
    plt.show()
    plt.close(fig)


def perturbation_widget(x: object, params: Mapping[str, object], n_heads: int,
                        words: Sequence[str], *, position: int = 0,
                        delta: float = 1.0) -> widgets.VBox:
    """Pick a word and a nudge size; see which output rows of self-attention and of the
    feed-forward network change.

    Parameters
    ----------
    x : array_like
        An encoder layer's input, one vector per word.
    params : Mapping[str, array_like]
        That layer's weights (:data:`illustrated.reference.ENCODER_PARAM_KEYS`).
    n_heads : int
        Number of heads.
    words : sequence of str
        The word at each position.
    position : int, default 0
        Word nudged at first.
    delta : float, default 1.0
        Nudge length at first (the slider spans 0.1 to 5).

    Returns
    -------
    ipywidgets.VBox
        A word dropdown and a nudge slider above the heatmaps of
        :func:`illustrated.plots.vectors.change_heatmaps`.

    Shapes
    ------
    ``x`` (seq, d_model); ``words`` length seq.

    Raises
    ------
    ValueError
        If ``x`` is not 2-D, ``words`` does not have one word per row, ``position`` is out of
        range or ``delta`` is outside [0.1, 5].

    References
    ----------
    Post "Bringing The Tensors Into The Picture"; paper §3.3.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x: expected shape (seq, d_model), got {x.shape}")
    words = [str(w) for w in words]
    if len(words) != x.shape[0]:
        raise ValueError(f"words: expected {x.shape[0]} words (one per row of x), got {len(words)}")
    if not isinstance(position, int) or not 0 <= position < len(words):
        raise ValueError(f"position: expected an int in [0, {len(words)}), got {position!r}")
    if not 0.1 <= delta <= 5.0:
        raise ValueError(f"delta: expected a number in [0.1, 5], got {delta!r}")
    choice = widgets.Dropdown(options=[(f"{i}: {w}", i) for i, w in enumerate(words)],
                              value=position, description="nudge")
    size = widgets.FloatSlider(value=delta, min=0.1, max=5.0, step=0.1, description="by",
                               continuous_update=False)
    out = widgets.interactive_output(_show_perturbation, {
        "position": choice, "delta": size, "x": widgets.fixed(x),
        "params": widgets.fixed(dict(params)), "n_heads": widgets.fixed(n_heads),
        "words": widgets.fixed(words)})
    return widgets.VBox([widgets.HBox([choice, size]), out])
