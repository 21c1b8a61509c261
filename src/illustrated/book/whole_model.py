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


class _Frame:
    """One frame of draw_whole_model being drawn: its sizes in inches (the encoder's column on
    the left, the decoder's on the right, layers stacked from ``base`` up to ``top``), its canvas,
    and the parts drawn one after another from the source words up."""

    def __init__(self, m: Motion, step: int, width: float, overview: bool):
        self.m, self.step, self.overview = m, step, overview
        self.small = small = kit.narrow(width)
        self.n, self.src, self.written = m.n_layers, len(m.source), m.target[:max(step, 0)]
        self.layer_h, self.gap = 0.42, (0.62 if small else 0.5)
        self.base = 1.3 if small else 1.15  # y of the bottom layer
        self.top = self.base + self.n * self.layer_h + (self.n - 1) * self.gap  # top of the stacks
        self.height = self.top + (2.35 if small else 1.75)
        self.fig, self.ax = kit.canvas((width, self.height), (0, width), (0, self.height))
        self.enc_x, self.dec_x = (0.06, width / 2 + 0.2) if small else (0.5, 4.1)
        self.col_w = (width / 2 - 0.3) if small else 2.4
        self.encoding, self.fs = step < 0, 9
        self.reading = ["<bos>"] + self.written  # the decoder's input so far

    def note(self, x, y, text, **kw):
        self.ax.text(x, y, text, fontsize=9 if self.small else 8, color=kw.pop("color", _MUTED),
                     **kw)

    def shape(self, x, y, *dims, **kw):  # a tensor's shape beside its arrow, but in the overview
        if not self.overview:
            self.note(x, y, _shape(*dims), **kw)

    def stack(self, x, kind: str, color: str, rows: int | None) -> None:
        """The ``kind`` layers in the column at ``x``, an arrow between each two, and (``rows``
        given) the shape (rows, d_model) beside each arrow."""
        for layer in range(self.n):
            y = self.base + layer * (self.layer_h + self.gap)
            kit.box(self.ax, x, y, self.col_w, self.layer_h, f"{kind} {layer}", color,
                    fontsize=self.fs)
            if layer:
                kit.arrow(self.ax, (x + self.col_w / 2, y - self.gap), (x + self.col_w / 2, y))
                if rows is not None:
                    self.shape(x + self.col_w / 2 + 0.06, y - self.gap / 2, rows, self.m.d_model,
                               va="center")

    def encoder(self) -> None:
        """The source words, embedded, up the encoder stack; one word per slot when they fit."""
        m, ax, enc_x, col_w, fs = self.m, self.ax, self.enc_x, self.col_w, self.fs
        inches = [(len(w) + 1) * 0.085 * fs / 9 for w in m.source]  # each word's width, about
        self.spread = sum(inches) < col_w
        # equal room for each word, or room in proportion to its length where equal is too narrow
        self.rooms = [col_w / self.src] * self.src if max(inches) * self.src < col_w else [
            col_w * w / sum(inches) for w in inches]
        self.slots = [enc_x + sum(self.rooms[:j]) + self.rooms[j] / 2 for j in range(self.src)]
        for x, word in (zip(self.slots, m.source) if self.spread
                        else [(enc_x + col_w / 2, " ".join(m.source))]):
            ax.text(x, 0.5, word, ha="center", va="center", fontsize=fs, color=_INK,
                    fontweight="bold")
        kit.arrow(ax, (enc_x + col_w / 2, 0.65), (enc_x + col_w / 2, self.base))
        self.shape(enc_x + col_w / 2 + 0.06, (0.65 + self.base) / 2, self.src, m.d_model,
                   va="center")
        self.stack(enc_x, "encoder", kit.COLORS["encoder"] if self.encoding else _OFF, self.src)

    def memory(self) -> None:
        """The memory leaves the top encoder and becomes K and V in every decoder layer."""
        m, ax, enc_x, col_w, encoding = self.m, self.ax, self.enc_x, self.col_w, self.encoding
        bus = enc_x + col_w + (0.08 if self.small else 0.35)  # "K, V" fits before a decoder
        memory_y = self.top + 0.32
        live = kit.COLORS["value"] if not encoding else kit.COLORS["encoder"]
        ax.plot([enc_x + col_w / 2, enc_x + col_w / 2, bus], [self.top, memory_y, memory_y],
                color=live, lw=2)
        ax.plot([bus, bus], [memory_y, self.base + self.layer_h / 2], color=live, lw=2)
        memory = "the encoder's output" if self.overview else f"memory {_shape(self.src, m.d_model)}"
        self.note(enc_x + 0.02, memory_y + 0.14,
                  f"{memory},{chr(10) if self.small else ' '}computed once",
                  color=_INK if encoding else _MUTED)
        labelled = not encoding and not self.overview
        for layer in range(self.n):
            y = self.base + layer * (self.layer_h + self.gap) + self.layer_h / 2
            kit.arrow(ax, (bus, y), (self.dec_x, y), color=live, width=2)
            if labelled:
                self.note(bus + 0.05, y + 0.08, "K, V", color=_INK)
        if labelled:
            self.note(bus + 0.05, self.base - 0.2, f"each {_shape(m.n_heads, self.src, m.d_k)}",
                      color=_INK)

    def decoder(self) -> None:
        """The decoder's input so far, up the decoder stack, out through Linear + softmax."""
        m, ax, dec_x, col_w, fs = self.m, self.ax, self.dec_x, self.col_w, self.fs
        encoding, small, mid = self.encoding, self.small, dec_x + col_w / 2
        ax.text(mid, 0.5, " ".join(self.reading) if not encoding else "<bos>",
                ha="center", va="center", fontsize=fs, color=_INK if not encoding else _MUTED,
                wrap=True)
        kit.arrow(ax, (mid, 0.65), (mid, self.base))
        if not encoding:
            self.shape(mid + 0.06, (0.65 + self.base) / 2, len(self.reading), m.d_model,
                       va="center")
        self.stack(dec_x, "decoder", _OFF if encoding else kit.COLORS["decoder"],
                   None if encoding else len(self.reading))
        out_y = self.top + 0.42
        kit.arrow(ax, (mid, self.top), (mid, out_y))
        beside = mid + (-0.06 if small else 0.06)  # left of the arrow where the edge is near
        if not self.overview:
            self.note(beside, self.top + 0.2, f"last row {_shape(m.d_model)}", va="center",
                      ha="right" if small else "left")
        kit.box(ax, dec_x, out_y, col_w, 0.4, "Linear + softmax",
                _OFF if encoding else kit.COLORS["output"], fontsize=fs, bold=False)
        self.word_y = out_y + 0.4 + (0.5 if small else 0.38)
        kit.arrow(ax, (mid, out_y + 0.4), (mid, self.word_y - 0.12))
        self.note(beside, out_y + 0.6,
                  "a probability\nper English word" if self.overview
                  else f"{m.vocab_size} probabilities",
                  va="center", ha="right" if small else "left")

    def word_written(self) -> str:
        """The step's word and its probability, where it looked in the source and (on a
        desktop) the word going back in; the frame's title."""
        m, ax, step, word_y = self.m, self.ax, self.step, self.word_y
        word = m.target[step]
        ax.text(self.dec_x + self.col_w / 2, word_y, f"{word}   p = {m.probs[step]:.2f}",
                ha="center", va="bottom", fontsize=self.fs + 2, fontweight="bold",
                color=kit.COLORS["z"])
        if self.spread:  # where this step looked in the source: bars under the words
            for x, room, w in zip(self.slots, self.rooms, m.attention[step]):
                half = min(0.2, 0.4 * room)
                ax.plot([x - half, x + half], [0.3, 0.3], color=kit.COLORS["value"],
                        alpha=max(w, 0.05), lw=6, solid_capstyle="butt")
            self.note(self.enc_x, 0.1, "blue: where this step looks in the source", va="center")
        if not self.small:  # the word written comes back as the decoder's next input
            right = self.dec_x + self.col_w + 0.2
            ax.plot([right - 0.1, right, right], [word_y + 0.1, word_y + 0.1, 0.5], ls="--",
                    color=_MUTED, lw=1)
            kit.arrow(ax, (right, 0.5), (self.dec_x + self.col_w / 2 + 0.75, 0.5), color=_MUTED)
            self.note(right + 0.06, (word_y + 0.2) / 2, "fed back in\nat the next step",
                      va="center")
        return f"step {step}: reads {' '.join(self.reading)}, writes '{word}'"

    def headings(self, title: str) -> None:
        self.ax.text(self.enc_x, self.height - 0.2, title, ha="left", va="center",
                     fontsize=self.fs + 1, color=_INK, fontweight="bold", wrap=True)
        self.note(self.enc_x, self.height - 0.48,
                  "written so far: " + (" ".join(self.written) or "nothing yet"), va="center")


def draw_whole_model(m: Motion, step: int, *, width: float = kit.DESKTOP_WIDTH_IN,
                     overview: bool = False):
    """Frame ``step`` (-1: the encoder runs; t: the decoder writes word t) of the whole model;
    an ``overview`` (the front page's, before any chapter) names no shape and no K and V."""
    frame = _Frame(m, step, width, overview)
    frame.encoder()
    frame.memory()
    frame.decoder()
    frame.headings("the encoder reads the whole sentence once" if frame.encoding
                   else frame.word_written())
    return frame.fig


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
