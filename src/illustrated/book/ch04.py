"""Chapter 04, multi-head attention: one head's queries, keys, values and weights, the heads'
outputs concatenated and mixed by W_O, and every encoder head of a sentence the reader types."""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import illustrated as il

from . import interactive as ia
from . import kit

__all__ = ["HEAD_COLORS", "draw_head", "draw_self_attention", "encoder_attention",
           "self_attention_widget"]

HEAD_COLORS = kit.HEAD_COLORS
_INK = kit.COLORS["text"]


def _panel(ax, values, title, rows=None, cols=None, cmap=kit.DIVERGING_CMAP, annotate=False):
    lim = np.abs(values).max() or 1.0
    vmin, vmax = (0, 1) if cmap == kit.CMAP else (-lim, lim)
    kit.heatmap(ax, values, row_labels=rows, col_labels=cols, cmap=cmap, vmin=vmin, vmax=vmax,
                annotate=annotate)
    ax.set_title(title, fontsize=10, color=_INK)
    if cols is None:
        ax.set_xticks([])
    if rows is None:
        ax.set_yticks([])


def draw_head(attention, tokens, w_o, head: int):
    """Head ``head`` of one attention sub-layer (an il.trace AttentionTrace): its Q, K, V,
    weights and Z, then every head's Z side by side, times W_O, giving the sub-layer's output."""
    n_heads, _, d_k = attention.q.shape
    fig = plt.figure(figsize=(8, 4.6), dpi=kit.DPI, layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=(1, 1.05))
    axes = top.subplots(1, 5, width_ratios=(d_k, d_k, d_k, len(tokens) * 2, d_k))
    for ax, values, title in zip(axes, (attention.q[head], attention.k[head], attention.v[head]),
                                 (f"$Q_{head}$", f"$K_{head}$", f"$V_{head}$")):
        _panel(ax, values, title, rows=tokens if ax is axes[0] else None)
    _panel(axes[3], attention.weights[head], f"softmax($Q_{head} K_{head}^T / √{d_k}$)",
           rows=None, cols=tokens, cmap=kit.CMAP, annotate=True)
    axes[3].tick_params(axis="x", labelrotation=30)
    _panel(axes[4], attention.z[head], f"$Z_{head}$")
    top.suptitle(f"head {head} of {n_heads}: its own $W^Q$, $W^K$, $W^V$", fontsize=10)
    axes = bottom.subplots(1, 3)
    _panel(axes[0], attention.concat, "all heads' Z, side by side", rows=tokens)
    for h in range(n_heads):
        axes[0].add_patch(plt.Rectangle((h * d_k - 0.5, -0.5), d_k, len(tokens), fill=False,
                                        lw=3 if h == head else 1, ec=HEAD_COLORS[h]))
    axes[0].set_xticks([h * d_k + (d_k - 1) / 2 for h in range(n_heads)],
                       [f"head {h}" for h in range(n_heads)], fontsize=8)
    _panel(axes[1], w_o, "× $W^O$")
    _panel(axes[2], attention.output, "= output (the next layer's input)")
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
