"""Chapter 02, the tensors in the picture: words become vectors, and a list of vectors flows
through an encoder layer, mixed by self-attention, then one position at a time through the
feed-forward network."""
from __future__ import annotations

import copy
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

import illustrated as il

from . import kit

__all__ = ["small_encoder_layer", "encoder_vectors", "draw_vectors", "draw_flow", "perturbation",
           "draw_perturbation"]

_INK = kit.COLORS["text"]
ROLES = {"x": kit.COLORS["input"], "z": kit.COLORS["z"], "r": kit.COLORS["ffn"]}


def small_encoder_layer(d_model: int = 4, d_ff: int = 8, *, seed: int = 0):
    """A one-head float64 il.modules.EncoderLayer holding il.reference.init_encoder_params."""
    params = il.reference.init_encoder_params(d_model, d_ff, seed=seed)
    cfg = replace(il.TINY, d_model=d_model, n_heads=1, d_ff=d_ff, dropout=0.0)
    layer = il.modules.EncoderLayer(cfg).double().eval()
    a, f = layer.self_attn, layer.feed_forward
    with torch.no_grad():  # the reference computes x @ W + b, nn.Linear x @ weight.T + bias
        for n, linear in zip("QKVO12", (a.w_q, a.w_k, a.w_v, a.w_o, f.linear1, f.linear2)):
            linear.weight.copy_(torch.from_numpy(params[f"W_{n}"]).T)
            linear.bias.copy_(torch.from_numpy(params[f"b_{n}"]))
        for i, norm in ((1, layer.norm1), (2, layer.norm2)):
            norm.weight.copy_(torch.from_numpy(params[f"gamma_{i}"]))
            norm.bias.copy_(torch.from_numpy(params[f"beta_{i}"]))
    return layer, params


def encoder_vectors(trace, layer: int):
    """x (the layer's input), z (what self-attention outputs, before add & norm: the post's z),
    r (the layer's output) of a trace."""
    t = trace.encoder_layers[layer]
    return t.input, t.attn_block.sublayer_output, t.output


def draw_vectors(vectors, words, *, title: str = ""):
    """One row of boxes per word, each box a number of its vector coloured by value."""
    vectors = np.asarray(vectors, dtype=np.float64)
    seq, d = vectors.shape
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.42 * seq), dpi=kit.DPI, layout="constrained")
    limit = float(np.abs(vectors).max())
    image = kit.heatmap(ax, vectors, row_labels=words, col_labels=[], cmap=kit.DIVERGING_CMAP,
                        vmin=-limit, vmax=limit, label_fontsize=11, aspect="equal")
    for j in range(1, d):
        ax.axvline(j - 0.5, color="white", linewidth=1)
    for i in range(1, seq):
        ax.axhline(i - 0.5, color="white", linewidth=6)
    ax.tick_params(length=0)
    ax.set_frame_on(False)
    ax.set_xlabel(f"{d} numbers per word (d_model = {d})", fontsize=9)
    if title:
        ax.set_title(title, fontsize=11)
    kit.colorbar(fig, image, ax, label="value")
    return fig


def _vector(ax, values, x0, y0, w, color, norm, write):
    cmap = plt.get_cmap(kit.DIVERGING_CMAP)
    for j, v in enumerate(values):
        ax.add_patch(Rectangle((x0 + j * w, y0), w, 1, facecolor=color if write else cmap(norm(v)),
                               edgecolor="white", linewidth=1 if write else 0.3))
        if write:
            ax.text(x0 + (j + 0.5) * w, y0 + 0.5, kit.format_value(v), ha="center", va="center",
                    fontsize=9, color=_INK)
    ax.add_patch(Rectangle((x0, y0), w * len(values), 1, fill=False, edgecolor=color,
                           linewidth=1.8))


def draw_flow(x, z, r, words, *, values: bool = False, limit: float | None = None,
              title: str = ""):
    """The post's encoder with tensors: x into one self-attention (every input reaches every
    output), z into the same feed-forward network at each position, r out."""
    arrays = {"x": np.asarray(x), "z": np.asarray(z), "r": np.asarray(r)}
    seq, d = arrays["x"].shape
    width = 8.0 if not values else min(8.0, 0.6 + seq * (0.55 * d + 0.9))
    plot_w = width - (0 if values else 0.9)  # the colour bar's room at the right
    fig, ax = kit.canvas((width, 5.0), (0, 10 * plot_w / 5.0), (0, 10.4),
                         rect=(0, 0, plot_w / width, 1))
    col = (10 * plot_w / 5.0 - 0.6) / seq  # one column per position, 0.6 of margin
    w = (col - 1.4) / d  # the width of one box: a column less its names and gap
    left = [0.9 + i * col for i in range(seq)]
    mid = [lx + w * d / 2 for lx in left]
    limit = limit or max(float(np.abs(a).max()) for a in arrays.values())
    norm = Normalize(-limit, limit)
    ax.add_patch(Rectangle((left[0] - 0.3, 2.7), left[-1] + w * d - left[0] + 0.6, 1.8,
                           facecolor=kit.COLORS["attention"], edgecolor=_INK))
    for i in range(seq):
        for j in range(seq):  # self-attention: every input reaches every output
            ax.plot([mid[i], mid[j]], [2.7, 4.5], color=_INK, alpha=0.35, linewidth=0.8)
    ax.text((left[0] + left[-1] + w * d) / 2, 3.6, "Self-Attention", ha="center", va="center",
            fontsize=11, fontweight="bold", color=_INK,
            bbox={"facecolor": kit.COLORS["attention"], "edgecolor": "none", "pad": 2})
    for i in range(seq):
        ax.text(mid[i], 0.25, words[i], ha="center", va="center", fontsize=11, color=_INK)
        for (name, array), y in zip(arrays.items(), (1.0, 5.3, 9.3)):
            _vector(ax, array[i], left[i], y, w, ROLES[name], norm, values)
            ax.text(left[i] - 0.15, y + 0.5, f"{name}{i}", ha="right", va="center", fontsize=10,
                    style="italic", color=_INK)
        for y0, y1 in ((2.0, 2.7), (4.5, 5.3), (6.3, 7.1), (8.5, 9.3)):
            kit.arrow(ax, (mid[i], y0), (mid[i], y1))
        kit.box(ax, left[i] - 0.3, 7.1, w * d + 0.6, 1.4, "Feed Forward", kit.COLORS["ffn"],
                fontsize=10 if w * d > 2.2 else 9, rounding=0.2).set_gid(f"ffn-{i}")
    if title:
        kit.title(ax, title)
    if not values:
        kit.colorbar(fig, ScalarMappable(norm, kit.DIVERGING_CMAP), ax, label="value")
    return fig


def perturbation(layer, x, position: int, delta: float = 1.0, *, seed: int = 0):
    """|change| of each output number of self-attention, the feed-forward network and the
    whole layer when row ``position`` of its input moves by ``delta`` in a seeded direction."""
    layer = copy.deepcopy(layer).double().eval()
    x = torch.as_tensor(np.asarray(x), dtype=torch.float64)[None]  # (1, seq, d_model)
    direction = torch.from_numpy(np.random.default_rng(seed).normal(size=x.shape[-1]))
    nudge = torch.zeros_like(x)
    nudge[0, position] = delta * direction / direction.norm()
    with torch.no_grad():
        z = layer.norm1(x + layer.self_attn(x, x, x))  # what the feed-forward network gets
        changes = {"self-attention": layer.self_attn(x + nudge, x + nudge, x + nudge)
                   - layer.self_attn(x, x, x),
                   "feed-forward": layer.feed_forward(z + nudge) - layer.feed_forward(z),
                   "encoder layer": layer(x + nudge) - layer(x)}
    return {name: change[0].abs().numpy() for name, change in changes.items()}


def draw_perturbation(changes: dict, words, position: int, *, title: str = ""):
    """One heatmap per sub-layer: how much each output number moved; the nudged row framed."""
    fig, axes = plt.subplots(1, len(changes), figsize=(8, 1.5 + 0.45 * len(words)), dpi=kit.DPI,
                             layout="constrained")
    vmax = max(float(c.max()) for c in changes.values()) or 1.0
    for ax, (name, change) in zip(axes, changes.items()):
        d = change.shape[1]
        image = kit.heatmap(ax, change, row_labels=words if ax is axes[0] else [],
                            col_labels=[], vmin=0, vmax=vmax)
        ax.add_patch(Rectangle((-0.5, position - 0.5), d, 1, fill=False,
                               edgecolor=kit.COLORS["z"], linewidth=2.5))
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(f"{d} dimensions", fontsize=9)
        for i, moved in enumerate(np.linalg.norm(change, axis=1)):
            ax.text(d - 0.5 + 0.04 * d, i, kit.format_value(moved), ha="left", va="center",
                    fontsize=9, color=_INK, clip_on=False)
    kit.colorbar(fig, image, axes, label="|change|")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig
