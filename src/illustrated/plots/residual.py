"""Drawings of chapter 06: Add & Norm diagrams, vectors around layer norm, the post-LN/pre-LN race.

Arrays, labels and the structure read by :func:`illustrated.explain.norms.describe_stack` in;
Figure out. Nothing here computes math. Diagram boxes carry ``gid`` names ("sublayer",
"add-norm", "norm", "add", "residual", "cross", "final-norm") so tests can count them.

References: post "The Residuals"; paper §3.1 and Figure 1; Xiong et al. 2020.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle

from .player import frames_player
from .positional import plot_vector_rows
from .primitives import box, canvas
from .style import COLORS, MAX_FIGURE_WIDTH_IN

__all__ = ["plot_add_norm_layer", "plot_add_norm_stack", "plot_add_norm_vectors",
           "plot_layer_norm_bars", "plot_gradient_norms", "plot_training_race",
           "update_training_race", "training_player"]

_INK = COLORS["text"]
_MUTED = "#78909c"
_SUB_H, _NORM_H, _GAP = 0.75, 0.45, 0.32
_SUB_COLORS = {"Self-Attention": COLORS["attention"], "Encoder-Decoder Attention": COLORS["key"],
               "Feed Forward": COLORS["ffn"]}


def _box(ax: Axes, x: float, y: float, w: float, h: float, text: str, color: str, gid: str,
         fontsize: float = 9) -> None:
    box(ax, x, y, w, h, text, color, gid=gid, fontsize=fontsize, bold=False, rounding=0.08,
        linewidth=1.0, zorder=3)

def _up(ax: Axes, x: float, y0: float, y1: float, gid: str = "flow") -> None:
    ax.add_patch(FancyArrowPatch((x, y0), (x, y1), arrowstyle="-|>", mutation_scale=9,
                                 color=_INK, linewidth=1.0, gid=gid, zorder=2))


def _residual(ax: Axes, x_stream: float, y_from: float, x_side: float, y_to: float,
              x_box: float) -> None:
    """A dashed path: out of the stream at y_from, up the side, into the box at y_to."""
    ax.add_line(Line2D([x_stream, x_side, x_side], [y_from, y_from, y_to], color=_MUTED,
                       linestyle="--", linewidth=1.2, gid="residual", zorder=1))
    ax.add_patch(FancyArrowPatch((x_side, y_to), (x_box, y_to), arrowstyle="-|>",
                                 mutation_scale=9, color=_MUTED, linewidth=1.2,
                                 linestyle="--", gid="residual-head", zorder=2))


def _layer_height(sublayers: Sequence[str], norm_first: bool) -> float:
    per = _SUB_H + _NORM_H + 2 * _GAP + (0 if not norm_first else _NORM_H + _GAP)
    return len(sublayers) * per + _GAP


def _draw_layer(ax: Axes, x: float, y: float, w: float, sublayers: Sequence[str],
                norm_first: bool, *, name: str, frame_color: str, n_ffn: int = 1,
                side: str = "left") -> dict[str, float]:
    """One layer from ``y`` upwards; returns the top y and the centre y of cross-attention."""
    height = _layer_height(sublayers, norm_first)
    ax.add_patch(Rectangle((x - 0.35, y - 0.1), w + 0.7, height + 0.2, facecolor=frame_color,
                           alpha=0.25, edgecolor=frame_color, linewidth=1.5, gid="layer",
                           zorder=0))
    label_x = x - 0.45 if side == "left" else x + w + 0.45
    ax.text(label_x, y + height / 2, name, rotation=90, ha="center", va="center",
            fontsize=9, color=_INK, gid="layer-name")
    cx = x + w / 2
    x_side = x - 0.18 if side == "left" else x + w + 0.18
    x_edge = x if side == "left" else x + w
    where: dict[str, float] = {}
    cursor = y + _GAP
    for sub in sublayers:
        y_stream = cursor - _GAP / 2  # the residual leaves the stream here
        if norm_first:
            _box(ax, x, cursor, w, _NORM_H, "LayerNorm", COLORS["norm"], "norm")
            _up(ax, cx, cursor + _NORM_H, cursor + _NORM_H + _GAP)
            cursor += _NORM_H + _GAP
        if sub == "Feed Forward" and n_ffn > 1:
            gap = 0.15
            each = (w - gap * (n_ffn - 1)) / n_ffn
            for i in range(n_ffn):
                _box(ax, x + i * (each + gap), cursor, each, _SUB_H, "Feed\nForward",
                     _SUB_COLORS[sub], "sublayer", fontsize=8)
        else:
            _box(ax, x, cursor, w, _SUB_H, sub, _SUB_COLORS.get(sub, COLORS["output"]),
                 "sublayer")
        if sub == "Encoder-Decoder Attention":
            where["cross"] = cursor + _SUB_H / 2
        _up(ax, cx, cursor + _SUB_H, cursor + _SUB_H + _GAP)
        cursor += _SUB_H + _GAP
        if norm_first:
            _box(ax, x, cursor, w, _NORM_H, "Add", "white", "add")
        else:
            _box(ax, x, cursor, w, _NORM_H, "Add & Normalize", COLORS["norm"], "add-norm")
        _residual(ax, cx, y_stream, x_side, cursor + _NORM_H / 2, x_edge)
        _up(ax, cx, cursor + _NORM_H, cursor + _NORM_H + _GAP)
        cursor += _NORM_H + _GAP
    where["top"] = y + height
    return where


def _canvas(fig: Figure | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    return canvas(fig, figsize)

def _check_words(name: str, words: Sequence[str]) -> list[str]:
    words = [str(w) for w in words]
    if not words:
        raise ValueError(f"{name}: expected at least one word, got none")
    return words


def _inputs(ax: Axes, x: float, w: float, y: float, words: Sequence[str], prefix: str,
            color: str) -> None:
    """The words at the bottom, each with its vector (a small strip) and an arrow up."""
    n = len(words)
    for i, word in enumerate(words):
        cx = x + w * (i + 0.5) / n
        ax.text(cx, y, word, ha="center", va="center", fontsize=9, color=_INK, gid="word")
        for j in range(4):
            ax.add_patch(Rectangle((cx - 0.3 + 0.15 * j, y + 0.25), 0.15, 0.22, facecolor=color,
                                   edgecolor="white", linewidth=0.6, zorder=3))
        ax.text(cx + 0.42, y + 0.36, f"{prefix}{i + 1}", ha="left", va="center", fontsize=8,
                color=_INK)


def plot_add_norm_layer(sublayers: Sequence[str], *, norm_first: bool = False,
                        words: Sequence[str] = ("Thinking", "Machines"), name: str = "ENCODER #1",
                        title: str = "", fig: Figure | None = None) -> Figure:
    """One encoder layer with a residual connection around each sub-layer and a layer norm.

    Post-LN (``norm_first=False``, the paper and the post): Sub-layer -> "Add & Normalize",
    the residual entering the Add & Normalize box. Pre-LN: "LayerNorm" -> Sub-layer -> "Add",
    the residual skipping both.

    Parameters
    ----------
    sublayers : sequence of str
        The layer's sub-layers in order (e.g. ``plan.encoder[0]`` of
        :func:`illustrated.explain.norms.describe_stack`).
    norm_first : bool, default False
        Where the norm sits.
    words : sequence of str, default ("Thinking", "Machines")
        The input words at the bottom; the feed-forward network is drawn once per word.
    name : str, default "ENCODER #1"
        The layer's label.
    title : str, optional
        Title at the top.
    fig : Figure, optional
        A figure to clear and redraw into.

    Returns
    -------
    Figure
        One axes; boxes are patches with gids "sublayer", "add-norm" (post-LN) or "norm" and
        "add" (pre-LN); residual paths are lines with gid "residual".

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``sublayers`` or ``words`` is empty.

    References
    ----------
    Post "The Residuals" (first figure); paper §3.1; Xiong et al. 2020 (pre-LN).
    """
    sublayers = [str(s) for s in sublayers]
    if not sublayers:
        raise ValueError("sublayers: expected at least one sub-layer, got none")
    words = _check_words("words", words)
    height = _layer_height(sublayers, norm_first)
    w = max(2.8, 1.5 * len(words))
    fig, ax = _canvas(fig, (w + 2.6, 0.95 * (height + 2.2)))
    x, y = 1.2, 1.1
    _inputs(ax, x, w, 0.35, words, "x", COLORS["input"])
    _up(ax, x + w / 2, 0.85, y)
    where = _draw_layer(ax, x, y, w, sublayers, norm_first, name=name,
                        frame_color=COLORS["encoder"], n_ffn=len(words))
    ax.text(x + w / 2, where["top"] + 0.35, "to the next layer", ha="center", va="center",
            fontsize=9, color=_INK)
    ax.set_xlim(0, w + 2.6)
    ax.set_ylim(0, where["top"] + 0.5 + (0.5 if title else 0))
    if title:
        ax.text((w + 2.6) / 2, where["top"] + 0.8, title, ha="center", va="center",
                fontsize=11, fontweight="bold", color=_INK, gid="title")
    return fig


def plot_add_norm_stack(encoder: Sequence[Sequence[str]], decoder: Sequence[Sequence[str]], *,
                        norm_first: bool = False, encoder_final_norm: bool = False,
                        decoder_final_norm: bool = False,
                        source_words: Sequence[str] = ("Thinking", "Machines"),
                        target_words: Sequence[str] = ("<bos>", "I"), title: str = "",
                        fig: Figure | None = None) -> Figure:
    """The encoder stack and the decoder stack with every residual connection and layer norm.

    Parameters
    ----------
    encoder, decoder : sequence of sequences of str
        Sub-layers of each layer, bottom to top (``plan.encoder`` / ``plan.decoder`` of
        :func:`illustrated.explain.norms.describe_stack`).
    norm_first : bool, default False
        Post-LN (False) or pre-LN (True).
    encoder_final_norm, decoder_final_norm : bool
        Draw the last LayerNorm that closes a pre-LN stack.
    source_words, target_words : sequence of str
        Inputs under the encoder and the decoder (the decoder's are its previous outputs).
    title : str, optional
        Title at the top.
    fig : Figure, optional
        A figure to clear and redraw into.

    Returns
    -------
    Figure
        One axes with one "layer" frame per layer, one "sublayer" box per sub-layer, one
        residual per sub-layer, one "cross" arrow per decoder layer (from the top encoder),
        "final-norm" boxes when asked, and "Linear" and "Softmax" boxes on top of the decoder.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If a stack is empty or has an empty layer, or if the numbers of layers differ.

    References
    ----------
    Post "The Residuals" (two encoders and two decoders); paper §3.1, Figure 1.
    """
    encoder = [[str(s) for s in layer] for layer in encoder]
    decoder = [[str(s) for s in layer] for layer in decoder]
    for name, stack in (("encoder", encoder), ("decoder", decoder)):
        if not stack or any(not layer for layer in stack):
            raise ValueError(f"{name}: expected at least one layer, each with sub-layers, "
                             f"got {stack!r}")
    if len(encoder) != len(decoder):
        raise ValueError(f"decoder: expected {len(encoder)} layers like the encoder, "
                         f"got {len(decoder)}")
    source_words = _check_words("source_words", source_words)
    target_words = _check_words("target_words", target_words)
    w = 3.0
    enc_x, dec_x = 1.1, 6.0
    base = 1.1
    enc_h = sum(_layer_height(layer, norm_first) + 0.4 for layer in encoder)
    dec_h = sum(_layer_height(layer, norm_first) + 0.4 for layer in decoder)
    extra = (_NORM_H + _GAP) if (encoder_final_norm or decoder_final_norm) else 0.0
    top = base + max(enc_h, dec_h) + extra + 2 * (_NORM_H + _GAP) + 0.6
    fig, ax = _canvas(fig, (MAX_FIGURE_WIDTH_IN, 0.62 * top + 0.6))  # 10.5 units wide
    # Encoder side.
    _inputs(ax, enc_x, w, 0.35, source_words, "x", COLORS["input"])
    _up(ax, enc_x + w / 2, 0.85, base)
    y = base
    for i, layer in enumerate(encoder):
        where = _draw_layer(ax, enc_x, y, w, layer, norm_first, name=f"ENCODER #{i + 1}",
                            frame_color=COLORS["encoder"], side="left")
        y = where["top"] + 0.4
        if i < len(encoder) - 1:
            _up(ax, enc_x + w / 2, where["top"] + 0.1, y)
    if encoder_final_norm:
        _box(ax, enc_x, y, w, _NORM_H, "LayerNorm", COLORS["norm"], "final-norm")
        y += _NORM_H
    memory_y = y
    # Decoder side.
    _inputs(ax, dec_x, w, 0.35, target_words, "y", COLORS["decoder"])
    _up(ax, dec_x + w / 2, 0.85, base)
    y = base
    crosses = []
    for i, layer in enumerate(decoder):
        where = _draw_layer(ax, dec_x, y, w, layer, norm_first, name=f"DECODER #{i + 1}",
                            frame_color=COLORS["decoder"], side="right")
        if "cross" in where:
            crosses.append(where["cross"])
        y = where["top"] + 0.4
        if i < len(decoder) - 1:
            _up(ax, dec_x + w / 2, where["top"] + 0.1, y)
    if decoder_final_norm:
        _box(ax, dec_x, y, w, _NORM_H, "LayerNorm", COLORS["norm"], "final-norm")
        y += _NORM_H + _GAP
    _up(ax, dec_x + w / 2, y - _GAP + 0.05 if decoder_final_norm else y - 0.3, y)
    _box(ax, dec_x, y, w, _NORM_H, "Linear", COLORS["output"], "linear")
    _up(ax, dec_x + w / 2, y + _NORM_H, y + _NORM_H + _GAP)
    y += _NORM_H + _GAP
    _box(ax, dec_x, y, w, _NORM_H, "Softmax", COLORS["output"], "softmax")
    # The top encoder's output feeds the encoder-decoder attention of every decoder layer.
    x_bus = (enc_x + w + dec_x) / 2
    ax.add_line(Line2D([enc_x + w / 2, enc_x + w / 2, x_bus], [memory_y, memory_y + 0.35,
                                                               memory_y + 0.35], color=_INK,
                       linewidth=1.2, gid="memory"))
    lowest = min(crosses) if crosses else memory_y + 0.35
    ax.add_line(Line2D([x_bus, x_bus], [memory_y + 0.35, lowest], color=_INK, linewidth=1.2,
                       gid="memory"))
    ax.text(x_bus - 0.1, memory_y + 0.5, "K, V", ha="right", va="bottom", fontsize=9,
            color=_INK)
    for y_cross in crosses:
        ax.add_patch(FancyArrowPatch((x_bus, y_cross), (dec_x, y_cross), arrowstyle="-|>",
                                     mutation_scale=10, color=_INK, linewidth=1.2, gid="cross",
                                     zorder=2))
    ax.set_xlim(0, 10.5)
    ax.set_ylim(0, top)
    if title:
        ax.text(5.25, top - 0.25, title, ha="center", va="center", fontsize=11,
                fontweight="bold", color=_INK, gid="title")
    return fig


def plot_add_norm_vectors(x: object, z: object, summed: object, output: object,
                          words: Sequence[str], *, title: str = "") -> Figure:
    """X (green), Z, X + Z and LayerNorm(X + Z) as strips of cells, one column per word.

    Parameters
    ----------
    x, z, summed, output : array_like
        The layer's input, self-attention's output, their sum and the layer norm of the sum.
    words : sequence of str
        The words.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        As :func:`illustrated.plots.positional.plot_vector_rows` with four rows labelled
        "X", "Z", "X + Z", "LayerNorm(X + Z)" and the symbols "+", "=", "->".

    Shapes
    ------
    every array (seq, d_model).

    Raises
    ------
    ValueError
        As :func:`illustrated.plots.positional.plot_vector_rows`.

    References
    ----------
    Post "The Residuals" (second figure); paper §3.1.
    """
    rows = {"X": x, "Z": z, "X + Z": summed, "LayerNorm(X + Z)": output}
    return plot_vector_rows(rows, words, title=title, symbols=["+", "=", "→"])


def plot_layer_norm_bars(before: object, after: object, *, mean: float, std: float,
                         label: str = "", title: str = "") -> Figure:
    """One vector as bars before layer norm (with its mean and ± one std) and after it.

    Parameters
    ----------
    before : array_like
        The vector entering layer norm (e.g. one row of X + Z).
    after : array_like
        The normalized vector.
    mean, std : float
        Mean and standard deviation of ``before`` (computed elsewhere), drawn as lines.
    label : str, optional
        The word, for the titles.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        Two axes with one bar container each; ``axes[0]`` also three horizontal lines
        (mean, mean ± std), ``axes[1]`` lines at 0 and ± 1.

    Shapes
    ------
    ``before``, ``after`` (d_model,).

    Raises
    ------
    ValueError
        If the vectors differ in length or are empty.

    References
    ----------
    Post "The Residuals"; paper §3.1; Ba et al. 2016, "Layer Normalization".
    """
    before = np.asarray(before, dtype=np.float64).ravel()
    after = np.asarray(after, dtype=np.float64).ravel()
    if before.size == 0 or before.shape != after.shape:
        raise ValueError(f"after: expected the shape of before {before.shape} (non-empty), "
                         f"got {after.shape}")
    d = before.size
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3), sharex=True, constrained_layout=True)
    name = f" ('{label}')" if label else ""
    axes[0].bar(np.arange(d), before, color=COLORS["z"])
    for value, style in ((mean, "-"), (mean + std, "--"), (mean - std, "--")):
        axes[0].axhline(value, color=_INK, linestyle=style, linewidth=1)
    axes[0].set(title=f"before{name}: mean {mean:.3f}, std {std:.3f}", xlabel="dimension",
                ylabel="value")
    axes[1].bar(np.arange(d), after, color=COLORS["norm"], edgecolor=_INK, linewidth=0.4)
    for value, style in ((0.0, "-"), (1.0, "--"), (-1.0, "--")):
        axes[1].axhline(value, color=_INK, linestyle=style, linewidth=1)
    axes[1].set(title=f"after layer norm{name}: (x - mean) / std", xlabel="dimension")
    if title:
        fig.suptitle(title)
    return fig


def plot_gradient_norms(norms: Mapping[str, Mapping[str, object]], *,
                        ylabel: str = "gradient norm", title: str = "") -> Figure:
    """Bars of a gradient norm per layer, one group per layer, one colour per norm placement.

    Parameters
    ----------
    norms : {panel title: {run label: array (n_layers,)}}
        E.g. ``{"encoder": grads.encoder, "decoder": grads.decoder}``.
    ylabel : str
        Y label.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        One axes per panel, each with one bar container per run.

    Shapes
    ------
    every array (n_layers,), one length per panel.

    Raises
    ------
    ValueError
        If ``norms`` or a panel is empty, or a panel's arrays differ in length.

    References
    ----------
    Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (gradients at
    initialization).
    """
    if not norms:
        raise ValueError("norms: expected at least one panel, got none")
    fig, axes = plt.subplots(1, len(norms), figsize=(min(8.0, 4.0 * len(norms)), 3.1),
                             squeeze=False,
                             sharey=True, constrained_layout=True)
    palette = [COLORS["z"], COLORS["value"], COLORS["key"], COLORS["query"]]
    for ax, (panel, runs) in zip(axes[0], norms.items()):
        if not runs:
            raise ValueError(f"norms[{panel!r}]: expected at least one run, got none")
        arrays = {label: np.asarray(v, dtype=np.float64).ravel() for label, v in runs.items()}
        lengths = {a.size for a in arrays.values()}
        if len(lengths) != 1:
            raise ValueError(f"norms[{panel!r}]: expected arrays of one length, "
                             f"got {sorted(lengths)}")
        n = lengths.pop()
        width = 0.8 / len(arrays)
        for k, (label, values) in enumerate(arrays.items()):
            ax.bar(np.arange(n) + (k - (len(arrays) - 1) / 2) * width, values, width,
                   label=label, color=palette[k % len(palette)])
        ax.set_xticks(np.arange(n), [str(i + 1) for i in range(n)])
        ax.set(title=panel, xlabel="layer (bottom to top)")
        ax.legend()
    axes[0, 0].set_ylabel(ylabel)
    if title:
        fig.suptitle(title)
    return fig


def plot_training_race(losses: Mapping[str, Sequence[float]],
                       snapshots: Mapping[str, Sequence[tuple[int, str]]], frame: int = -1, *,
                       sample: str = "", title: str = "") -> Figure:
    """Loss curves of several runs up to a snapshot step, with each run's output at that step.

    Parameters
    ----------
    losses : {run label: losses per step}
    snapshots : {run label: [(step, output text), ...]}
        The same steps for every run.
    frame : int, default -1
        Which snapshot to show (negative counts from the end).
    sample : str, optional
        The source sentence, written above the outputs.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        ``axes[0]`` one line per run and a vertical line at the step; ``axes[1]`` text
        only (the outputs). Move it with :func:`update_training_race`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If the runs differ between ``losses`` and ``snapshots`` or have no snapshots.

    References
    ----------
    Post "The Residuals"; Xiong et al. 2020.
    """
    if not losses or set(losses) != set(snapshots):
        raise ValueError(f"snapshots: expected the runs of losses {sorted(losses)}, "
                         f"got {sorted(snapshots)}")
    if any(not s for s in snapshots.values()):
        raise ValueError("snapshots: expected at least one snapshot per run")
    fig, (ax_loss, ax_text) = plt.subplots(2, 1, figsize=(7, 4.4), dpi=72,
                                           gridspec_kw={"height_ratios": [2.2, 1]})
    fig.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.04, hspace=0.35)
    for label, values in losses.items():
        ax_loss.plot(np.arange(1, len(values) + 1), values, label=label)
    ax_loss.set(xlabel="step", ylabel="loss (nats per token)")
    ax_loss.legend(loc="upper right")
    ax_loss.axvline(1, color=_INK, linewidth=1)
    ax_text.set_axis_off()
    ax_text.text(0.0, 1.0, f"source: {sample}" if sample else "", ha="left", va="top",
                 fontsize=10, color=_INK, transform=ax_text.transAxes)
    for k, label in enumerate(losses):
        ax_text.text(0.0, 0.68 - 0.3 * k, "", ha="left", va="top", fontsize=10,
                     family="monospace", color=_INK, transform=ax_text.transAxes, gid=label)
    if title:
        fig.suptitle(title)
    update_training_race(fig, snapshots, frame)
    return fig


def update_training_race(fig: Figure, snapshots: Mapping[str, Sequence[tuple[int, str]]],
                         frame: int) -> None:
    """Move a figure of :func:`plot_training_race` to another snapshot (line and outputs).

    Parameters
    ----------
    fig : Figure from :func:`plot_training_race`.   snapshots : the same snapshots.
    frame : int, snapshot index (negative counts from the end).

    Returns
    -------
    None; the figure is changed in place.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``frame`` is out of range.

    References
    ----------
    Post "The Residuals".
    """
    n = min(len(s) for s in snapshots.values())
    if not -n <= frame < n:
        raise ValueError(f"frame: expected an index in [{-n}, {n}), got {frame!r}")
    ax_loss, ax_text = fig.axes[0], fig.axes[1]
    step = next(iter(snapshots.values()))[frame][0]
    ax_loss.lines[-1].set_xdata([step, step])
    ax_loss.set_title(f"step {step}")
    texts = {t.get_gid(): t for t in ax_text.texts if t.get_gid()}
    width = max(len(label) for label in snapshots)
    for label, runs in snapshots.items():
        texts[label].set_text(f"{label:<{width}} output: {runs[frame][1]}")


def training_player(losses: Mapping[str, Sequence[float]],
                    snapshots: Mapping[str, Sequence[tuple[int, str]]], *, sample: str = "",
                    title: str = "", max_frames: int = 20) -> str:
    """A kernel-free slider over training snapshots: the curves so far and each run's output.

    Parameters
    ----------
    losses, snapshots, sample, title
        As :func:`plot_training_race`.
    max_frames : int, default 20
        At most this many frames (evenly spaced snapshots, the last one included).

    Returns
    -------
    str
        HTML of the player (show with ``IPython.display.HTML``).

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        As :func:`plot_training_race`, or ``max_frames`` < 1.

    References
    ----------
    Post "The Residuals"; Xiong et al. 2020.
    """
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise ValueError(f"max_frames: expected a positive integer, got {max_frames!r}")
    n = min((len(s) for s in snapshots.values()), default=0)
    keep = sorted({round(i) for i in np.linspace(0, n - 1, min(n, max_frames))}) if n else []
    chosen = {label: [runs[i] for i in keep] for label, runs in snapshots.items()}
    fig = plot_training_race(losses, chosen, 0, sample=sample, title=title)
    return frames_player(fig, partial(update_training_race, fig, chosen), len(keep))
