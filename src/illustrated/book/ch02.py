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

__all__ = ["small_encoder_layer", "encoder_vectors", "draw_vectors", "draw_flow", "flow_alt",
           "perturbation", "draw_perturbation"]

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


def draw_vectors(vectors, words, *, title: str = "", width: float = kit.DESKTOP_WIDTH_IN):
    """One row of boxes per word, each box a number of its vector coloured by value."""
    vectors = np.asarray(vectors, dtype=np.float64)
    seq, d = vectors.shape
    phone = kit.narrow(width)
    fig, ax = plt.subplots(figsize=(width, (0.9 if phone else 0.5) + 0.42 * seq), dpi=kit.DPI,
                           layout="constrained")
    limit = float(np.abs(vectors).max())
    image = kit.heatmap(ax, vectors, row_labels=words, col_labels=[], cmap=kit.DIVERGING_CMAP,
                        vmin=-limit, vmax=limit, label_fontsize=10 if phone else 11,
                        aspect="auto" if phone else "equal")
    for j in range(1, d):
        ax.axvline(j - 0.5, color="white", linewidth=0.5 if phone else 1)
    for i in range(1, seq):
        ax.axhline(i - 0.5, color="white", linewidth=6)
    ax.tick_params(length=0)
    ax.set_frame_on(False)
    ax.set_xlabel(f"{d} numbers per word (d_model = {d})", fontsize=9)
    if title:
        ax.set_title(title, fontsize=10 if phone else 11)
    kit.colorbar(fig, image, ax, label="value", below=phone)
    return fig


def _vector(ax, values, x0, y0, cols, cell_w, cell_h, color, norm, write, fontsize):
    """A vector as a block of cells, ``cols`` to a row (one row: the post's strip), from the
    top left; each cell coloured by value, or in ``color`` with its value written in it."""
    cmap = plt.get_cmap(kit.DIVERGING_CMAP)
    rows = -(-len(values) // cols)
    for j, v in enumerate(values):
        x, y = x0 + (j % cols) * cell_w, y0 + (rows - 1 - j // cols) * cell_h
        ax.add_patch(Rectangle((x, y), cell_w, cell_h, facecolor=color if write else cmap(norm(v)),
                               edgecolor="white", linewidth=1 if write else 0.3))
        if write:
            ax.text(x + cell_w / 2, y + cell_h / 2, kit.format_value(v), ha="center",
                    va="center", fontsize=fontsize, color=_INK)
    ax.add_patch(Rectangle((x0, y0), cell_w * cols, cell_h * rows, fill=False, edgecolor=color,
                           linewidth=1.8))


class _FlowLayout:
    """Where draw_flow puts everything, in inches: the cells of a vector, one column per
    position (its name, its block of cells, a gap), and the rows from the words up to r."""

    band = 0.24  # an add & norm, across every position

    def __init__(self, seq: int, d: int, width: float, values: bool, title: str):
        self.seq, self.d, self.phone = seq, d, kit.narrow(width)
        self.name_w, self.gap = (0.25, 0.12) if self.phone else (0.32, 0.2)  # "x0" left of each
        self._cells(width, values)
        self._rows(values, title)

    def _cells(self, width: float, values: bool) -> None:
        """The cell size, the cells a row and the figure's width: with ``values`` the numbers
        written in their cells, at 9 pt, folded in a phone's column; without, coloured cells
        filling the width beside (or above) the colour bar, a long vector folded 8 a row in a
        phone's column."""
        seq, d, phone = self.seq, self.d, self.phone
        if values:
            self.cell_w, self.cell_h = (0.5, 0.3) if phone else (0.55, 0.42)
            room = (width - 0.1) / seq - self.name_w - self.gap
            self.cols = d if not phone else max(1, min(d, int(room // self.cell_w)))
            self.fig_w = min(width, 0.1 + seq * (self.name_w + self.cols * self.cell_w + self.gap))
            self.bar = 0.0
        else:
            self.fig_w, self.bar = width, (0.0 if phone else 0.9)  # colour bar: below, or right
            self.cols = 8 if phone and d % 8 == 0 and d > 8 else d
        self.col_w = (self.fig_w - self.bar - 0.05) / seq
        self.block_w = self.col_w - self.name_w - self.gap
        if not values:
            self.cell_w = self.block_w / self.cols
            self.cell_h = self.cell_w if self.cols < d else 0.35
        self.block_h = self.cell_h * -(-d // self.cols)

    def _rows(self, values: bool, title: str) -> None:
        """From the bottom: the words, x, self-attention, z, add & norm, feed forward, add &
        norm, r, the title; and each position's column from the left."""
        self.base = 0.65 if self.phone and not values else 0.05  # room for the colour bar below
        self.ys = {"x": self.base + 0.3}
        self.attn_y = self.ys["x"] + self.block_h + 0.22
        self.ys["z"] = self.attn_y + 0.55 + 0.22
        self.norm_y = [self.ys["z"] + self.block_h + 0.16]
        self.ffn_y = self.norm_y[0] + self.band + 0.16
        self.norm_y.append(self.ffn_y + 0.42 + 0.16)
        self.ys["r"] = self.norm_y[1] + self.band + 0.16
        self.fig_h = self.ys["r"] + self.block_h + (0.4 if title else 0.08)
        self.left = [0.05 + i * self.col_w + self.name_w for i in range(self.seq)]
        self.mid = [lx + self.block_w / 2 for lx in self.left]


def _draw_flow_bands(ax, lay: _FlowLayout) -> None:
    """What spans every position: self-attention (a line from every input to every output) and
    the two add & norm steps (chapter 06's)."""
    left, mid, block_w = lay.left, lay.mid, lay.block_w
    span, centre = left[-1] + block_w - left[0] + 0.12, (left[0] + left[-1] + block_w) / 2
    ax.add_patch(Rectangle((left[0] - 0.06, lay.attn_y), span, 0.55,
                           facecolor=kit.COLORS["attention"], edgecolor=_INK))
    for i in range(lay.seq):
        for j in range(lay.seq):  # self-attention: every input reaches every output
            ax.plot([mid[i], mid[j]], [lay.attn_y, lay.attn_y + 0.55], color=_INK, alpha=0.35,
                    linewidth=0.8)
    ax.text(centre, lay.attn_y + 0.275, "Self-Attention", ha="center",
            va="center", fontsize=10 if lay.phone else 11, fontweight="bold", color=_INK,
            bbox={"facecolor": kit.COLORS["attention"], "edgecolor": "none", "pad": 2})
    for y, what in zip(lay.norm_y, ("add & norm: x + z", "add & norm")):  # chapter 06's steps
        ax.add_patch(Rectangle((left[0] - 0.06, y), span, lay.band,
                               facecolor=kit.COLORS["norm"], edgecolor=_INK, linewidth=0.8))
        ax.text(centre, y + lay.band / 2, what, ha="center",
                va="center", fontsize=9, color=_INK,
                bbox={"facecolor": kit.COLORS["norm"], "edgecolor": "none", "pad": 1})


def _draw_flow_position(ax, lay: _FlowLayout, i: int, word: str, arrays: dict, norm,
                        values: bool) -> None:
    """Position ``i``'s column: its word, its vectors x, z and r named, the arrows up through the
    layer and its own box of the feed-forward network."""
    mid, left, block_w, ys = lay.mid[i], lay.left[i], lay.block_w, lay.ys
    ax.text(mid, lay.base + 0.14, word, ha="center", va="center",
            fontsize=10 if lay.phone else 11, color=_INK)
    for name, array in arrays.items():
        _vector(ax, array[i], left, ys[name], lay.cols, lay.cell_w, lay.cell_h, ROLES[name], norm,
                values, 9)
        ax.text(left - 0.05, ys[name] + lay.block_h / 2, f"{name}{i}", ha="right",
                va="center", fontsize=9 if lay.phone else 10, style="italic", color=_INK)
    top = {name: ys[name] + lay.block_h for name in ys}
    for y0, y1 in ((top["x"], lay.attn_y), (lay.attn_y + 0.55, ys["z"]),
                   (top["z"], lay.norm_y[0]), (lay.norm_y[0] + lay.band, lay.ffn_y),
                   (lay.ffn_y + 0.42, lay.norm_y[1]), (lay.norm_y[1] + lay.band, ys["r"])):
        kit.arrow(ax, (mid, y0), (mid, y1))
    narrow_box = block_w < 1.3
    kit.box(ax, left - 0.06, lay.ffn_y, block_w + 0.12, 0.42,
            "Feed\nForward" if narrow_box else "Feed Forward", kit.COLORS["ffn"],
            fontsize=9 if narrow_box else (10 if block_w > 2.2 else 9),
            rounding=0.08).set_gid(f"ffn-{i}")


def draw_flow(x, z, r, words, *, values: bool = False, limit: float | None = None,
              title: str = "", width: float = kit.DESKTOP_WIDTH_IN):
    """The post's encoder with tensors: x into one self-attention (every input reaches every
    output), z through an add & norm into the same feed-forward network at each position, and
    through another add & norm, r out (the layer's output). Each vector is a strip of cells; in
    a phone's column a long one is folded into a block of 8 cells a row (of 2 with values)."""
    arrays = {"x": np.asarray(x), "z": np.asarray(z), "r": np.asarray(r)}
    lay = _FlowLayout(*arrays["x"].shape, width, values, title)
    fig_w, fig_h, bar = lay.fig_w, lay.fig_h, lay.bar
    fig, ax = kit.canvas((fig_w, fig_h), (0, fig_w), (0, fig_h),
                         rect=(0, 0, (fig_w - bar) / fig_w, 1))
    ax.set_xlim(0, fig_w - bar)
    limit = limit or max(float(np.abs(a).max()) for a in arrays.values())
    norm = Normalize(-limit, limit)
    _draw_flow_bands(ax, lay)
    for i in range(lay.seq):
        _draw_flow_position(ax, lay, i, words[i], arrays, norm, values)
    if title:
        ax.text((fig_w - bar) / 2, fig_h - 0.2, title, ha="center", va="center",
                fontsize=10 if lay.phone else 11, color=_INK)
    if not values:
        kit.colorbar(fig, ScalarMappable(norm, kit.DIVERGING_CMAP), ax, label="value",
                     below=lay.phone)
        if lay.phone:  # the bar under the words, not under the whole canvas
            fig.axes[-1].set_position((0.15, 0.42 / fig_h, 0.7, 0.1 / fig_h))
    return fig


def flow_alt(x, z, r, words) -> str:
    """draw_flow(values=True)'s alt text: each word's x, z and r as its cells write them."""
    def numbers(v):
        return ", ".join(kit.format_value(a) for a in np.asarray(v))

    return "; ".join(f"{w}: x{i} = {numbers(x[i])} becomes z{i} = {numbers(z[i])} and r{i} = "
                     f"{numbers(r[i])}" for i, w in enumerate(words))


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


def draw_perturbation(changes: dict, words, position: int, *, title: str = "",
                      width: float = kit.DESKTOP_WIDTH_IN):
    """One heatmap per sub-layer (side by side, or stacked in a phone's column): how much each
    output number moved; the nudged row framed, each row's total change written right of it."""
    phone = kit.narrow(width)
    n = len(changes)
    shape = (n, 1) if phone else (1, n)
    height = n * (0.75 + 0.3 * len(words)) + 0.9 if phone else 1.5 + 0.45 * len(words)
    fig, axes = plt.subplots(*shape, figsize=(width, height), dpi=kit.DPI, layout="constrained")
    vmax = max(float(c.max()) for c in changes.values()) or 1.0
    for ax, (name, change) in zip(axes, changes.items()):
        d = change.shape[1]
        image = kit.heatmap(ax, change, row_labels=words if phone or ax is axes[0] else [],
                            col_labels=[], vmin=0, vmax=vmax)
        ax.add_patch(Rectangle((-0.5, position - 0.5), d, 1, fill=False,
                               edgecolor=kit.COLORS["z"], linewidth=2.5))
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(f"{d} dimensions", fontsize=9)
        ax.tick_params(labelsize=9)
        for i, moved in enumerate(np.linalg.norm(change, axis=1)):
            ax.text(d - 0.5 + 0.04 * d, i, kit.format_value(moved), ha="left", va="center",
                    fontsize=9, color=_INK, clip_on=False)
    kit.colorbar(fig, image, axes, label="|change|", below=phone)
    if title:
        fig.suptitle(kit.wrap(title, 40) if phone else title, fontsize=10 if phone else 11)
    return fig
