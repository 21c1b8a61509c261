"""The whole model in motion (chapter 07, previewed in chapter 01), the post's decoding animation
drawn from a shipped model: the source goes once through the encoder stack, the top encoder's
output becomes K and V for every decoder layer, and the decoder writes one word per step, with
the tensors' shapes on the arrows. Frames at build time; the page's ``wholemodel`` kind
(site/js/wholemodel.js) draws the same picture for a sentence the reader types."""
from __future__ import annotations

import ipywidgets as widgets

import illustrated as il

from . import interactive as ia
from . import kit

__all__ = ["Motion", "motion", "step_labels", "draw_whole_model", "whole_model_figure",
           "whole_model_widget"]

_INK, _MUTED, _OFF = kit.COLORS["text"], kit.COLORS["muted"], "#eceff1"


class Motion:
    """What the picture needs from one translation: the words, the sizes, and per step the
    word written, its probability and the top decoder layer's attention (mean of heads)."""

    def __init__(self, source, target, n_layers, n_heads, d_model, vocab_size, probs, attention):
        self.source, self.target = list(source), list(target)
        self.n_layers, self.n_heads, self.d_model = n_layers, n_heads, d_model
        self.d_k, self.vocab_size = d_model // n_heads, vocab_size
        self.probs, self.attention = list(probs), [list(row) for row in attention]


def motion(model, sentence: str, src_vocab, tgt_vocab) -> Motion:
    """Greedy decoding of ``sentence`` by ``model``, read off il.trace."""
    t = il.trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    cfg = model.cfg
    probs = [float(t.probs[i, word]) for i, word in enumerate(t.target_ids)]
    attention = t.cross_attention()[-1].mean(axis=0)  # (tgt_len, src_len), top decoder layer
    return Motion(t.source_tokens, t.target_tokens, cfg.n_layers, cfg.n_heads, cfg.d_model,
                  cfg.tgt_vocab_size, probs, attention)


def step_labels(m: Motion) -> list[tuple[str, int]]:
    """The frames: encoding (-1), then one per word written (0, 1, ...)."""
    return [("encode", -1)] + [(f"{t}: {w}", t) for t, w in enumerate(m.target)]


def _shape(*dims) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


def draw_whole_model(m: Motion, step: int, *, width: float = kit.DESKTOP_WIDTH_IN,
                     overview: bool = False):
    """Frame ``step`` (-1: the encoder runs; t: the decoder writes word t) of the whole model;
    an ``overview`` (the front page's, before any chapter) names no shape, no K and V and no
    <bos>: the decoder's first input is written "(start)"."""
    small = kit.narrow(width)
    start = "(start)" if overview else "<bos>"
    n, src, written = m.n_layers, len(m.source), m.target[:max(step, 0)]
    layer_h, gap = 0.42, (0.62 if small else 0.5)
    base = 1.3 if small else 1.15  # y of the bottom layer
    top = base + n * layer_h + (n - 1) * gap  # y of the top of the stacks
    height = top + (2.35 if small else 1.75)
    fig, ax = kit.canvas((width, height), (0, width), (0, height))
    enc_x, dec_x = (0.06, width / 2 + 0.2) if small else (0.5, 4.1)
    col_w = (width / 2 - 0.3) if small else 2.4
    encoding, fs = step < 0, 9
    c = kit.COLORS

    def note(x, y, text, **kw):
        ax.text(x, y, text, fontsize=9 if small else 8, color=kw.pop("color", _MUTED), **kw)

    def shape(x, y, *dims, **kw):  # a tensor's shape beside its arrow, but in the overview
        if not overview:
            note(x, y, _shape(*dims), **kw)

    # the source words, embedded, up the encoder stack; one word per slot when they fit
    inches = [(len(w) + 1) * 0.085 * fs / 9 for w in m.source]  # each word's width, about
    spread = sum(inches) < col_w
    # equal room for each word, or room in proportion to its length where equal is too narrow
    rooms = [col_w / src] * src if max(inches) * src < col_w else [
        col_w * w / sum(inches) for w in inches]
    slots = [enc_x + sum(rooms[:j]) + rooms[j] / 2 for j in range(src)]
    for x, word in zip(slots, m.source) if spread else [(enc_x + col_w / 2, " ".join(m.source))]:
        ax.text(x, 0.5, word, ha="center", va="center", fontsize=fs, color=_INK,
                fontweight="bold")
    kit.arrow(ax, (enc_x + col_w / 2, 0.65), (enc_x + col_w / 2, base))
    shape(enc_x + col_w / 2 + 0.06, (0.65 + base) / 2, src, m.d_model, va="center")
    for layer in range(n):
        y = base + layer * (layer_h + gap)
        kit.box(ax, enc_x, y, col_w, layer_h, f"encoder {layer}",
                c["encoder"] if encoding else _OFF, fontsize=fs)
        if layer:
            kit.arrow(ax, (enc_x + col_w / 2, y - gap), (enc_x + col_w / 2, y))
            shape(enc_x + col_w / 2 + 0.06, y - gap / 2, src, m.d_model, va="center")
    # the memory leaves the top encoder and becomes K and V in every decoder layer
    bus = enc_x + col_w + (0.08 if small else 0.35)  # "K, V" fits between it and a decoder
    memory_y = top + 0.32
    live = c["value"] if not encoding else c["encoder"]
    ax.plot([enc_x + col_w / 2, enc_x + col_w / 2, bus], [top, memory_y, memory_y], color=live,
            lw=2)
    ax.plot([bus, bus], [memory_y, base + layer_h / 2], color=live, lw=2)
    memory = "the encoder's output" if overview else f"memory {_shape(src, m.d_model)}"
    note(enc_x + 0.02, memory_y + 0.14, f"{memory},{chr(10) if small else ' '}computed once",
         color=_INK if encoding else _MUTED)
    for layer in range(n):
        y = base + layer * (layer_h + gap) + layer_h / 2
        kit.arrow(ax, (bus, y), (dec_x, y), color=live, width=2)
        if not encoding and not overview:
            note(bus + 0.05, y + 0.08, "K, V", color=_INK)
    if not encoding and not overview:
        note(bus + 0.05, base - 0.2, f"each {_shape(m.n_heads, src, m.d_k)}", color=_INK)
    # the decoder's input so far, up the decoder stack, out through Linear + softmax
    reading = [start] + written
    ax.text(dec_x + col_w / 2, 0.5, " ".join(reading) if not encoding else start,
            ha="center", va="center", fontsize=fs, color=_INK if not encoding else _MUTED,
            wrap=True)
    kit.arrow(ax, (dec_x + col_w / 2, 0.65), (dec_x + col_w / 2, base))
    if not encoding:
        shape(dec_x + col_w / 2 + 0.06, (0.65 + base) / 2, len(reading), m.d_model,
              va="center")
    for layer in range(n):
        y = base + layer * (layer_h + gap)
        kit.box(ax, dec_x, y, col_w, layer_h, f"decoder {layer}",
                _OFF if encoding else c["decoder"], fontsize=fs)
        if layer:
            kit.arrow(ax, (dec_x + col_w / 2, y - gap), (dec_x + col_w / 2, y))
            if not encoding:
                shape(dec_x + col_w / 2 + 0.06, y - gap / 2, len(reading), m.d_model,
                      va="center")
    out_y = top + 0.42
    kit.arrow(ax, (dec_x + col_w / 2, top), (dec_x + col_w / 2, out_y))
    if not overview:  # left of the arrow in a phone's column, where the right edge is near
        note(dec_x + col_w / 2 + (-0.06 if small else 0.06), top + 0.2,
             f"last row {_shape(m.d_model)}", va="center", ha="right" if small else "left")
    kit.box(ax, dec_x, out_y, col_w, 0.4, "Linear + softmax", _OFF if encoding else c["output"],
            fontsize=fs, bold=False)
    word_y = out_y + 0.4 + (0.5 if small else 0.38)
    kit.arrow(ax, (dec_x + col_w / 2, out_y + 0.4), (dec_x + col_w / 2, word_y - 0.12))
    note(dec_x + col_w / 2 + (-0.06 if small else 0.06), out_y + 0.6,
         "a probability\nper English word" if overview else f"{m.vocab_size} probabilities",
         va="center", ha="right" if small else "left")
    if encoding:
        title = "the encoder reads the whole sentence once"
    else:
        word = m.target[step]
        ax.text(dec_x + col_w / 2, word_y, f"{word}   p = {m.probs[step]:.2f}", ha="center",
                va="bottom", fontsize=fs + 2, fontweight="bold", color=c["z"])
        title = f"step {step}: reads {' '.join(reading)}, writes '{word}'"
        if spread:  # where this step looked in the source: bars under the words
            for x, room, w in zip(slots, rooms, m.attention[step]):
                half = min(0.2, 0.4 * room)
                ax.plot([x - half, x + half], [0.3, 0.3], color=c["value"], alpha=max(w, 0.05),
                        lw=6, solid_capstyle="butt")
            note(enc_x, 0.1, "blue: where this step looks in the source", va="center")
        if not small:  # the word written comes back as the decoder's next input
            right = dec_x + col_w + 0.2
            ax.plot([right - 0.1, right, right], [word_y + 0.1, word_y + 0.1, 0.5], ls="--",
                    color=_MUTED, lw=1)
            kit.arrow(ax, (right, 0.5), (dec_x + col_w / 2 + 0.75, 0.5), color=_MUTED)
            note(right + 0.06, (word_y + 0.2) / 2, "fed back in\nat the next step",
                 va="center")
    ax.text(enc_x, height - 0.2, title, ha="left", va="center", fontsize=fs + 1, color=_INK,
            fontweight="bold", wrap=True)
    note(enc_x, height - 0.48, "written so far: " + (" ".join(written) or "nothing yet"),
         va="center")
    return fig


def whole_model_figure(m: Motion, *, alt: str = ""):
    """The frames: a step slider (encoding, then one step per word written) and play."""
    labels = step_labels(m)
    alt = alt or (f"'{' '.join(m.source)}' through {m.n_layers} encoder layers once, the memory "
                  f"handed as K and V to each of {m.n_layers} decoder layers, and the decoder "
                  f"writing '{' '.join(m.target)}' one word per step, with the tensors' shapes")
    return ia.interactive(lambda step, width: draw_whole_model(m, step, width=width),
                          [ia.slider("step", labels, -1)], play=True, alt=alt)


def whole_model_widget(corpus: str, model, src_vocab, tgt_vocab, sentence: str):
    """The frames for ``sentence`` inside the page's ``wholemodel`` widget, which draws the same
    picture for a sentence the reader types; in Jupyter and Colab a sentence box, a step slider
    and play that redraw the Python figure."""
    frames = whole_model_figure(motion(model, sentence, src_vocab, tgt_vocab))

    def kernel():
        box = widgets.Text(value=sentence, description="sentence", continuous_update=False)
        step = widgets.IntSlider(min=-1, value=-1, description="step")
        play = widgets.Play(min=-1, interval=900, description="play")
        widgets.jslink((play, "value"), (step, "value"))
        state = {}

        def show(control):
            if control is None or control is box:
                state["m"] = motion(model, box.value, src_vocab, tgt_vocab)
                step.max = play.max = len(state["m"].target) - 1
            return draw_whole_model(state["m"], step.value)

        return ia.twin([box, [play, step]], show, watch=[box, step])

    # The page: the live container around the build-time frames, which show until the reader
    # types another sentence (site/js/wholemodel.js).
    return ia.live("wholemodel", {"corpus": corpus, "sentence": sentence}, alt=frames.alt,
                   kernel=kernel, frames=frames)
