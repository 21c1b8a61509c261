"""Widgets of chapters 03 and 04, and their kernel-free players for the static page.

Each widget wires a compute function of :mod:`illustrated.explain.attention` to a plot function
of :mod:`illustrated.plots.attention` or :mod:`illustrated.plots.matrices` with
``interactive_output``; its default state reproduces the post's figure. Each ``*_player``
renders the same picture for a handful of settings into an HTML slider that needs no kernel.
Only ipywidgets 7.7 APIs are used (Colab).

References: post "Self-Attention in Detail" and "The Beast With Many Heads"; paper §3.2.
"""
from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from ..explain import attention as compute
from ..plots import attention as attention_plots
from ..plots import matrices as matrix_plots
from ..plots.player import frames_player
from ..plots.style import COLORS

__all__ = ["softmax_widget", "softmax_player", "draw_saturation", "saturation_widget", "saturation_player",
           "heads_widget", "heads_player", "draw_head_split"]


def _show(fig) -> None:
    display(fig)
    plt.close(fig)


# --- steps 2-4 for the post's two scores -----------------------------------------------------

def _draw_softmax(score_1: float, score_2: float, d_k: int, fig=None):
    result = compute.scaled_softmax([score_1, score_2], d_k)
    return attention_plots.plot_scaled_softmax(["q1·k1", "q1·k2"], *result, d_k, fig=fig)


def _show_softmax(score_1: float, score_2: float, d_k: int) -> None:
    _show(_draw_softmax(score_1, score_2, d_k))


def softmax_widget(score_1: float = 112.0, score_2: float = 96.0, d_k: int = 64) -> widgets.VBox:
    """Edit the two scores of "Thinking" and the key dimension, and watch the softmax.

    Parameters
    ----------
    score_1, score_2 : float
        q1 · k1 and q1 · k2 (the post's 112 and 96).
    d_k : int
        Key dimension; the scores are divided by its square root (the paper's 64 gives 8).

    Returns
    -------
    ipywidgets.VBox
        Two sliders for the scores, one for d_k, and the plot of
        :func:`illustrated.plots.attention.plot_scaled_softmax`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``d_k`` is not in 1..1024 (the slider's range).

    References
    ----------
    Post "Self-Attention in Detail" (steps two to four); paper §3.2.1.
    """
    if not 1 <= d_k <= 1024:
        raise ValueError(f"d_k: expected 1 to 1024 (the slider's range), got {d_k}")
    s1 = widgets.FloatSlider(value=score_1, min=0.0, max=200.0, step=1.0, description="q1·k1")
    s2 = widgets.FloatSlider(value=score_2, min=0.0, max=200.0, step=1.0, description="q1·k2")
    dk = widgets.IntSlider(value=d_k, min=1, max=1024, step=1, description="d_k")
    out = widgets.interactive_output(_show_softmax, {"score_1": s1, "score_2": s2, "d_k": dk})
    return widgets.VBox([widgets.HBox([s1, s2, dk]), out])


def softmax_player(score_1: float = 112.0, scores_2: Sequence[float] = tuple(range(80, 134, 6)),
                   d_k: int = 64) -> str:
    """The softmax widget as a kernel-free player: the second score moves, the first stays.

    Parameters
    ----------
    score_1 : float
        q1 · k1.
    scores_2 : sequence of float
        The values of q1 · k2, one frame each.
    d_k : int
        Key dimension.

    Returns
    -------
    str
        HTML of the player (show with ``IPython.display.HTML``).

    Shapes
    ------
    One frame per value of ``scores_2``.

    Raises
    ------
    ValueError
        If ``scores_2`` is empty.

    References
    ----------
    Post "Self-Attention in Detail"; paper §3.2.1.
    """
    scores_2 = list(scores_2)
    if not scores_2:
        raise ValueError("scores_2: expected at least one score, got none")
    fig = _draw_softmax(score_1, scores_2[0], d_k)
    fig.set_dpi(72)

    def draw_frame(i: int) -> None:
        _draw_softmax(score_1, scores_2[i], d_k, fig=fig)

    return frames_player(fig, draw_frame, len(scores_2))


# --- softmax saturation as d_k grows ---------------------------------------------------------

_D_K_CHOICES = tuple(2 ** i for i in range(11))


def draw_saturation(d_k: int, curve: compute.SaturationCurve, n_keys: int, seed: int,
                    fig=None):
    """The saturation widget's picture for one ``d_k`` (a Figure), over a precomputed ``curve``.

    Used by the widget, its player and the static page's precomputed panels. Paper §3.2.1.
    """
    example = compute.saturation_example(d_k, n_keys, seed)
    return attention_plots.plot_saturation(example.unscaled, example.scaled, d_k, *curve, fig=fig)


class _SaturationView:
    """Keeps the (slow to compute) curve so that moving the slider only redraws."""

    def __init__(self, n_keys: int, seed: int) -> None:
        self.n_keys, self.seed = n_keys, seed
        self.curve = compute.saturation_curve(_D_K_CHOICES, n_keys=n_keys, seed=seed)

    def show(self, d_k: int) -> None:
        _show(draw_saturation(d_k, self.curve, self.n_keys, self.seed))


def saturation_widget(d_k: int = 64, n_keys: int = 8, seed: int = 0) -> widgets.VBox:
    """A d_k slider showing why the scores are divided by √d_k: unscaled softmaxes saturate.

    Parameters
    ----------
    d_k : int
        Initial key dimension, a power of two from 1 to 1024 (the paper's 64 by default).
    n_keys : int
        Words attended to.
    seed : int
        Seed of the random queries and keys.

    Returns
    -------
    ipywidgets.VBox
        A d_k selection slider and the plot of :func:`illustrated.plots.attention.plot_saturation`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``d_k`` is not a power of two from 1 to 1024.

    References
    ----------
    Post "Self-Attention in Detail"; paper §3.2.1 and footnote 4.
    """
    if d_k not in _D_K_CHOICES:
        raise ValueError(f"d_k: expected one of {list(_D_K_CHOICES)}, got {d_k}")
    view = _SaturationView(n_keys, seed)
    slider = widgets.SelectionSlider(options=list(_D_K_CHOICES), value=d_k, description="d_k")
    out = widgets.interactive_output(view.show, {"d_k": slider})
    return widgets.VBox([slider, out])


def saturation_player(d_k_values: Sequence[int] = _D_K_CHOICES[::2], n_keys: int = 8,
                      seed: int = 0) -> str:
    """The saturation widget as a kernel-free player over d_k.

    Parameters
    ----------
    d_k_values : sequence of int
        One frame per key dimension (default 1, 4, 16, 64, 256, 1024).
    n_keys : int
        Words attended to.
    seed : int
        Seed of the random queries and keys.

    Returns
    -------
    str
        HTML of the player.

    Shapes
    ------
    One frame per d_k.

    Raises
    ------
    ValueError
        If ``d_k_values`` is empty or holds a non-positive value.

    References
    ----------
    Post "Self-Attention in Detail"; paper §3.2.1 and footnote 4.
    """
    d_k_values = list(d_k_values)
    curve = compute.saturation_curve(sorted({*_D_K_CHOICES, *d_k_values}), n_keys=n_keys,
                                     seed=seed)
    fig = draw_saturation(d_k_values[0], curve, n_keys, seed)
    fig.set_dpi(72)

    def draw_frame(i: int) -> None:
        draw_saturation(d_k_values[i], curve, n_keys, seed, fig=fig)

    return frames_player(fig, draw_frame, len(d_k_values))


# --- the number of heads ---------------------------------------------------------------------

def draw_head_split(d_model: int = 8, n_heads: int = 2, seed: int = 0, fig=None):
    """Draw the same X and weights cut into ``n_heads`` heads: Q split into Q_h, one Z_h each, concat × W_O.

    Parameters
    ----------
    d_model : int
        Model width (2 to 16).
    n_heads : int
        Number of heads; must divide ``d_model``.
    seed : int
        Seed of :func:`illustrated.explain.attention.multi_head_example`.
    fig : Figure, optional
        A figure to redraw into.

    Returns
    -------
    Figure
        The picture of :func:`illustrated.plots.matrices.plot_equations`: X × W^Q = Q (columns
        coloured by head), the heads' Q_h, their Z_h, and concat × W^O = Z.

    Shapes
    ------
    X (2, d_model); each Q_h and Z_h (2, d_model / n_heads).

    Raises
    ------
    ValueError
        As :func:`illustrated.explain.attention.multi_head_example`.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    ex = compute.multi_head_example(d_model, n_heads, seed=seed)
    res = ex.result
    colors = attention_plots.head_colors(n_heads)
    by_column = [colors[j // ex.d_k] for j in range(d_model)]
    term = matrix_plots.MatrixTerm
    split, outs = [], []
    for h in range(n_heads):
        split += [term(f"$Q_{{{h}}}$", res.q[h], colors[h]), ""]
        outs += [term(f"$Z_{{{h}}}$", res.z[h], colors[h]), ""]
    rows = [[term("X", ex.X, COLORS["input"]), "×", term("$W^Q$", ex.W_Q, COLORS["query"]), "=",
             term("Q", ex.projections()[0], column_colors=by_column)],
            split[:-1], outs[:-1],
            [term("concat", res.concat, column_colors=by_column), "×",
             term("$W^O$", ex.W_O, COLORS["output"]), "=", term("Z", res.output, COLORS["z"])]]
    title = (f"n_heads = {n_heads}: each head gets d_k = d_model / n_heads = {d_model} / "
             f"{n_heads} = {ex.d_k} columns")
    return matrix_plots.plot_equations(rows, title=title, decimals=1, scale=0.36, fig=fig)


def _show_heads(n_heads: int, d_model: int, seed: int) -> None:
    _show(draw_head_split(d_model, n_heads, seed))


def heads_widget(d_model: int = 8, n_heads: int = 2, seed: int = 0) -> widgets.VBox:
    """Choose the number of heads: the picture and the split d_k = d_model / n_heads follow.

    Parameters
    ----------
    d_model : int
        Model width (2 to 16).
    n_heads : int
        Initial number of heads, a divisor of ``d_model``.
    seed : int
        Seed of the example matrices.

    Returns
    -------
    ipywidgets.VBox
        A dropdown of the divisors of ``d_model`` and the picture of :func:`draw_head_split`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``n_heads`` does not divide ``d_model``.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    choices = [h for h in range(1, d_model + 1) if d_model % h == 0]
    if n_heads not in choices:
        raise ValueError(f"n_heads: expected a divisor of d_model={d_model} ({choices}), "
                         f"got {n_heads}")
    dropdown = widgets.Dropdown(options=choices, value=n_heads, description="n_heads")
    out = widgets.interactive_output(_show_heads, {"n_heads": dropdown,
                                                   "d_model": widgets.fixed(d_model),
                                                   "seed": widgets.fixed(seed)})
    return widgets.VBox([dropdown, out])


def heads_player(d_model: int = 8, seed: int = 0) -> str:
    """The heads widget as a kernel-free player over every divisor of d_model.

    Parameters
    ----------
    d_model : int
        Model width (2 to 16).
    seed : int
        Seed of the example matrices.

    Returns
    -------
    str
        HTML of the player, one frame per head count.

    Shapes
    ------
    One frame per divisor of ``d_model``.

    Raises
    ------
    ValueError
        As :func:`illustrated.explain.attention.multi_head_example`.

    References
    ----------
    Post "The Beast With Many Heads"; paper §3.2.2.
    """
    choices = [h for h in range(1, d_model + 1) if d_model % h == 0]
    fig = draw_head_split(d_model, choices[0], seed)
    fig.set_dpi(72)
    size = fig.get_size_inches()

    def draw_frame(i: int) -> None:
        draw_head_split(d_model, choices[i], seed, fig=fig)
        fig.set_size_inches(size)  # every frame the same size

    return frames_player(fig, draw_frame, len(choices))
