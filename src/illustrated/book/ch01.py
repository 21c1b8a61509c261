"""Chapter 01, a high-level look: the model as a black box, its two components, the stacks of
layers inside them, and how many weights each part holds."""
from __future__ import annotations

from typing import NamedTuple

import torch

import illustrated as il

from . import kit

__all__ = ["draw_black_box", "draw_components", "draw_stack", "draw_layer", "ParameterRow",
           "parameter_counts", "config_parameter_counts", "parameter_table"]

_MUTED, _INK = kit.COLORS["muted"], kit.COLORS["text"]
SUBLAYERS = {"encoder": ["Self-Attention", "Feed Forward"],
             "decoder": ["Self-Attention", "Encoder-Decoder Attention", "Feed Forward"]}


def _text(ax, x, y, text, size=12, color=_INK, **kw):
    ax.text(x, y, text, ha=kw.pop("ha", "center"), va="center", fontsize=size, color=color, **kw)


def draw_black_box(source: str, target: str, *, width: float = kit.DESKTOP_WIDTH_IN):
    """The model as one box: the sentence given on the left (above, on a phone), its
    translation on the right (below)."""
    if kit.narrow(width):
        fig, ax = kit.canvas((width, 2.9), (0, 2 * width), (0, 5.8))
        mid = width
        kit.box(ax, mid - 1.9, 2.0, 3.8, 1.8, "THE\nTRANSFORMER", kit.COLORS["attention"],
                fontsize=11)
        kit.arrow(ax, (mid, 4.65), (mid, 3.8))
        kit.arrow(ax, (mid, 2.0), (mid, 1.15))
        for y, text, label, dy in ((5.05, source, "input", 0.5), (0.75, target, "output", -0.5)):
            _text(ax, mid, y, text)
            _text(ax, mid, y + dy, label, 9, _MUTED)
        return fig
    fig, ax = kit.canvas((5.6, 1.4), (0, 14), (0, 3.5))
    kit.box(ax, 4.9, 0.5, 4.0, 2.4, "THE\nTRANSFORMER", kit.COLORS["attention"], fontsize=11)
    kit.arrow(ax, (3.9, 1.7), (4.9, 1.7))
    kit.arrow(ax, (8.9, 1.7), (9.9, 1.7))
    for x, text, label, ha in ((3.75, source, "input", "right"), (10.05, target, "output", "left")):
        _text(ax, x, 1.7, text, ha=ha)
        _text(ax, x, 1.0, label, 9, _MUTED, ha=ha)
    return fig


def draw_components(source: str, target: str, n_layers: int, *,
                    width: float = kit.DESKTOP_WIDTH_IN):
    """The opened box: an encoding and a decoding component, the first feeding the second."""
    phone = kit.narrow(width)
    size = min(width, 4.8)  # the same drawing, its text a little smaller in a phone's column
    fig, ax = kit.canvas((size, size * 2 / 3), (0, 9.6), (0, 6.4))
    kit.box(ax, 0.2, 1.05, 9.2, 4.3, "", "none", dashed=True)
    _text(ax, 0.45, 5.0, "THE TRANSFORMER", 9 if phone else 10, _MUTED, ha="left",
          fontweight="bold")
    for x, name, color in ((0.6, "ENCODERS", "encoder"), (5.4, "DECODERS", "decoder")):
        kit.box(ax, x, 2.2, 3.6, 1.8, name, kit.COLORS[color], fontsize=11 if phone else 12,
                subtitle=f"a stack of {n_layers}", subtitle_size=9)
    kit.arrow(ax, (4.2, 3.1), (5.4, 3.1), color=kit.COLORS["key"], width=2)
    kit.arrow(ax, (2.4, 0.7), (2.4, 2.2))
    kit.arrow(ax, (7.2, 4.0), (7.2, 5.7))
    _text(ax, 2.4, 0.33, source, 11 if phone else 12)
    _text(ax, 7.2, 6.07, target, 11 if phone else 12)
    return fig


def draw_stack(n_layers: int, source: str, target: str, *, width: float = kit.DESKTOP_WIDTH_IN):
    """n_layers encoders and n_layers decoders; the top encoder's output feeds every decoder."""
    phone = kit.narrow(width)
    size = min(width, 4.6)
    fig, ax = kit.canvas((size, size * 9.6 / 9.2), (0, 9.2), (0, 9.6))
    bottom, top = 1.1, 8.5
    slot = (top - bottom) / n_layers
    h = min(1.0, slot * 0.62)
    centers = [bottom + (i + 0.5) * slot for i in range(n_layers)]
    for i, c in enumerate(centers):
        for x, name, color in ((0.2, "ENCODER", "encoder"), (5.6, "DECODER", "decoder")):
            kit.box(ax, x, c - h / 2, 3.4, h, f"{name} {i}", kit.COLORS[color],
                    fontsize=9 if phone else 10, rounding=0.08).set_gid(f"{color}-{i}")
            if i:
                kit.arrow(ax, (x + 1.7, centers[i - 1] + h / 2), (x + 1.7, c - h / 2))
    bus = 4.6  # the top encoder's output runs down a line that branches into every decoder
    ax.plot([3.6, bus, bus], [centers[-1], centers[-1], centers[0]], color=kit.COLORS["key"],
            linewidth=2, gid="memory-bus")
    for j, c in enumerate(centers):
        kit.arrow(ax, (bus, c), (5.6, c), color=kit.COLORS["key"], width=1.6).set_gid(
            f"memory-{j}")
    kit.arrow(ax, (1.9, 0.65), (1.9, centers[0] - h / 2))
    kit.arrow(ax, (7.3, centers[-1] + h / 2), (7.3, 8.95))
    _text(ax, 1.9, 0.3, source, 11 if phone else 12)
    _text(ax, 7.3, 9.3, target, 11 if phone else 12)
    return fig


def draw_layer(kind: str, cfg, *, width: float = kit.DESKTOP_WIDTH_IN):
    """Inside one encoder or decoder layer: its sub-layers from bottom to top, with cfg's sizes."""
    subs = SUBLAYERS[kind]
    span = 7.6 if kind == "encoder" else (9.8 if kit.narrow(width) else 10.8)  # data units
    inches = min(width, 3.8 if kind == "encoder" else 5.4)
    labels = {"Self-Attention": f"{cfg.n_heads} heads, d_model = {cfg.d_model}",
              "Encoder-Decoder Attention": f"{cfg.n_heads} heads: keys, values from the encoder",
              "Feed Forward": f"{cfg.d_model} → {cfg.d_ff} → {cfg.d_model}, each position"}
    if kind == "decoder":
        labels["Self-Attention"] = f"{cfg.n_heads} heads, masked: earlier words only"
    phone = kit.narrow(width)
    note_pt = 9 if phone else 8  # a phone's column shows the figure smaller
    chars = int(6.0 * inches / span * 15 * 8 / note_pt)  # what fits in a sub-layer's box
    labels = {sub: kit.wrap(label, chars) for sub, label in labels.items()}
    wrapped = any("\n" in label for label in labels.values())
    sub_h, step = ((2.1, 2.6) if phone else (1.5, 2.0)) if wrapped else (1.1, 1.6)
    height = 2.2 + step * len(subs)
    fig, ax = kit.canvas((inches, height * inches / span), (0, span), (0, height))
    kit.box(ax, 0.3, 0.9, 7.0, height - 1.6, "", kit.COLORS[kind], alpha=0.35)
    _text(ax, 0.55, height - 1.0, kind.upper(), 11, ha="left", fontweight="bold")
    y = 1.35
    for i, sub in enumerate(subs):
        color = kit.COLORS["ffn" if sub == "Feed Forward" else "attention"]
        kit.box(ax, 0.8, y, 6.0, sub_h, sub, color, fontsize=9.5 if phone else 10,
                subtitle=labels[sub], subtitle_size=note_pt).set_gid(sub)
        kit.arrow(ax, (3.8, y - (0.9 if i == 0 else step - sub_h)), (3.8, y))
        y += step
    kit.arrow(ax, (3.8, y - (step - sub_h)), (3.8, height))
    if kind == "decoder":  # the encoder stack's output enters from the side
        cross = 1.35 + step + sub_h / 2
        kit.arrow(ax, (span - 0.2, cross), (6.8, cross), color=kit.COLORS["key"],
                  width=2).set_gid("memory")
        _text(ax, (span + 6.8) / 2, cross + 0.55 + 0.1 * wrapped, "from the top\nencoder", 9)
    return fig


class ParameterRow(NamedTuple):
    """One line of the parameter table: a part, the weights of one copy, how many copies."""
    component: str
    part: str
    per_copy: int
    copies: int

    @property
    def total(self) -> int:
        return self.per_copy * self.copies


def _numel(*modules) -> int:
    return sum(p.numel() for m in modules for p in m.parameters())


def parameter_counts(model) -> list[ParameterRow]:
    """The weights of each part of ``model`` in the order the data flows; they sum to all."""
    n, enc, dec = model.cfg.n_layers, model.encoder.layers[0], model.decoder.layers[0]
    rows = [ParameterRow("source embeddings", "", _numel(model.src_embed), 1),
            ParameterRow("positional encoding", "(fixed sinusoids)", _numel(model.positional), 1),
            ParameterRow("encoder", "self-attention", _numel(enc.self_attn), n),
            ParameterRow("encoder", "feed-forward", _numel(enc.feed_forward), n),
            ParameterRow("encoder", "layer norms", _numel(enc.norm1, enc.norm2), n),
            ParameterRow("target embeddings", "", _numel(model.tgt_embed), 1),
            ParameterRow("decoder", "self-attention", _numel(dec.self_attn), n),
            ParameterRow("decoder", "encoder-decoder attention", _numel(dec.cross_attn), n),
            ParameterRow("decoder", "feed-forward", _numel(dec.feed_forward), n),
            ParameterRow("decoder", "layer norms", _numel(dec.norm1, dec.norm2, dec.norm3), n),
            ParameterRow("final linear", "", _numel(model.generator), 1)]
    final = _numel(model.encoder.norm, model.decoder.norm)  # pre-LN only
    return rows + ([ParameterRow("final layer norms", "(pre-LN only)", final, 1)] if final else [])


def config_parameter_counts(cfg) -> list[ParameterRow]:
    """The parameter table of a model of ``cfg``, built on the meta device (no memory used)."""
    with torch.device("meta"):
        return parameter_counts(il.modules.Transformer(cfg))


def parameter_table(rows) -> str:
    """The rows as text a phone's column holds: each part's name on a line, then its weights
    per copy × copies = total, aligned; the sum last."""
    everything = sum(r.total for r in rows)
    per = max(len("per copy"), *(len(f"{r.per_copy:,}") for r in rows))
    total = max(len(f"{everything:,}"), *(len(f"{r.total:,}") for r in rows))
    header = f"  {'per copy':>{per}} × copies = {'total':>{total}}"
    rule = "-" * len(header)
    lines = ["part", header, rule]
    for r in rows:
        lines += [f"{r.component} {r.part}".strip(),
                  f"  {r.per_copy:>{per},} × {r.copies:>6} = {r.total:>{total},}"]
    lines += [rule, f"all{everything:>{len(header) - 3},}"]
    return "\n".join(lines)
