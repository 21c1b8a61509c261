"""Chapter 07, the decoder side: decoding one word at a time, the causal mask, the final softmax."""
from __future__ import annotations

import copy

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch

import illustrated as il
from illustrated.data import load_corpus
from illustrated.inference.decoding import EvalMode
from illustrated.modules import Transformer
from illustrated.pretrained_models import SETTINGS, make_config

from . import interactive as ia
from . import kit

__all__ = ["cross_attention", "draw_step", "draw_translation", "translate_widget",
           "draw_causal_mask", "UnmaskedTransformer", "without_mask", "leak_test",
           "train_with_and_without_mask", "draw_output_softmax"]

_MUTED = kit.COLORS["faint"]


def cross_attention(trace, layer: int, head: int | None) -> np.ndarray:
    """Encoder-decoder attention of one decoder layer, one head or their mean: (tgt_len, src_len)."""
    weights = trace.cross_attention()[layer]  # (n_heads, tgt_len, src_len)
    return weights.mean(axis=0) if head is None else weights[head]


def _heads(layer: int, head: int | None) -> str:
    return f"layer {layer}, " + ("mean over heads" if head is None else f"head {head}")


def _bars(ax, words, probs, chosen: str) -> None:
    """Horizontal probability bars, the most probable on top, the chosen word coloured."""
    y = np.arange(len(words))
    ax.barh(y, probs, color=[kit.COLORS["chosen"] if w == chosen else kit.COLORS["probs"]
                           for w in words])
    for yi, p in zip(y, probs):
        ax.text(p + 0.03, yi, f"{p:.2f}", va="center", fontsize=9)
    ax.set_yticks(y, words, fontsize=10)
    ax.set_xlim(0, 1.3)
    ax.set_xticks([0, 0.5, 1])
    ax.tick_params(labelsize=9)
    ax.invert_yaxis()
    ax.spines[["top", "right"]].set_visible(False)


def draw_step(trace, step: int, *, vocab_tokens, layer: int = -1, head: int | None = None,
              top_k: int = 5, width: float = kit.DESKTOP_WIDTH_IN):
    """Decoding step ``step`` (from 0): the decoder's input so far, its attention, the chosen
    word; side by side, or one under another in a phone's column."""
    n, layer = len(trace.target_tokens), layer % len(trace.decoder_layers)
    chosen = trace.target_tokens[step]
    phone = kit.narrow(width)
    if phone:
        fig, axes = plt.subplots(3, 1, figsize=(width, 2.2 + 0.34 * (2 * n + top_k)),
                                 dpi=kit.DPI, layout="constrained",
                                 gridspec_kw={"height_ratios": [n, n + 1.5, top_k]})
    else:
        fig, axes = plt.subplots(1, 3, figsize=(8, 1.3 + 0.42 * max(n, top_k)), dpi=kit.DPI,
                                 gridspec_kw={"width_ratios": [1.0, 1.25, 1.0]},
                                 layout="constrained")
    ax = axes[0]  # the decoder's input, one box per position, and the word it outputs
    for i in range(n):
        word = trace.decoder_input_tokens[i] if i <= step else ""
        kit.box(ax, 0.05, n - 1 - i + 0.1, 0.9, 0.8, word,
                kit.COLORS["decoder"] if word else kit.COLORS["blank"], fontsize=10, bold=False,
                rounding=0.1)
    kit.arrow(ax, (1.0, n - 0.5 - step), (1.4, n - 0.5 - step))
    kit.box(ax, 1.45, n - 1 - step + 0.1, 0.95, 0.8, chosen, kit.COLORS["z"], fontsize=10,
            rounding=0.1)
    ax.set(xlim=(0, 2.45), ylim=(0, n))
    if phone:  # the boxes as wide as on the desktop, centred in the column
        ax.set_xlim(-1.0, 3.45)
    ax.axis("off")
    ax.set_title("decoder input → output", fontsize=10)
    rows = np.full((n, len(trace.source_tokens)), np.nan)  # (tgt_len, src_len), later rows blank
    rows[:step + 1] = cross_attention(trace, layer, head)[:step + 1]
    # each row is named by the word its position writes, as the text speaks of it
    kit.heatmap(axes[1], rows, row_labels=[f"{i} → {w}" if i <= step else f"{i}"
                                           for i, w in enumerate(trace.target_tokens)],
                col_labels=trace.source_tokens, vmin=0, vmax=1, annotate=True, fontsize=9)
    axes[1].set_ylabel("position → word written", fontsize=9)
    axes[1].set_title(f"attention over the source\n({_heads(layer, head)})", fontsize=10)
    order = np.argsort(-trace.probs[step], kind="stable")[:top_k]
    _bars(axes[2], [vocab_tokens[i] for i in order], trace.probs[step][order], chosen)
    axes[2].set_title("probability of the next word", fontsize=10)
    fig.suptitle(f"step {step}: reads {' '.join(trace.decoder_input_tokens[:step + 1])}, "
                 f"outputs '{chosen}'", fontsize=10 if phone else 11, x=0.02, ha="left",
                 wrap=phone)
    return fig


def draw_translation(trace, *, vocab_tokens, layer: int = -1, head: int | None = None,
                     top_k: int = 5, width: float = kit.DESKTOP_WIDTH_IN):
    """A whole translation: each output word's attention over the source and its top choices
    (below it in a phone's column)."""
    layer = layer % len(trace.decoder_layers)
    n, m = len(trace.target_tokens), len(trace.source_tokens)
    phone = kit.narrow(width)
    if phone:
        fig, (ax, top) = plt.subplots(2, 1, figsize=(width, 2.0 + 0.9 * n), dpi=kit.DPI,
                                      layout="constrained")
    else:
        fig, (ax, top) = plt.subplots(1, 2, figsize=(8, 1.4 + 0.45 * n), dpi=kit.DPI,
                                      gridspec_kw={"width_ratios": [max(m, 3), 1.6 * top_k]},
                                      layout="constrained")
    kit.heatmap(ax, cross_attention(trace, layer, head), vmin=0, vmax=1,
                annotate=m <= (5 if phone else 8), fontsize=9 if phone else kit.MIN_FONT_PT,
                row_labels=[f"{i} → {w}" for i, w in enumerate(trace.target_tokens)],
                col_labels=trace.source_tokens, col_rotation=45 if m > (3 if phone else 4) else 0)
    ax.set_title(f"attention ({_heads(layer, head)})", fontsize=10)
    order = np.argsort(-trace.probs, axis=1, kind="stable")[:, :top_k]  # (tgt_len, top_k)
    best = np.take_along_axis(trace.probs, order, axis=1)  # (tgt_len, top_k)
    image = kit.heatmap(top, best, vmin=0, vmax=1, row_labels=[f"{i}" for i in range(n)]
                        if phone else [], col_labels=[str(k) for k in range(top_k)])
    for (i, k), p in np.ndenumerate(best):
        top.text(k, i, f"{vocab_tokens[order[i, k]]}\n{p:.2f}", ha="center", va="center",
                 fontsize=9 if phone else 8, color=kit.ink_on(image.cmap(image.norm(p))))
    top.set_title(f"the {top_k} most probable words at each step", fontsize=10)
    top.set_xlabel("rank", fontsize=9)
    title = f"{' '.join(trace.source_tokens)} → {' '.join(trace.target_tokens)}"
    fig.suptitle(kit.wrap(title, 40) if phone else title, fontsize=10 if phone else 11,
                 x=0.02, ha="left")
    return fig


def translate_widget(model, src_vocab, tgt_vocab, sentence: str, *, top_k: int = 5):
    """The kernel twin of the page's translate widget: a text box, layer and head, the figure."""
    cfg = model.cfg
    box = widgets.Text(value=sentence, description="source", continuous_update=False)
    layer = widgets.Dropdown(options=list(range(cfg.n_layers)), value=cfg.n_layers - 1,
                             description="layer")
    head = widgets.Dropdown(options=[("mean", -1)] + [(str(h), h) for h in range(cfg.n_heads)],
                            value=-1, description="head")  # -1: ipywidgets reads None as unset

    def show(_):  # a new input never leaves the old result on screen
        trace = il.trace(model, box.value, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        return draw_translation(trace, vocab_tokens=tgt_vocab.tokens, layer=layer.value,
                                head=None if head.value < 0 else head.value, top_k=top_k)

    return ia.twin([[box, layer, head]], show)


def draw_causal_mask(tokens, weights, *, layer: int, width: float = kit.DESKTOP_WIDTH_IN):
    """The causal mask (0 or -inf added to the scores) and the masked self-attention weights;
    one under the other in a phone's column."""
    n = len(tokens)
    allowed = np.tril(np.ones((n, n)))  # (n, n), 1 = may attend
    phone = kit.narrow(width)
    fig, axes = plt.subplots(*((2, 1) if phone else (1, 2)),
                             figsize=(width, 6.6) if phone else (7.6, 3.6), dpi=kit.DPI,
                             layout="constrained")
    kit.heatmap(axes[0], allowed, row_labels=tokens, col_labels=tokens, cmap="Greys_r",
                vmin=-0.6, vmax=1.0, annotate=True, fmt=lambda v: "0" if v else "−∞",
                fontsize=10, col_rotation=45, aspect="equal")
    axes[0].set_title("the mask added to the scores", fontsize=10)
    kit.heatmap(axes[1], weights, row_labels=tokens, col_labels=tokens, vmin=0, vmax=1,
                annotate=True, col_rotation=45, aspect="equal", fontsize=9)
    axes[1].set_title(f"self-attention weights\n({_heads(layer, None)})", fontsize=10)
    for ax in axes:
        ax.set_xlabel("key position", fontsize=9)
        if phone or ax is axes[0]:
            ax.set_ylabel("query position", fontsize=9)
    return fig


class UnmaskedTransformer(Transformer):
    """The package's Transformer with one change: no causal mask in the decoder (a demonstration)."""

    supports_kv_cache = False  # a later position changes the earlier ones: no cache holds

    def decode_unchecked(self, tgt_in, memory, src_mask=None, cache=None):
        y = self.positional(self.tgt_embed(tgt_in))  # (batch, tgt_len, d_model)
        return self.decoder(y, memory, src_mask, None)


def without_mask(model):
    """The same weights, dtype and device in an UnmaskedTransformer; the global RNG is left as it was."""
    with torch.random.fork_rng(devices=[]):
        twin = UnmaskedTransformer(model.cfg)
    param = next(model.parameters())
    twin.to(device=param.device, dtype=param.dtype).load_state_dict(model.state_dict())
    return twin.eval()


def leak_test(model, sentence: str, target: str, src_vocab, tgt_vocab, *, position: int,
              new_word: str):
    """Per position, the largest probability change when one input word changes: (input
    before, input after, change with the mask, change without it)."""
    before = [tgt_vocab.bos_id, *tgt_vocab.encode(target)]
    after = list(before)
    after[position] = tgt_vocab.index(new_word)
    masked = copy.deepcopy(model).double()  # float64: "unchanged" means 1e-16, not 1e-8
    device = next(model.parameters()).device
    src = torch.tensor([src_vocab.encode(sentence)] * 2, device=device)  # (2, src_len)
    tgt = torch.tensor([before, after], device=device)  # (2, tgt_len)
    changes = []
    for net in (masked, without_mask(masked)):
        with EvalMode(net):
            probs = net(src, tgt).softmax(dim=-1).cpu().numpy()  # (2, tgt_len, vocab)
        changes.append(np.abs(probs[1] - probs[0]).max(axis=-1))  # (tgt_len,)
    words = [[tgt_vocab.tokens[i] for i in ids] for ids in (before, after)]
    return words[0], words[1], changes[0], changes[1]


def train_with_and_without_mask(corpus: str = "copy", *, steps: int = 300, batch_size: int = 64,
                                seed: int = 0) -> dict:
    """Train the corpus's model twice from the same weights and batches, with and without the
    mask: {name: (history, exact match on the test split, greedy outputs of 3 test sentences)}."""
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    test, _, _ = load_corpus(corpus, "test")
    options = {**SETTINGS[corpus]["train"], "steps": steps, "batch_size": batch_size,
               "seed": seed, "device": "cpu", "progress": False}
    runs = {}
    for name, cls in (("with the mask", Transformer), ("without the mask", UnmaskedTransformer)):
        il.set_seed(seed)
        model = cls(make_config(corpus, src_vocab, tgt_vocab))
        history = il.train(model, pairs, src_vocab, tgt_vocab, **options)
        runs[name] = (history, il.exact_match(model, test, src_vocab, tgt_vocab),
                      il.translate(model, [s for s, _ in test[:3]], src_vocab, tgt_vocab))
    runs["test"] = test[:3]
    return runs


def draw_output_softmax(x, logits, probs, vocab_tokens, *, top_k: int = 8,
                        width: float = kit.DESKTOP_WIDTH_IN):
    """The final layer for one step: decoder output -> logits -> softmax -> argmax -> word.
    In a phone's column the bars lie down, the words beside them."""
    order = np.argsort(-probs, kind="stable")[:top_k]
    words = [vocab_tokens[i] for i in order]
    best = int(np.argmax(probs))
    phone = kit.narrow(width)
    fig, axes = plt.subplots(4, 1, figsize=(width, 8.4) if phone else (7.6, 6.4), dpi=kit.DPI,
                             layout="constrained",
                             gridspec_kw={"height_ratios": [0.5, 2.6, 2.6, 0.55] if phone
                                          else [0.5, 2, 2, 0.55]})
    limit = float(np.abs(x).max())
    kit.heatmap(axes[0], x[None, :], row_labels=[], cmap=kit.DIVERGING_CMAP, vmin=-limit,
                vmax=limit)
    axes[0].set_title(f"decoder output: {x.size} floats", fontsize=10)
    axes[0].tick_params(labelsize=9)
    colors = [kit.COLORS["chosen"] if i == best else kit.COLORS["probs"] for i in order]
    for ax, values, title, decimals in (
            (axes[1], logits[order], f"Linear → logits, one per word ({len(probs)} words; "
             f"the {top_k} highest shown)", 2),
            (axes[2], probs[order], "Softmax → probabilities (all positive, summing to 1)", 3)):
        span = float(values.max() - min(values.min(), 0.0))
        low, high = min(values.min(), 0.0), values.max() + (0.3 if phone else 0.2) * span
        if phone:
            ax.barh(range(top_k), values, color=colors)
            for i, v in enumerate(values):
                ax.text(v + 0.03 * span if v >= 0 else 0.03 * span, i, f"{v:.{decimals}f}",
                        va="center", fontsize=9)
            ax.axvline(0, color=kit.COLORS["text"], linewidth=0.6)
            ax.set_yticks(range(top_k), words, fontsize=10)
            ax.invert_yaxis()
            ax.set_xlim(low, high)
            ax.tick_params(axis="x", labelsize=9)
        else:
            ax.bar(range(top_k), values, color=colors)
            for i, v in enumerate(values):
                ax.text(i, v + 0.03 * span, f"{v:.{decimals}f}", ha="center", va="bottom",
                        fontsize=9)
            ax.axhline(0, color=kit.COLORS["text"], linewidth=0.6)
            ax.set_xticks(range(top_k), words, fontsize=10)
            ax.set_ylim(low, high)
            ax.tick_params(axis="y", labelsize=9)
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_title(kit.wrap(title, 40) if phone else title, fontsize=10)
    axes[3].text(0.5, 0.5, f"argmax → cell {best} → '{vocab_tokens[best]}'", ha="center",
                 va="center", fontsize=12, fontweight="bold",
                 bbox={"facecolor": kit.COLORS["z"], "edgecolor": "none", "alpha": 0.8})
    axes[3].axis("off")
    return fig
