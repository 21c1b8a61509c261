"""Chapter 03, self-attention: the encoder head that resolves "it" (the post's figure), the six
steps on the post's numbers, the matrix form, and why the scores are divided by sqrt(d_k)."""
from __future__ import annotations

import math
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np

import illustrated as il
from illustrated.data.coreference_grammar import referent

from . import kit

__all__ = ["POST", "ItHead", "it_attention", "referent_phrase", "it_head", "draw_it", "STEPS",
           "draw_steps", "draw_steps_so_far", "draw_projections", "draw_formula", "Saturation",
           "saturation", "draw_saturation"]

HEAD_COLORS = kit.HEAD_COLORS
_INK, _MUTED = kit.COLORS["text"], kit.COLORS["muted"]
#: The post's sentence; "tired" makes "it" the animal, "wide" the street.
POST = "the animal didn't cross the street because it was too {}"


class ItHead(NamedTuple):
    """The encoder head that resolves "it": its layer and head (from 0), and the weight "it"
    puts on "the animal" (... too tired) and on "the street" (... too wide)."""

    layer: int
    head: int
    on_animal: float
    on_street: float


def it_attention(model, src_vocab, tgt_vocab, sentence: str, layer: int):
    """(source tokens, every head's self-attention weights from "it" in encoder ``layer``,
    (n_heads, src_len))."""
    t = il.trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    return t.source_tokens, t.encoder_layers[layer].self_attn.weights[:, t.source_tokens.index("it")]


def referent_phrase(tokens) -> list[int]:
    """Positions of the noun phrase "it" refers to ("the" and the noun), by the corpus's grammar."""
    _, noun = referent(" ".join(tokens))
    return [noun - 1, noun]


def it_head(model, src_vocab, tgt_vocab) -> ItHead:
    """The encoder head whose smaller weight, on "the animal" (too tired) and on "the street"
    (too wide), is the largest of all heads of all layers."""
    best = None
    for layer in range(model.cfg.n_layers):
        on = [it_attention(model, src_vocab, tgt_vocab, POST.format(a), layer)
              for a in ("tired", "wide")]
        phrase = [w[:, referent_phrase(tokens)].sum(-1) for tokens, w in on]  # (n_heads,) each
        for head in range(model.cfg.n_heads):
            found = ItHead(layer, head, float(phrase[0][head]), float(phrase[1][head]))
            if best is None or min(found[2:]) > min(best[2:]):
                best = found
    return best


def draw_it(rows, layer: int, head: int, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The post's figure: one panel per sentence, lines from "it" to every word for one head of
    encoder ``layer``'s self-attention, as wide as the weight, the weight written by each word
    (the noun phrase "it" refers to in bold); ``rows`` are ``it_attention``'s results."""
    small = kit.narrow(width)
    n = max(len(tokens) for tokens, _ in rows)
    panel_w, panel_h = (width, 0.5 + 0.24 * n) if small else (width / len(rows), 0.6 + 0.27 * n)
    fig = plt.figure(figsize=(width, panel_h * (len(rows) if small else 1)), dpi=kit.DPI)
    start, end = 0.75, panel_w - 1.55  # the lines, in inches from the panel's left
    for k, (tokens, weights) in enumerate(rows):
        box = (0, 1 - (k + 1) / len(rows), 1, 1 / len(rows)) if small else \
            (k / len(rows), 0, 1 / len(rows), 1)
        ax = fig.add_axes(box)
        ax.set_xlim(0, panel_w)
        ax.set_ylim(len(tokens) - 0.4, -1.3)
        ax.axis("off")
        w, phrase = weights[head], referent_phrase(tokens)
        middle = (len(tokens) - 1) / 2
        ax.text(start - 0.08, middle, "it", ha="right", va="center", fontsize=12,
                fontweight="bold", color=_INK)
        for j, (token, weight) in enumerate(zip(tokens, w)):
            bold = "bold" if j in phrase else "normal"
            ax.plot([start, end], [middle, j], color=HEAD_COLORS[head], alpha=min(1.0, 0.15 + weight),
                    lw=0.4 + 5 * weight, solid_capstyle="round")
            ax.text(end + 0.06, j, token, va="center", fontsize=9, color=_INK, fontweight=bold)
            ax.text(panel_w - 0.12, j, f"{weight:.2f}", ha="right", va="center", fontsize=8,
                    color=HEAD_COLORS[head], fontweight=bold)
        ax.text(0.1, -0.95, f"too {tokens[-1]}: encoder layer {layer}, head {head}, "
                f"'{' '.join(tokens[i] for i in phrase)}' {w[phrase].sum():.2f}",
                ha="left", va="center", fontsize=9, color=_MUTED)
    return fig


# The six steps of one query, as the rows of the post's table: (label, step that fills it).
STEPS = (("Input", 1), ("Queries", 1), ("Keys", 1), ("Values", 1), ("Score", 2),
         ("Divide by 8 (√d_k)", 3), ("Softmax", 4), ("Softmax × Value", 5), ("Sum", 6))


def _cells(ax, x, y, values, color):
    width = 0.5 if np.allclose(values, np.round(values)) else 0.75
    for i, value in enumerate(values):
        ax.add_patch(plt.Rectangle((x + i * width, y - 0.3), width, 0.6, facecolor=color,
                                   edgecolor="white", lw=1.5))
        ax.text(x + (i + 0.5) * width, y, kit.format_value(value), ha="center", va="center",
                fontsize=8.5, color=kit.ink_on(color))


def draw_steps(example, step: int = 6, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The post's table of self-attention for the first word, filled up to ``step`` (1-6)."""
    X, W_Q, W_K, W_V = example.X, example.W_Q, example.W_K, example.W_V
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q[0] @ K.T
    weights = il.reference.softmax(scores / 8)
    c = kit.COLORS
    rows = {"Input": (X, c["input"]), "Queries": (Q, c["query"]), "Keys": (K, c["key"]),
            "Values": (V, c["value"]), "Score": (scores, None), "Divide by 8 (√d_k)":
            (scores / 8, None), "Softmax": (weights, c["weights"]),
            "Softmax × Value": (weights[:, None] * V, c["value"]), "Sum": (weights @ V, c["z"])}
    phone = kit.narrow(width)  # the same table, its labels closer to its columns
    columns, span, size = ((2.45, 4.9), 7.2, 9) if phone else ((5.0, 9.0), 12.8, 10)
    fig, ax = kit.canvas((span / 2, 5.0), (0, span), (len(STEPS) - 0.4, -1.2))
    for x, word in zip(columns, il.reference.THINKING_MACHINES_WORDS):
        ax.text(x + 1.0, -0.8, word, ha="center", fontsize=11, fontweight="bold", color=_INK)
    for y, (label, filled_at) in enumerate(STEPS):
        shown = filled_at <= step
        ax.text(0.1, y, label, va="center", fontsize=size, color=_INK if shown else kit.COLORS["faint"])
        if not shown:
            continue
        values, color = rows[label]
        if label == "Sum":
            _cells(ax, columns[0], y, values, color)
        elif label == "Softmax":  # one weight per word, a cell of the weights' colour
            for x, value in zip(columns, values):
                _cells(ax, x + 1.0 - 0.375, y, [value], color)
        elif color is None:  # one number per word
            for k, (x, value) in enumerate(zip(columns, values)):
                text = f"q1 · k{k + 1} = {kit.format_value(value)}" if label == "Score" \
                    else kit.format_value(value)
                ax.text(x + 1.0, y, text, ha="center", va="center", fontsize=size, color=_INK)
        else:
            for x, row in zip(columns, values):
                _cells(ax, x, y, row, color)
    return fig


def draw_steps_so_far(example, step: int, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The post's table cut after the rows that ``step`` fills (its figures 10 to 12 are such
    cuts): draw_steps, without the rows still to come."""
    fig = draw_steps(example, step, width=width)
    ax = fig.axes[0]
    bottom, top = ax.get_ylim()  # y grows downwards: one row per step label
    cut = sum(filled <= step for _, filled in STEPS) - 0.4
    fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() * (cut - top) / (bottom - top))
    ax.set_ylim(cut, top)
    for label in ax.texts:  # the rows still to come: hidden, so that a tight bbox leaves them out
        label.set_visible(label.get_position()[1] < cut)
    return fig


def _matrix(ax, x, y, M, color, label, cell=0.6):
    """Matrix ``M`` with its top-left corner at (x, y), one cell per entry, its name above."""
    M = np.atleast_2d(M)
    for (i, j), value in np.ndenumerate(M):
        ax.add_patch(plt.Rectangle((x + j * cell, y + i * 0.5), cell, 0.5, facecolor=color,
                                   edgecolor="white", lw=1.2))
        ax.text(x + (j + 0.5) * cell, y + (i + 0.5) * 0.5, kit.format_value(value), ha="center",
                va="center", fontsize=8, color=kit.ink_on(color))
    ax.text(x + M.shape[1] * cell / 2, y - 0.25, label, ha="center", fontsize=10, color=_INK)
    return x + M.shape[1] * cell


def _term_width(term, cell) -> float:
    return (cell * np.atleast_2d(term[0]).shape[1] + 0.25 if isinstance(term, tuple)
            else 0.17 * len(term) + 0.3)


def _equation(terms, height=1.6, *, width: float = kit.DESKTOP_WIDTH_IN, stacked: bool = False):
    """Matrices and signs left to right: terms are (matrix, colour, name) or a string; a "\n"
    term starts a new line in a phone's column, and in the desktop's when ``stacked``."""
    if not (kit.narrow(width) or stacked):
        terms = [t for t in terms if not (isinstance(t, str) and t == "\n")]
        total = sum(_term_width(t, 0.6) for t in terms)
        fig, ax = kit.canvas((total * 0.56, height * 0.66), (0, total), (height + 0.1, -0.6))
        x = 0.0
        for term in terms:
            if isinstance(term, str):
                ax.text(x + 0.12, 0.5, term, va="center", fontsize=12, color=_INK)
                x += 0.17 * len(term) + 0.3
            else:
                x = _matrix(ax, x, 0.0, *term) + 0.25
        return fig
    lines, line = [], []  # a phone: one line per group, centred, narrower cells
    for term in terms:
        if isinstance(term, str) and term == "\n":
            lines, line = lines + [line], []
        else:
            line.append(term)
    lines.append(line)
    cell, unit = 0.5, 0.52  # a cell's width in units, inches per unit
    span = max(sum(_term_width(t, _cell(t, cell)) for t in line) for line in lines)
    rows = [max([np.atleast_2d(t[0]).shape[0] for t in line if isinstance(t, tuple)] or [1])
            for line in lines]
    total = sum(0.5 * r + 0.8 for r in rows)
    fig, ax = kit.canvas((min(width, span * unit), total * unit), (0, span), (total - 0.1, -0.6))
    top = 0.0
    for line, r in zip(lines, rows):
        x = (span - sum(_term_width(t, _cell(t, cell)) for t in line)) / 2
        for term in line:
            if isinstance(term, str):
                ax.text(x + 0.12, top + 0.25 * r, term, va="center", fontsize=12, color=_INK)
                x += 0.17 * len(term) + 0.3
            else:
                x = _matrix(ax, x, top, *term, cell=_cell(term, cell)) + 0.25
        top += 0.5 * r + 0.8
    return fig


def _cell(term, cell: float) -> float:
    """A wider cell for a matrix of decimals (0.88) than for one of integers (10)."""
    if not isinstance(term, tuple):
        return cell
    return cell if np.allclose(term[0], np.round(term[0])) else cell + 0.15


def draw_projections(example, *, width: float = kit.DESKTOP_WIDTH_IN):
    """X times W_Q, W_K and W_V gives Q, K and V: every word's query, key, value at once, one
    product per line as the post draws them."""
    c, X = kit.COLORS, example.X
    terms = []
    for name, W, color in (("Q", example.W_Q, c["query"]), ("K", example.W_K, c["key"]),
                           ("V", example.W_V, c["value"])):
        terms += [(X, c["input"], "X"), "×", (W, color, f"$W^{name}$"), "=", (X @ W, color, name),
                  "\n"]
    return _equation(terms[:-1], width=width, stacked=True)


def draw_formula(example, *, width: float = kit.DESKTOP_WIDTH_IN):
    """softmax(Q Kᵀ / 8) V = Z, the weights written out."""
    c, X = kit.COLORS, example.X
    Q, K, V = X @ example.W_Q, X @ example.W_K, X @ example.W_V
    A = il.reference.softmax(Q @ K.T / 8)
    return _equation(["softmax(", (Q, c["query"], "Q"), "×", (K.T, c["key"], "Kᵀ"), "/ 8 ) =",
                      "\n", (A, c["output"], "weights"), "×", (V, c["value"], "V"), "=",
                      (A @ V, c["z"], "Z")], width=width)


class Saturation(NamedTuple):
    """Per d_k: the scores' variance, the mean largest weight and the mean softmax Jacobian
    size, unscaled and scaled by 1/sqrt(d_k)."""

    d_k: np.ndarray
    variance: np.ndarray
    largest: np.ndarray
    largest_scaled: np.ndarray
    gradient: np.ndarray
    gradient_scaled: np.ndarray


def _jacobian_norm(p):
    """Frobenius norm of softmax's Jacobian diag(p) - p pᵀ, per row of ``p``."""
    jac = np.einsum("ni,ij->nij", p, np.eye(p.shape[-1])) - p[:, :, None] * p[:, None, :]
    return np.sqrt((jac ** 2).sum(axis=(1, 2)))


def saturation(d_k_values=tuple(2 ** i for i in range(11)), n_keys=8, n_samples=1000, seed=0):
    """Random standard-normal queries and keys scored for each d_k (paper §3.2.1, footnote 4)."""
    rng, fields = np.random.default_rng(seed), []
    for d_k in d_k_values:
        q = rng.standard_normal((n_samples, 1, d_k))
        k = rng.standard_normal((n_samples, n_keys, d_k))
        scores = (q * k).sum(axis=-1)  # (n_samples, n_keys)
        raw, scaled = il.reference.softmax(scores), il.reference.softmax(scores / math.sqrt(d_k))
        fields.append((scores.var(), raw.max(-1).mean(), scaled.max(-1).mean(),
                       _jacobian_norm(raw).mean(), _jacobian_norm(scaled).mean()))
    return Saturation(np.array(d_k_values), *map(np.array, zip(*fields)))


def draw_saturation(d_k: int, curve: Saturation, n_keys: int = 8, seed: int = 0, *,
                    width: float = kit.DESKTOP_WIDTH_IN):
    """One random query's weights over 8 keys, unscaled and scaled, beside the averages (below
    them in a phone's column)."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d_k), rng.standard_normal((n_keys, d_k))
    phone = kit.narrow(width)
    fig, (bars, lines) = plt.subplots(*((2, 1) if phone else (1, 2)),
                                      figsize=(width, 6.0) if phone else (7.6, 3.6),
                                      dpi=kit.DPI, layout="constrained")
    x = np.arange(n_keys)
    for offset, weights, color, label in (
            (-0.2, il.reference.softmax(k @ q), kit.COLORS["z"], "q·k"),
            (0.2, il.reference.softmax(k @ q / math.sqrt(d_k)), kit.COLORS["value"],
             "q·k / √d_k")):
        bars.bar(x + offset, weights, 0.4, color=color, label=label)
    bars.set(ylim=(0, 1), xticks=x, xlabel="key", ylabel="softmax weight")
    bars.set_title(f"one query, d_k = {d_k}", fontsize=10)
    bars.legend(fontsize=9, frameon=False, loc="upper left")
    for values, color, ls, label in (
            (curve.largest, kit.COLORS["z"], "-", "largest weight, q·k"),
            (curve.largest_scaled, kit.COLORS["value"], "-", "largest weight, scaled"),
            (curve.gradient, kit.COLORS["z"], "--", "gradient size, q·k"),
            (curve.gradient_scaled, kit.COLORS["value"], "--", "gradient size, scaled")):
        lines.plot(curve.d_k, values, color=color, marker="o", ms=3, ls=ls, label=label)
    lines.axvline(d_k, color=_MUTED, lw=1)
    lines.set(xscale="log", ylim=(0, 1), xlabel="d_k")
    lines.set_xticks(curve.d_k[::2], [str(d) for d in curve.d_k[::2]])
    lines.set_title("averages over 1000 queries", fontsize=10)
    # under the plot, where it hides no curve
    lines.legend(fontsize=8, frameon=False, loc="upper center", ncol=2,
                 bbox_to_anchor=(0.5, -0.22 if phone else -0.2))
    for ax in (bars, lines):
        ax.tick_params(labelsize=9)
        ax.xaxis.label.set_size(9)
        ax.yaxis.label.set_size(9)
    return fig
