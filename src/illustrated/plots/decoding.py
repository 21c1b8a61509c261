"""The decoder side drawn from real numbers: decoding steps, the causal mask, the final softmax.

Arrays and labels in, Figure out; the numbers come from :mod:`illustrated.explain.decoding`.

References: post "The Decoder Side" and "The Final Linear and Softmax Layer"; paper §3.1,
§3.2.3, §3.4.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from .primitives import heatmap
from .style import CMAP, COLORS, DIVERGING_CMAP, MAX_FIGURE_WIDTH_IN

__all__ = ["plot_decoding_step", "plot_decoding_grid", "plot_causal_mask", "plot_leak_test",
           "plot_output_softmax"]

_MUTED = "#cfd8dc"


def _words(name: str, words: Sequence[str]) -> list[str]:
    if isinstance(words, str) or not len(words) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"{name}: expected a non-empty list of words, got {words!r}")
    return list(words)


def _matrix(name: str, values: object, shape: tuple[int | None, int | None]) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != len(shape) or any(s is not None and d != s for d, s in zip(a.shape, shape)):
        want = ", ".join("n" if s is None else str(s) for s in shape)
        raise ValueError(f"{name}: expected shape ({want}), got {a.shape}")
    return a


def _heatmap(ax, values: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str],
             *, vmax: float = 1.0, col_rotation: float = 0.0) -> None:
    """An annotated heatmap of weights; NaN cells are left blank (rows not reached yet)."""
    heatmap(ax, values, row_labels=row_labels, col_labels=col_labels, cmap=CMAP, vmin=0.0,
            vmax=vmax, annotate=True, col_rotation=col_rotation)


def _prob_bars(ax, tokens: Sequence[str], probs: np.ndarray, chosen: str) -> None:
    """Horizontal bars, the most probable on top, the chosen word in the output colour."""
    y = np.arange(len(tokens))
    colors = [COLORS["z"] if t == chosen else _MUTED for t in tokens]
    ax.barh(y, probs, color=colors)
    for yi, p in zip(y, probs):
        ax.text(min(p, 1.0) + 0.02, yi, f"{p:.2f}", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(tokens, fontsize=9)
    ax.set_xlim(0, 1.25)  # room for the labels right of a bar of 1
    ax.set_xticks([0, 0.5, 1])
    ax.spines["bottom"].set_bounds(0, 1)  # a probability axis ends at 1
    ax.invert_yaxis()
    ax.spines[["top", "right"]].set_visible(False)


def plot_decoding_step(source_tokens: Sequence[str], input_tokens: Sequence[str],
                       cross_attention: object, top_tokens: Sequence[str], top_probs: object,
                       chosen_token: str, *, step: int, n_rows: int | None = None,
                       attention_title: str = "encoder-decoder attention",
                       fig: Figure | None = None) -> Figure:
    """One decoding step: the decoder's input, where it looks in the source, and the word it outputs.

    Three axes, left to right: the decoder input (``<bos>`` and the words so far) as boxes
    with the chosen word after them; the encoder-decoder attention of every decoder input
    position over the source words (heatmap, the last row predicts this step's word); the most
    probable next words as bars, the chosen one coloured.

    Parameters
    ----------
    source_tokens : the source words.   input_tokens : the decoder input at this step.
    cross_attention : array (len(input_tokens), len(source_tokens)).
    top_tokens, top_probs : the most probable words and their probabilities, best first.
    chosen_token : the word output at this step.   step : 1-based step number.
    n_rows : rows of the heatmap (>= len(input_tokens)); extra rows stay blank so that the
        frames of a player keep one layout.
    attention_title : title of the heatmap (say which layer and heads).
    fig : draw into this figure (cleared first) instead of a new one; for players.

    Returns
    -------
    Figure with three axes: ``axes[0]`` the input boxes (texts: the input words, then the
    chosen word), ``axes[1]`` the heatmap (``images[0]`` holds the weights, NaN rows masked),
    ``axes[2]`` the bars (one patch per top word).

    Shapes
    ------
    cross_attention (t, src_len) with t = len(input_tokens); top_probs (k,) with
    k = len(top_tokens).

    Raises
    ------
    ValueError
        For inconsistent shapes, ``n_rows`` smaller than the input, or empty word lists.

    References
    ----------
    Post "The Decoder Side" (the decoding animations); paper §3.2.3.
    """
    source_tokens = _words("source_tokens", source_tokens)
    input_tokens = _words("input_tokens", input_tokens)
    top_tokens = _words("top_tokens", top_tokens)
    t = len(input_tokens)
    weights = _matrix("cross_attention", cross_attention, (t, len(source_tokens)))
    probs = _matrix("top_probs", top_probs, (len(top_tokens),))
    n_rows = t if n_rows is None else n_rows
    if n_rows < t:
        raise ValueError(f"n_rows: expected at least the {t} input positions, got {n_rows}")
    padded = np.full((n_rows, len(source_tokens)), np.nan)  # (n_rows, src_len)
    padded[:t] = weights
    labels = [f"{i + 1}: {w}" for i, w in enumerate(input_tokens)] + [""] * (n_rows - t)
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(MAX_FIGURE_WIDTH_IN, 0.9 + 0.42 * max(n_rows, len(top_tokens), 4))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.0, 1.3, 1.2]})
    ax = axes[0]
    for i in range(n_rows):
        y = n_rows - 1 - i
        word = input_tokens[i] if i < t else ""
        ax.add_patch(FancyBboxPatch((0.05, y + 0.12), 0.9, 0.76, boxstyle="round,pad=0.02",
                                    facecolor=COLORS["decoder"] if word else "#f5f5f5",
                                    edgecolor="white"))
        if word:
            ax.text(0.5, y + 0.5, word, ha="center", va="center", fontsize=10)
    y_last = n_rows - t
    ax.annotate("", xy=(1.45, y_last + 0.5), xytext=(0.98, y_last + 0.5),
                arrowprops={"arrowstyle": "->", "color": COLORS["text"]})
    ax.add_patch(FancyBboxPatch((1.5, y_last + 0.12), 0.9, 0.76, boxstyle="round,pad=0.02",
                                facecolor=COLORS["z"], edgecolor="white"))
    ax.text(1.95, y_last + 0.5, chosen_token, ha="center", va="center", fontsize=10,
            fontweight="bold")
    ax.set_xlim(0, 2.5)
    ax.set_ylim(0, n_rows)
    ax.axis("off")
    ax.set_title("decoder input → output", fontsize=10)
    _heatmap(axes[1], padded, labels, source_tokens)
    axes[1].set_xlabel("source word (keys and values from the encoder)", fontsize=9)
    axes[1].set_title(attention_title, fontsize=10)
    _prob_bars(axes[2], top_tokens, probs, chosen_token)
    axes[2].set_title("probability of the next word", fontsize=10)
    fig.suptitle(f"step {step}: output '{chosen_token}'", fontsize=12)
    return fig


def plot_decoding_grid(source_tokens: Sequence[str], input_tokens: Sequence[Sequence[str]],
                       attention_rows: Sequence[object], top_tokens: Sequence[Sequence[str]],
                       top_probs: Sequence[object], chosen_tokens: Sequence[str], *,
                       attention_title: str = "encoder-decoder attention") -> Figure:
    """Every decoding step to ``<eos>`` at once: each output is fed back in as the next input.

    One column per step. Top row: the encoder-decoder attention of the position that predicts
    the step's word, as bars over the source words. Bottom row: the most probable words, the
    chosen one coloured. Column titles give the decoder input.

    Parameters
    ----------
    source_tokens : the source words.
    input_tokens : per step, the decoder input words.
    attention_rows : per step, an array (src_len,) of attention weights.
    top_tokens, top_probs : per step, the most probable words and their probabilities.
    chosen_tokens : per step, the output word.
    attention_title : label of the top row (say which layer and heads).

    Returns
    -------
    Figure with ``2 * n_steps`` axes: row 0 (axes 0..n-1) attention bars (src_len patches each),
    row 1 (axes n..2n-1) probability bars.

    Shapes
    ------
    attention_rows[i] (src_len,); top_probs[i] (k_i,) with k_i = len(top_tokens[i]).

    Raises
    ------
    ValueError
        If the per-step lists differ in length or an array has the wrong shape.

    References
    ----------
    Post "The Decoder Side" (later steps feed the outputs back in); paper §3.1.
    """
    source_tokens = _words("source_tokens", source_tokens)
    n = len(chosen_tokens)
    for name, seq in (("input_tokens", input_tokens), ("attention_rows", attention_rows),
                      ("top_tokens", top_tokens), ("top_probs", top_probs)):
        if len(seq) != n or n == 0:
            raise ValueError(f"{name}: expected {n} entries, one per step (at least one), "
                             f"got {len(seq)}")
    fig, axes = plt.subplots(2, n, figsize=(min(2.3, 7.2 / n) * n + 0.6, 5.0), squeeze=False,
                             constrained_layout=True)
    x = np.arange(len(source_tokens))
    for s in range(n):
        att = _matrix(f"attention_rows[{s}]", attention_rows[s], (len(source_tokens),))
        words = _words(f"top_tokens[{s}]", top_tokens[s])
        probs = _matrix(f"top_probs[{s}]", top_probs[s], (len(words),))
        ax = axes[0, s]
        ax.bar(x, att, color=COLORS["key"])
        ax.set_xticks(x)
        ax.set_xticklabels(source_tokens, rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_title(f"step {s + 1}\n" + " ".join(input_tokens[s]), fontsize=9)
        if s == 0:
            ax.set_ylabel(attention_title, fontsize=8)
        _prob_bars(axes[1, s], words, probs, chosen_tokens[s])
        axes[1, s].set_xlabel(f"→ {chosen_tokens[s]}", fontsize=10, fontweight="bold")
    return fig


def plot_causal_mask(tokens: Sequence[str], mask: object, weights: object | None = None, *,
                     weights_title: str = "masked self-attention weights") -> Figure:
    """Masking future positions: the mask as a matrix, and the attention weights it leaves.

    Left: the mask (row = the position that attends, column = the position attended to); an
    allowed cell adds 0 to the score, a masked one ``-inf``. Right (when ``weights`` is given):
    the decoder self-attention weights of a real model, zero above the diagonal.

    Parameters
    ----------
    tokens : the decoder input words.   mask : bool array (n, n), True = may attend.
    weights : optional array (n, n) of attention weights.   weights_title : its title.

    Returns
    -------
    Figure with one or two axes; ``axes[0].images[0]`` holds the mask as 0/1, its texts are
    "0" or "−∞" per cell.

    Shapes
    ------
    mask, weights (n, n) with n = len(tokens).

    Raises
    ------
    ValueError
        If the shapes do not match the tokens.

    References
    ----------
    Post "The Decoder Side" ("masking future positions (setting them to -inf)"); paper §3.2.3.
    """
    tokens = _words("tokens", tokens)
    n = len(tokens)
    allowed = _matrix("mask", mask, (n, n))
    panels = 1 if weights is None else 2
    fig, axes = plt.subplots(1, panels, figsize=(0.6 + 3.5 * panels, 3.4), squeeze=False,
                             constrained_layout=True)
    ax = axes[0, 0]
    heatmap(ax, allowed, row_labels=tokens, col_labels=tokens, cmap="Greys_r", vmin=-0.6,
            vmax=1.0, annotate=True, fmt=lambda v: "0" if v else "−∞", fontsize=9,
            col_rotation=45, aspect="equal")
    ax.set_xlabel("key position (attended to)")
    ax.set_ylabel("query position")
    ax.set_title("causal mask added to the scores", fontsize=10)
    if weights is not None:
        w = _matrix("weights", weights, (n, n))
        _heatmap(axes[0, 1], w, tokens, tokens, col_rotation=45)
        axes[0, 1].set_xlabel("key position (attended to)")
        axes[0, 1].set_title(weights_title, fontsize=10)
    return fig


def plot_leak_test(position_labels: Sequence[str], change_masked: object,
                   change_unmasked: object, *, position: int, ymax: float | None = None,
                   fig: Figure | None = None) -> Figure:
    """Change one future word: with the mask earlier outputs do not move, without it they do.

    Parameters
    ----------
    position_labels : one label per decoder position.
    change_masked, change_unmasked : per position, the largest change of the output
        probabilities with and without the causal mask.
    position : the changed position (0-based), shaded.
    ymax : top of the y axis (default: 1.2 times the largest change); fix it for players.
    fig : draw into this figure (cleared first) instead of a new one; for players.

    Returns
    -------
    Figure with one axes: two groups of bars (``containers[0]`` with the mask,
    ``containers[1]`` without), a value above each bar.

    Shapes
    ------
    change_masked, change_unmasked (n,) with n = len(position_labels).

    Raises
    ------
    ValueError
        If the shapes differ or ``position`` is outside [0, n).

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3 (preserving the auto-regressive property).
    """
    labels = _words("position_labels", position_labels)
    n = len(labels)
    masked = _matrix("change_masked", change_masked, (n,))
    unmasked = _matrix("change_unmasked", change_unmasked, (n,))
    if not isinstance(position, int) or not 0 <= position < n:
        raise ValueError(f"position: expected an int in [0, {n}), got {position!r}")
    if fig is None:
        fig = plt.figure(figsize=(1.2 + 1.1 * n, 3.4), constrained_layout=True)
    else:
        fig.clear()
    ax = fig.subplots()
    x = np.arange(n)
    ax.axvspan(position - 0.5, n - 0.5, color="#fff3e0", zorder=0)
    for offset, values, color, label in ((-0.2, masked, COLORS["value"], "with the causal mask"),
                                         (0.2, unmasked, COLORS["z"], "without the mask")):
        ax.bar(x + offset, values, width=0.38, color=color, label=label)
        for xi, v in zip(x, values):
            ax.text(xi + offset, v + 0.01, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    if ymax is None:
        ymax = 1.2 * max(float(masked.max()), float(unmasked.max()), 0.1)
    ax.set_ylim(0, ymax)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=9)
    ax.set_xlabel("decoder position (input word)")
    ax.set_ylabel("largest change of a probability")
    ax.set_title(f"changing the input word at position {position}: positions before it "
                 "(white) must not move", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def plot_output_softmax(decoder_output: object, tokens: Sequence[str], logits: object,
                        probs: object, chosen_token: str, *, vocab_size: int | None = None,
                        chosen_index: int | None = None) -> Figure:
    """From the decoder stack's vector of floats to a word: Linear → logits → softmax → argmax.

    Four stacked axes, top to bottom: the decoder output vector as a strip of cells; the logits
    of the listed words; their probabilities; the chosen word.

    Parameters
    ----------
    decoder_output : array (d_model,).
    tokens : the words shown (e.g. the most probable ones).
    logits, probs : their logits and probabilities.
    chosen_token : the argmax word (coloured where it appears in ``tokens``).
    vocab_size : size of the whole vocabulary, for the titles (default len(tokens)).
    chosen_index : the chosen word's cell in the whole vocabulary, for the last line.

    Returns
    -------
    Figure with four axes: ``axes[0].images[0]`` the vector (1, d_model); ``axes[1]`` and
    ``axes[2]`` one bar per word (heights logits and probs, a value text per bar); ``axes[3]``
    the chosen word as text.

    Shapes
    ------
    decoder_output (d_model,); tokens, logits, probs (k,).

    Raises
    ------
    ValueError
        If ``logits``/``probs`` do not have one value per word or the vector is not 1-D.

    References
    ----------
    Post "The Final Linear and Softmax Layer"; paper §3.4.
    """
    tokens = _words("tokens", tokens)
    k = len(tokens)
    x_vec = _matrix("decoder_output", decoder_output, (None,))
    scores = _matrix("logits", logits, (k,))
    p = _matrix("probs", probs, (k,))
    vocab_size = k if vocab_size is None else vocab_size
    fig, axes = plt.subplots(4, 1, figsize=(max(7.0, 0.75 * k + 1.5), 7.4),
                             gridspec_kw={"height_ratios": [0.55, 1.6, 1.6, 0.45]},
                             constrained_layout=True)
    limit = float(np.abs(x_vec).max()) or 1.0
    strip = x_vec[None, :]  # (1, d_model)
    heatmap(axes[0], strip, row_labels=(), cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit)
    axes[0].set_xlabel("dimension", fontsize=8)
    axes[0].set_title(f"decoder stack output: a vector of {x_vec.size} floats", fontsize=10)
    colors = [COLORS["z"] if t == chosen_token else _MUTED for t in tokens]
    xs = np.arange(k)
    for ax, values, title, fmt in (
            (axes[1], scores, f"Linear → logits (one score per word; {vocab_size} words)", "{:.2f}"),
            (axes[2], p, "Softmax → probabilities (positive, summing to 1 over the vocabulary)",
             "{:.3f}")):
        ax.bar(xs, values, color=colors)
        span = float(values.max() - min(values.min(), 0.0)) or 1.0
        for xi, v in zip(xs, values):
            ax.text(xi, v + (0.03 * span if v >= 0 else -0.03 * span), fmt.format(v),
                    ha="center", va="bottom" if v >= 0 else "top", fontsize=8)
        ax.axhline(0, color=COLORS["text"], linewidth=0.6)
        ax.set_xticks(xs)
        ax.set_xticklabels(tokens, fontsize=9)
        ax.set_ylim(min(values.min(), 0.0) - 0.15 * span, values.max() + 0.2 * span)
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_title(title, fontsize=10)
    where = "" if chosen_index is None else f" (cell {chosen_index})"
    axes[3].text(0.5, 0.5, f"argmax{where} → output word: '{chosen_token}'", ha="center",
                 va="center", fontsize=13, fontweight="bold",
                 bbox={"facecolor": COLORS["z"], "edgecolor": "none", "alpha": 0.8})
    axes[3].axis("off")
    return fig
