"""Chapter 04, multi-head attention as the post draws it: X times each head's own W_Q, W_K, W_V,
every head's Z, the heads concatenated and mixed by W_O, the whole sub-layer in one picture, and
the heads of a trained model on "it", for the post's sentence and for one the reader types."""
from __future__ import annotations

from typing import NamedTuple

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import illustrated as il

from . import interactive as ia
from . import kit
from ..reference import AttentionResult

__all__ = ["HEAD_COLORS", "Heads", "heads", "draw_qkv", "draw_z", "draw_concat", "draw_recap",
           "draw_it_heads", "draw_self_attention", "encoder_attention", "self_attention_widget"]

HEAD_COLORS = kit.HEAD_COLORS
_INK = kit.COLORS["text"]


class Heads(NamedTuple):
    """One multi-head attention sub-layer of one sentence, as the post draws it: X, each head's
    W_Q/W_K/W_V (n_heads, d_model, d_k) and biases (n_heads, d_k), W_O (d_model, d_model) and
    b_O, beside the attention's own record (``steps``: Q, K, V, weights, Z of every head, the
    concatenation and the output, as il.trace reads them)."""

    tokens: list
    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    b_q: np.ndarray
    b_k: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    steps: AttentionResult


def heads(model, trace, layer: int = 0) -> Heads:
    """Encoder layer ``layer``'s self-attention of ``trace``, split per head as the post draws it."""
    module, a = model.encoder.layers[layer].self_attn, trace.encoder_layers[layer].self_attn
    n_heads, _, d_k = a.q.shape

    def split(linear):  # nn.Linear computes x @ weight.T + bias; head h owns rows h*d_k:(h+1)*d_k
        w = linear.weight.detach().double().numpy().T  # (d_model, d_model)
        b = linear.bias.detach().double().numpy()  # (d_model,)
        return (w.reshape(w.shape[0], n_heads, d_k).transpose(1, 0, 2),  # (n_heads, d_model, d_k)
                b.reshape(n_heads, d_k))  # (n_heads, d_k)

    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (split(m) for m in (module.w_q, module.w_k, module.w_v))
    return Heads(list(trace.source_tokens), trace.encoder_layers[layer].attn_block.sublayer_input,
                 w_q, w_k, w_v, b_q, b_k, b_v, module.w_o.weight.detach().double().numpy().T,
                 module.w_o.bias.detach().double().numpy(), a)


def _limit(*arrays) -> float:
    return float(max(np.abs(a).max() for a in arrays)) or 1.0


def _matrix(ax, values, title, *, limit, rows=None, annotate=False, cmap=kit.DIVERGING_CMAP,
            decimals=2, color=_INK, fontsize=kit.MIN_FONT_PT):
    """One matrix as coloured cells on a shared scale, its shape in the title."""
    values = np.atleast_2d(values)
    vmin, vmax = (0.0, 1.0) if cmap == kit.CMAP else (-limit, limit)
    image = kit.heatmap(ax, values, row_labels=rows if rows is not None else [], col_labels=[],
                        cmap=cmap, vmin=vmin, vmax=vmax, annotate=annotate,
                        fmt=kit.probability_text if cmap == kit.CMAP  # weights: never "0" for 0.001
                        else lambda v: kit.format_value(v, decimals), label_fontsize=9,
                        fontsize=fontsize)
    if title:
        ax.set_title(f"{title}  ({values.shape[0]} × {values.shape[1]})", fontsize=9, color=color)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_edgecolor(color)
    return image


def _axes(fig, x, top, w, h):
    """Axes placed in inches: ``x`` from the left, ``top`` from the top, ``w`` by ``h``."""
    width, height = fig.get_size_inches()
    return fig.add_axes((x / width, 1 - (top + h) / height, w / width, h / height))


def _bar(fig, image, x, top, w, label):
    """A horizontal colour bar placed in inches."""
    bar = fig.colorbar(image, cax=_axes(fig, x, top, w, 0.1), orientation="horizontal")
    bar.set_label(label, fontsize=8)
    bar.ax.tick_params(labelsize=8)
    return bar


def draw_qkv(h: Heads, head: int, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The post's "separate W_Q/W_K/W_V per head": X times head ``head``'s own three matrices
    (plus biases) gives its Q, K and V, their numbers written in."""
    seq, d_model = h.x.shape
    d_k = h.steps.q.shape[-1]
    a = h.steps
    names = (("Q", h.w_q, a.q, kit.COLORS["query"]), ("K", h.w_k, a.k, kit.COLORS["key"]),
             ("V", h.w_v, a.v, kit.COLORS["value"]))
    vectors, weights = _limit(h.x, a.q, a.k, a.v), _limit(h.w_q[head], h.w_k[head], h.w_v[head])
    small, row_h = kit.narrow(width), 0.19 * seq
    width = min(width, kit.COLUMN_WIDTH_IN)  # shown at its own size: its numbers at 9 pt
    # x of: X, the W column, the Q/K/V matrices; their cell width; the first row's top; the
    # height of one product. A phone draws each W on its side (d_k rows of d_model) above its
    # product, so that the product's cells take the column's width and its numbers read at 9 px.
    x_at, w_at, out_at, cell, first, step = ((0.75, 0.75, 0.75, 0.35, 1.25, 1.5) if small else
                                             (0.75, 2.65, 3.85, 0.35, 0.5, 1.25))
    x_w = 2.75 if small else 1.45  # X's width
    fig = plt.figure(figsize=(width, first + 3 * step + (0.8 if small else 0.1)), dpi=kit.DPI)
    x_top = 0.55 if small else first + 1.25 + 0.425 - row_h / 2
    x_image = _matrix(_axes(fig, x_at, x_top, x_w, row_h), h.x, "X",
                      limit=vectors, rows=h.tokens, color=kit.COLORS["input"])
    height = fig.get_figheight()

    def sign(x, y, text):
        fig.text(x / width, 1 - y / height, text, ha="center", va="center", fontsize=12,
                 color=_INK)

    if not small:
        sign(x_at + x_w + 0.2, x_top + row_h / 2, "×")
    for i, (name, w, m, color) in enumerate(names):
        top = first + i * step
        ax_w = _axes(fig, w_at, top + 0.2, *((2.8, 0.25) if small else (0.3, 0.85)))
        w_image = _matrix(ax_w, w[head].T if small else w[head], "", limit=weights, color=color)
        ax_w.set_title(f"X × $W^{name}_{head}$, on its side" if small else f"$W^{name}_{head}$",
                       fontsize=9, color=color)
        if not small:
            sign(w_at + 0.5, top + 0.625, "=")
        m_top = top + 0.8 if small else top + 0.625 - row_h / 2
        _matrix(_axes(fig, out_at, m_top, cell * d_k, row_h), m[head],
                f"X $W^{name}_{head}$ + $b^{name}_{head}$ = ${name}_{head}$", limit=vectors,
                rows=h.tokens, annotate=True, decimals=1, color=color, fontsize=9)
    if small:
        _bar(fig, x_image, 0.3, height - 0.55, 1.3, "X, Q, K, V")
        _bar(fig, w_image, 2.0, height - 0.55, 1.3, f"W ({d_model} × {d_k})")
    else:
        _bar(fig, x_image, 0.75, first + 2 * step + 0.3, 1.45, "X, Q, K, V")
        _bar(fig, w_image, 0.75, first + 2 * step + 0.85, 1.45, f"weights W ({d_model} × {d_k})")
    fig.text(0.5, 1 - 0.08 / height, f"head {head} of {h.steps.q.shape[0]}: its own $W^Q$, $W^K$, "
             "$W^V$", ha="center", va="top", fontsize=10, color=_INK)
    return fig


def draw_z(h: Heads, *, width: float = kit.DESKTOP_WIDTH_IN):
    """Every head's attention weights and its Z = weights × V: one pair per head."""
    n_heads, seq, d_k = h.steps.z.shape
    small = kit.narrow(width)
    width = min(width, kit.COLUMN_WIDTH_IN)  # shown at its own size: its numbers at 9 pt
    size = kit.MIN_FONT_PT if small else 9  # the numbers' size
    w_cell, row_h = (0.27, 0.19 * seq) if small else (0.4, 0.22 * seq)
    z_cell = (width - 0.58 - seq * w_cell - 0.16) / d_k if small else 0.38
    block = 0.45 + row_h  # a title, the matrices and a gap
    fig = plt.figure(figsize=(width, 0.15 + n_heads * block + 0.75), dpi=kit.DPI)
    limit = _limit(h.steps.z)
    for head in range(n_heads):
        left = 0.58 + (0 if small else (width - 0.58 - seq * w_cell - 0.1 - d_k * z_cell) / 2)
        top = 0.4 + head * block
        _matrix(_axes(fig, left, top, seq * w_cell, row_h), h.steps.weights[head], f"head {head} weights",
                limit=1.0, rows=h.tokens, annotate=True, cmap=kit.CMAP, color=HEAD_COLORS[head],
                fontsize=size)
        image = _matrix(_axes(fig, left + seq * w_cell + 0.1, top, d_k * z_cell, row_h),
                        h.steps.z[head], f"× $V_{head}$ = $Z_{head}$", limit=limit, annotate=True,
                        decimals=1, color=HEAD_COLORS[head], fontsize=size)
    _bar(fig, image, 0.62, fig.get_figheight() - 0.55, 2.0, "Z")
    return fig


def draw_concat(h: Heads, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The heads' Z side by side, times W_O (plus b_O): the sub-layer's output, which goes on to
    Add & Norm (chapter 06) and then to the feed-forward network."""
    seq, d_model = h.steps.concat.shape
    n_heads, _, d_k = h.steps.z.shape
    small, row_h = kit.narrow(width), 0.19 * seq
    if small:  # top to bottom: the concatenation, W_O, the output
        cell, side = (width - 0.7) / d_model, 2.3
        fig = plt.figure(figsize=(width, 2.15 + 2 * row_h + side + 0.9), dpi=kit.DPI)
        spots = [(0.6, 0.35), ((width - side) / 2 + 0.1, 1.3 + row_h),
                 (0.6, 2.15 + row_h + side)]
    else:  # left to right
        cell, side = 0.06, 1.8
        fig = plt.figure(figsize=(width, 0.4 + side + 0.9), dpi=kit.DPI)
        middle = 0.4 + side / 2 - row_h / 2
        spots = [(0.6, middle), (0.6 + cell * d_model + 0.35, 0.4),
                 (0.6 + cell * d_model + 0.35 + side + 0.95, middle)]
    axes = [_axes(fig, x, top, w, hh) for (x, top), (w, hh) in
            zip(spots, [(cell * d_model, row_h), (side, side), (cell * d_model, row_h)])]
    limit = _limit(h.steps.concat, h.steps.output)
    image = _matrix(axes[0], h.steps.concat, "$Z_0$ … " + f"$Z_{n_heads - 1}$ side by side",
                    limit=limit, rows=h.tokens)
    for head in range(n_heads):
        axes[0].add_patch(plt.Rectangle((head * d_k - 0.5, -0.5), d_k, seq, fill=False, lw=2,
                                        ec=HEAD_COLORS[head]))
        axes[0].text(head * d_k + (d_k - 1) / 2, seq - 0.3, f"$Z_{head}$", ha="center", va="top",
                     fontsize=9, color=HEAD_COLORS[head])
    w_image = _matrix(axes[1], h.w_o, "$W^O$", limit=_limit(h.w_o))
    _matrix(axes[2], h.steps.output, "+ $b^O$ = output, to Add & Norm", limit=limit, rows=h.tokens)
    height = fig.get_figheight()
    for (x, y), text in zip(([spots[1][0] - 0.2, spots[1][1] + side / 2],
                             [spots[2][0] - (0.35 if small else 0.7), spots[2][1] + row_h / 2])
                            if not small else
                            ([width / 2, spots[1][1] - 0.45], [width / 2, spots[2][1] - 0.45]),
                            ("×", "=")):
        fig.text(x / width, 1 - y / height, text, ha="center", va="center", fontsize=12,
                 color=_INK)
    _bar(fig, image, 0.6, height - 0.5, 1.6, "Z, output")
    _bar(fig, w_image, 2.4 if small else 3.0, height - 0.5, 1.0 if small else 1.6, "$W^O$")
    return fig


def draw_recap(h: Heads, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The whole sub-layer in one picture with its real shapes: X, each head's projections and
    attention, the concatenation, W_O and the output on its way to Add & Norm."""
    seq, d_model = h.x.shape
    n_heads, _, d_k = h.steps.q.shape
    c = kit.COLORS
    stages = [("X", f"{seq} × {d_model}", c["input"]),
              ("× $W^Q_h$, $W^K_h$, $W^V_h$", f"{n_heads} heads: 3 of {d_model} × {d_k}",
               c["attention"]),
              ("= $Q_h$, $K_h$, $V_h$", f"{n_heads} heads: 3 of {seq} × {d_k}", c["query"]),
              ("attention → $Z_h$", f"{n_heads} heads: {seq} × {d_k}", c["z"]),
              ("concatenate", f"{seq} × {n_heads}·{d_k} = {seq} × {d_model}", c["z"]),
              ("× $W^O$ + $b^O$", f"{d_model} × {d_model}", c["attention"]),
              ("output → Add & Norm", f"{seq} × {d_model}", c["output"])]
    if kit.narrow(width):
        n = len(stages)
        fig, ax = kit.canvas((width, 0.72 * n), (0, 1), (0, n))
        for i, (name, shape, color) in enumerate(stages):
            kit.box(ax, 0.06, n - i - 0.88, 0.88, 0.66, name, color, fontsize=9, subtitle=shape)
            if i:
                kit.arrow(ax, (0.5, n - i + 0.1), (0.5, n - i - 0.22))
        return fig
    fig, ax = kit.canvas((width, 2.2), (0, 4), (0, 2.2))
    spots = [(0, 1.3), (1, 1.3), (2, 1.3), (3, 1.3), (3, 0.15), (2, 0.15), (1, 0.15)]
    for (x, y), (name, shape, color) in zip(spots, stages):
        kit.box(ax, x + 0.05, y, 0.9, 0.72, name, color, fontsize=9, subtitle=shape)
    for (x0, y0), (x1, y1) in zip(spots, spots[1:]):
        if y0 != y1:
            kit.arrow(ax, (x0 + 0.5, y0), (x1 + 0.5, y1 + 0.72))
        else:
            step = 0.45 if x1 > x0 else -0.45
            kit.arrow(ax, (x0 + 0.5 + step, y0 + 0.36), (x1 + 0.5 - step, y1 + 0.36))
    return fig


def draw_it_heads(tokens, weights, word: str, shown, *, title: str = "",
                  width: float = kit.DESKTOP_WIDTH_IN):
    """The post's "two heads on it": lines from ``word`` to every word for the heads ``shown``
    of ``weights`` (n_heads, seq, seq), as wide as the weight, each weight written by its word."""
    n, i = len(tokens), tokens.index(word)
    size = min(width, 5.2)
    start, end = (0.62, 1.5) if kit.narrow(width) else (0.8, 2.8)  # the lines, in inches
    numbers = [end + 1.2 + 0.55 * rank for rank in range(len(shown))]
    fig, ax = kit.canvas((size, 0.7 + 0.27 * n), (0, size), (n + 0.2, -1.4))
    for rank, head in enumerate(shown):
        for j, w in enumerate(weights[head, i]):
            ax.plot([start, end], [(n - 1) / 2 + 0.15 * (rank - 0.5), j], color=HEAD_COLORS[head],
                    alpha=min(1.0, 0.12 + w), lw=0.4 + 5 * w, solid_capstyle="round")
            ax.text(numbers[rank], j, f"{w:.2f}", ha="center", va="center", fontsize=8,
                    color=HEAD_COLORS[head], fontweight="bold" if w >= 0.15 else "normal")
        ax.text(numbers[rank], -0.9, f"head {head}", ha="center", va="center", fontsize=8,
                color=HEAD_COLORS[head], fontweight="bold")
    ax.text(start - 0.08, (n - 1) / 2, word, ha="right", va="center", fontsize=11,
            fontweight="bold", color=_INK)
    for j, token in enumerate(tokens):
        ax.text(end + 0.06, j, token, ha="left", va="center", fontsize=9, color=_INK)
    if title:
        ax.text(0.05, -0.9, title, ha="left", va="center", fontsize=8, color=kit.COLORS["muted"])
    return fig


def encoder_attention(model, src_vocab, tgt_vocab, sentence: str):
    """(source tokens, encoder self-attention weights (n_layers, n_heads, seq, seq))."""
    t = il.trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    return t.source_tokens, t.encoder_attention()


def draw_self_attention(tokens, weights, head: int | None = None, title: str = "", *,
                        width: float = kit.DESKTOP_WIDTH_IN):
    """The post's attention picture: the words twice, a line from each word on the left (the
    query) to each word on the right (the key), as dark and wide as its weight; ``weights`` is
    (n_heads, seq, seq), all heads in their colours unless ``head`` is given."""
    n = len(tokens)
    fig, ax = kit.canvas((min(width, 4.4), 0.6 + 0.3 * n), (0, 4.4),
                         (n + 0.1, -0.5 - 0.6 * bool(title)))
    heads = range(weights.shape[0]) if head is None else [head]
    for h in heads:
        for (i, j), w in np.ndenumerate(weights[h]):
            if w > 0.01:
                ax.plot([1.45, 2.95], [i, j], color=HEAD_COLORS[h], alpha=min(1, 0.1 + 0.9 * w),
                        lw=0.5 + 3.5 * w)
    for i, token in enumerate(tokens):
        ax.text(1.35, i, token, ha="right", va="center", fontsize=10, color=_INK)
        ax.text(3.05, i, token, ha="left", va="center", fontsize=10, color=_INK)
    if title:
        ax.text(2.2, -0.8, title, ha="center", va="center", fontsize=9, color=kit.COLORS["muted"])
    return fig


def self_attention_widget(corpus: str, sentence: str, corpora, examples):
    """The live view of every encoder layer's and head's self-attention for a typed sentence,
    computed in the page by the shipped model's ONNX graph; its ipywidget twin uses il.trace."""
    models = {}

    def model(name):
        if name not in models:
            models[name] = il.pretrained(name)
        return models[name]

    def draw(corpus, sentence, layer=-1, head=None, *, width=kit.DESKTOP_WIDTH_IN):
        tokens, weights = encoder_attention(*model(corpus), sentence)  # the top layer first
        layer = layer % weights.shape[0]
        which = "every head in its own colour" if head is None else f"head {head}"
        return draw_self_attention(tokens, weights[layer], head,
                                   f"encoder layer {layer}, {which}", width=width)

    def kernel():
        box = widgets.Text(value=sentence, description="sentence", continuous_update=False)
        choice = widgets.Dropdown(options=list(corpora), value=corpus, description="corpus")
        layer, head = widgets.Dropdown(description="layer"), widgets.Dropdown(description="head")

        def sizes():  # the chosen model's layers and heads, numbered from 0
            cfg = model(choice.value)[0].cfg
            layer.options = list(range(cfg.n_layers))
            head.options = [("all heads", -1)] + [(f"head {h}", h) for h in range(cfg.n_heads)]
            layer.value, head.value = cfg.n_layers - 1, -1

        def show(control):
            if control is choice:  # another model: its sizes and its example sentence
                sizes()
                box.value = examples[choice.value]
            return draw(choice.value, box.value, layer.value, None if head.value < 0 else head.value)

        sizes()
        return ia.twin([[choice, box], [layer, head]], show)

    params = {"corpus": corpus, "sentence": sentence, "corpora": list(corpora),
              "examples": dict(examples)}
    return ia.live("selfattention", params, kernel=kernel,
                   default=lambda width: draw(corpus, sentence, width=width),
                   alt=f"the self-attention of every head of the top encoder layer of the shipped "
                       f"{corpus} model for '{sentence}': each word on the left joined to "
                       f"every word on the right by lines as strong as its weight")


#: The live view's corpora (a menu: "trained" joins it after a run in the page) and its sentence.
LIVE_CORPORA = ["coreference", "post", "fr-en", "copy", "reverse"]
TIRED = "the animal didn't cross the street because it was too tired"


def live_self_attention():
    """The live self-attention view of chapters 04 and 10: every shipped corpus's model (and the
    reader's, once trained in the page), the coreference model on the post's sentence first."""
    examples = {c: il.data.load_corpus(c, "test")[0][0][0] for c in LIVE_CORPORA}
    examples["coreference"] = TIRED
    return self_attention_widget("coreference", TIRED, LIVE_CORPORA, examples)
