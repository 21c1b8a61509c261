"""Chapter 06, the residuals: Add & Normalize around every sub-layer, post-LN and pre-LN."""
from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import illustrated as il
from illustrated.data import collate, encode_pairs

from . import kit
from .ch05 import draw_vectors

__all__ = ["SUBLAYER_NAMES", "StackPlan", "describe_stack", "draw_layer", "draw_stack",
           "SUBLAYERS", "draw_add_norm", "gradient_norms_at_init", "draw_gradient_norms",
           "norm_placement_experiment", "draw_training"]

SUBLAYER_NAMES = {"self_attn": "Self-Attention", "cross_attn": "Encoder-Decoder Attention",
                  "feed_forward": "Feed Forward"}
_FILL = {"Self-Attention": kit.COLORS["attention"], "Encoder-Decoder Attention": kit.COLORS["key"],
         "Feed Forward": kit.COLORS["ffn"]}
_SUB, _NORM, _GAP = 0.7, 0.42, 0.3  # heights of a sub-layer box, a norm box, the gap between


class StackPlan(NamedTuple):
    """The sub-layers of every encoder and decoder layer, read from the modules a config builds."""
    norm_first: bool
    encoder: list[list[str]]
    decoder: list[list[str]]
    final_norm: bool  # each stack ends with its own LayerNorm (pre-LN)


def describe_stack(cfg) -> StackPlan:
    """Build the encoder and decoder of ``cfg`` (tiny widths) and list what each layer holds."""
    small = replace(cfg, d_model=cfg.n_heads, d_ff=1, dropout=0.0)  # the structure only
    with torch.random.fork_rng(devices=[]):
        encoder, decoder = il.modules.Encoder(small), il.modules.Decoder(small)
    names = [[[SUBLAYER_NAMES[n] for n, _ in layer.named_children() if n in SUBLAYER_NAMES]
              for layer in stack.layers] for stack in (encoder, decoder)]
    return StackPlan(cfg.norm_first, *names, isinstance(encoder.norm, nn.LayerNorm))


def _steps(sub: str, norm_first: bool) -> list[tuple[str, str, float]]:
    if norm_first:  # x + Sublayer(LayerNorm(x))
        return [("LayerNorm", kit.COLORS["norm"], _NORM), (sub, _FILL[sub], _SUB),
                ("Add", "white", _NORM)]
    return [(sub, _FILL[sub], _SUB), ("Add & Normalize", kit.COLORS["norm"], _NORM)]


def _layer(ax, x: float, y: float, w: float, sublayers, norm_first: bool, *, name: str,
           color: str, side: str = "left", n_ffn: int = 1,
           size: float = 9) -> tuple[float, list[float]]:
    """One layer, its first box at y + _GAP, a residual around each sub-layer: (top, cross ys).
    ``size`` is its text's; below 9 pt, encoder-decoder attention is written on two lines."""
    cx, x_side = x + w / 2, x - 0.16 if side == "left" else x + w + 0.16
    cursor, crosses, top = y + _GAP, [], y
    for sub in sublayers:
        start = cursor - _GAP / 2  # where the residual leaves the stream
        for text, fill, h in _steps(sub, norm_first):
            if top > y:
                kit.arrow(ax, (cx, top), (cx, cursor))
            if text == "Feed Forward" and n_ffn > 1:  # one network per position, as the post
                each = (w - 0.15 * (n_ffn - 1)) / n_ffn
                for i in range(n_ffn):
                    kit.box(ax, x + i * (each + 0.15), cursor, each, h, "Feed\nForward", fill,
                            fontsize=size, bold=False, rounding=0.08)
            else:
                shown = "Encoder-Decoder\nAttention" if size < 9 and sub == text and \
                    text == "Encoder-Decoder Attention" else text
                kit.box(ax, x, cursor, w, h, shown, fill, fontsize=size, bold=False,
                        rounding=0.08)
            if text == "Encoder-Decoder Attention":
                crosses.append(cursor + h / 2)
            if text.startswith("Add"):
                mid = cursor + h / 2
                ax.plot([cx, x_side, x_side], [start, start, mid], color=kit.COLORS["muted"],
                        linestyle="--", linewidth=1.2, zorder=1, gid="residual")
                kit.arrow(ax, (x_side, mid), (x if side == "left" else x + w, mid),
                          color=kit.COLORS["muted"], dashed=True)
            top, cursor = cursor + h, cursor + h + _GAP
    kit.box(ax, x - 0.3, y, w + 0.6, top + _GAP / 2 - y, "", color, alpha=0.3, rounding=0.1,
            zorder=0)
    ax.text(x - 0.42 if side == "left" else x + w + 0.42, (y + top) / 2, name, rotation=90,
            ha="center", va="center", fontsize=max(size, kit.MIN_FONT_PT))
    return top, crosses


def _inputs(ax, x: float, w: float, words, prefix: str, color: str, size: float = 9) -> float:
    """The words at the bottom, each with a small vector and its name (x0, x1, ...): their top."""
    for i, word in enumerate(words):
        cx = x + w * (i + 0.5) / len(words)
        ax.text(cx, 0.3, word, ha="center", va="center", fontsize=size)
        for j in range(4):
            kit.box(ax, cx - 0.3 + 0.15 * j, 0.55, 0.15, 0.22, "", color, rounding=0.01)
        if size >= 9:  # (in a phone's column the names would run into the next word's vector)
            ax.text(cx + 0.4, 0.66, f"{prefix}{i}", ha="left", va="center", fontsize=size)
    return 0.85


def _finish(fig, ax, width: float, top: float, title: str, scale: float,
            size: float = 11) -> None:
    """Crop the canvas to ``top`` (plus the title) at ``scale`` inches per unit."""
    if title:
        ax.text(width / 2, top + 0.45, title, ha="center", va="center", fontsize=size,
                fontweight="bold")
    top += 0.9 if title else 0.3
    ax.set_ylim(0, top)
    fig.set_size_inches(scale * width, scale * top)


def draw_layer(cfg, words=("Thinking", "Machines"), *, title: str = "",
               width: float = kit.DESKTOP_WIDTH_IN):
    """Encoder layer 0 of ``cfg`` with its words: a residual and a norm around each sub-layer."""
    plan = describe_stack(cfg)
    w = max(2.8, 1.5 * len(words))
    span = w + 2.4
    scale = min(0.8, width / span)  # inches per unit: a phone's column draws it smaller
    phone = kit.narrow(width)
    fig, ax = kit.canvas((1, 1), (0, span), (0, 1))
    cx, below = 1.2 + w / 2, _inputs(ax, 1.2, w, words, "x", kit.COLORS["input"])
    kit.arrow(ax, (cx, below), (cx, 1.0 + _GAP))
    top, _ = _layer(ax, 1.2, 1.0, w, plan.encoder[0], cfg.norm_first, name="encoder layer 0",
                    color=kit.COLORS["encoder"], n_ffn=len(words))
    kit.arrow(ax, (cx, top), (cx, top + 0.45))
    ax.text(cx, top + 0.6, "to encoder layer 1", ha="center", va="center", fontsize=9)
    _finish(fig, ax, span, top + 0.7, kit.wrap(title, 30) if phone else title, scale,
            size=10 if phone else 11)
    return fig


def draw_stack(cfg, source_words, target_words, *, title: str = "",
               width: float = kit.DESKTOP_WIDTH_IN):
    """The encoders and decoders of ``cfg`` with every residual, every norm and the memory.
    A phone's column draws the two stacks closer and their text at 8 pt."""
    plan = describe_stack(cfg)
    phone = kit.narrow(width)
    w, enc_x, dec_x, span, size = (3.0, 0.75, 4.55, 8.3, 8) if phone else (3.0, 1.1, 6.0, 10.5, 9)
    fig, ax = kit.canvas((1, 1), (0, span), (0, 1))
    tops = {}
    for stack, x, side, kind, words in ((plan.encoder, enc_x, "left", "encoder", source_words),
                                        (plan.decoder, dec_x, "right", "decoder", target_words)):
        cx = x + w / 2
        below = _inputs(ax, x, w, words, "x" if kind == "encoder" else "y",
                        kit.COLORS["input" if kind == "encoder" else "decoder"], size)
        y, crosses = 1.0, []
        for i, layer in enumerate(stack):
            kit.arrow(ax, (cx, below), (cx, y + _GAP))
            below, cross = _layer(ax, x, y, w, layer, cfg.norm_first, name=f"{kind} layer {i}",
                                  color=kit.COLORS[kind], side=side, size=size)
            y, crosses = below + _GAP / 2 + 0.25, crosses + cross
        ends = ["LayerNorm"] * plan.final_norm + ["Linear", "Softmax"] * (kind == "decoder")
        for text in ends:
            kit.arrow(ax, (cx, below), (cx, below + _GAP))
            kit.box(ax, x, below + _GAP, w, _NORM, text,
                    kit.COLORS["norm" if text == "LayerNorm" else "output"], fontsize=size,
                    bold=False, rounding=0.08)
            below += _GAP + _NORM
        tops[kind] = below, crosses
    (memory, _), (top, crosses) = tops["encoder"], tops["decoder"]
    x_bus = (enc_x + w + dec_x) / 2
    level = memory + 0.45
    ax.plot([enc_x + w / 2, enc_x + w / 2, x_bus], [memory, level, level],
            color=kit.COLORS["text"], linewidth=1.2)
    ax.plot([x_bus, x_bus], [min(crosses + [level]), max(crosses + [level])],
            color=kit.COLORS["text"], linewidth=1.2)
    ax.text(x_bus - 0.1, memory + 0.55, "K, V", ha="right", va="bottom", fontsize=max(size, 9))
    for y in crosses:  # the top encoder's output feeds every encoder-decoder attention
        kit.arrow(ax, (x_bus, y), (dec_x, y)).set_gid("cross")
    _finish(fig, ax, span, max(top, memory + 0.9), title, min(width, 8) / span)
    return fig


SUBLAYERS = {"self-attention": "attn_block", "feed-forward": "ffn_block"}


def draw_add_norm(trace, layer: int, sublayer: str, *, width: float = kit.DESKTOP_WIDTH_IN):
    """X, Z, X + Z and LayerNorm(X + Z) of one sub-layer of a post-LN encoder, for every word."""
    block = getattr(trace.encoder_layers[layer], SUBLAYERS[sublayer])
    summed = block.summed  # (seq, d_model)
    stats = [f"mean {m:+.2f}, std {s:.2f}" for m, s in zip(summed.mean(-1), summed.std(-1))]
    return draw_vectors({"X": block.residual_input, "+ Z": block.sublayer_output,
                         "= X + Z": summed, "LayerNorm(X + Z)": block.output},
                        trace.source_tokens, names={"= X + Z": stats},
                        title=f"encoder layer {layer}, {sublayer}: all {summed.shape[1]} "
                              f"dimensions of each vector", width=width)


def _tiny(corpus: str, n_layers: int, norm_first: bool, seed: int):
    """The book's TINY model for a corpus, freshly initialised from ``seed``."""
    pairs, src_vocab, tgt_vocab = il.data.load_corpus(corpus)
    cfg = replace(il.TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                  pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id, n_layers=n_layers,
                  norm_first=norm_first)
    il.set_seed(seed)
    return il.modules.Transformer(cfg), pairs, src_vocab, tgt_vocab


def gradient_norms_at_init(corpus: str = "reverse", *, n_layers: int = 6, n_pairs: int = 64,
                           seed: int = 0) -> dict:
    """|gradient of W_2| of every layer after one backward pass from the same initial weights:
    {"encoder" | "decoder": {"post-LN" | "pre-LN": (n_layers,)}}."""
    norms = {"encoder": {}, "decoder": {}}
    for label, norm_first in (("post-LN", False), ("pre-LN", True)):
        model, pairs, src_vocab, tgt_vocab = _tiny(corpus, n_layers, norm_first, seed)
        batch = collate(encode_pairs(pairs[:n_pairs], src_vocab, tgt_vocab), src_vocab, tgt_vocab)
        logits = model(batch.src, batch.tgt_in)  # (batch, tgt_len, tgt_vocab_size)
        F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                        ignore_index=tgt_vocab.pad_id).backward()
        for kind, stack in (("encoder", model.encoder), ("decoder", model.decoder)):
            norms[kind][label] = np.array([layer.feed_forward.linear2.weight.grad.norm().item()
                                           for layer in stack.layers])
    return norms


def draw_gradient_norms(norms: dict, *, width: float = kit.DESKTOP_WIDTH_IN):
    """Bars of each layer's gradient norm, post-LN beside pre-LN, one panel per stack (one above
    the other in a phone's column)."""
    phone = kit.narrow(width)
    fig, axes = plt.subplots(*((len(norms), 1) if phone else (1, len(norms))),
                             figsize=(width, 5.2) if phone else (8, 3.1), dpi=kit.DPI,
                             sharey=True, layout="constrained")
    for ax, (kind, runs) in zip(axes, norms.items()):
        for k, ((label, values), color) in enumerate(zip(runs.items(), ("z", "value"))):
            ax.bar(np.arange(len(values)) + (k - 0.5) * 0.4, values, 0.4, label=label,
                   color=kit.COLORS[color])
        ax.set_xticks(range(len(values)))
        ax.set_xlabel(f"{kind} layer (bottom to top)", fontsize=9)
        ax.tick_params(labelsize=9)
        ax.legend(fontsize=9)
        if phone or ax is axes[0]:
            ax.set_ylabel("|gradient of W_2|", fontsize=9)
    return fig


def norm_placement_experiment(corpus: str = "reverse", *, n_layers: int = 3, steps: int = 120,
                              lr: float = 1e-2, warmup: int = 0, batch_size: int = 32,
                              seed: int = 0, test_pairs: int = 50) -> dict:
    """Train the same TINY model post-LN and pre-LN (same weights, same batches):
    {label: (History, exact match on the first ``test_pairs`` test pairs)}."""
    test = il.data.load_corpus(corpus, "test")[0][:test_pairs]
    runs = {}
    for label, norm_first in (("post-LN", False), ("pre-LN", True)):
        model, pairs, src_vocab, tgt_vocab = _tiny(corpus, n_layers, norm_first, seed)
        history = il.train(model, pairs, src_vocab, tgt_vocab, steps=steps, lr=lr, warmup=warmup,
                           batch_size=batch_size, device="cpu", seed=seed, progress=False)
        longest = max(len(source.split()) for source, _ in test)  # outputs are as long
        outputs = il.translate(model, [source for source, _ in test], src_vocab, tgt_vocab,
                               max_len=longest + 2)
        targets = [tgt_vocab.decode(tgt_vocab.encode(target)) for _, target in test]
        runs[label] = history, float(np.mean([o == t for o, t in zip(outputs, targets)]))
    return runs


def draw_training(histories: dict, *, baseline: float | None = None, title: str = "",
                  width: float = kit.DESKTOP_WIDTH_IN):
    """Loss per step of each run, with an optional horizontal reference line."""
    phone = kit.narrow(width)
    fig, ax = plt.subplots(figsize=(width, 3.6 if phone else 3.2), dpi=kit.DPI,
                           layout="constrained")
    for (label, history), color in zip(histories.items(), ("z", "value", "key")):
        ax.plot(np.arange(len(history.loss)), history.loss, label=label, color=kit.COLORS[color])
    if baseline is not None:
        ax.axhline(baseline, color=kit.COLORS["muted"], linestyle="--", linewidth=1,
                   label="knows only how often each token occurs")
    ax.set_xlabel("training step", fontsize=9)
    ax.set_ylabel("loss (nats per token)", fontsize=9)
    ax.tick_params(labelsize=9)
    if phone:  # under the plot, where it hides no curve
        ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    else:
        ax.legend(fontsize=9)
    ax.set_title(kit.wrap(title, 44) if phone else title, fontsize=10)
    return fig


#: The pre-LN layer figure's alt text (chapter 06 shows the call, not this sentence).
PRE_LN_ALT = ("Encoder layer 0 from bottom to top: LayerNorm, self-attention, Add, LayerNorm, one "
              "feed-forward network per word, Add; a dashed residual goes around each LayerNorm "
              "and sub-layer into its Add box")
