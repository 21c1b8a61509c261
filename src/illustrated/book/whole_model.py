"""The whole model in motion (chapter 07, previewed in chapter 01), the post's decoding animation
drawn from a shipped model: the source goes once through the encoder stack, the top encoder's
output becomes K and V for every decoder layer, and the decoder writes one word per step, with
the tensors' shapes on the arrows. Frames at build time; the page's ``wholemodel`` kind
(site/js/wholemodel.js) draws the same picture for a sentence the reader types."""
from __future__ import annotations

import functools

import ipywidgets as widgets
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.backends.backend_agg import RendererAgg

import illustrated as il

from . import interactive as ia
from . import kit

__all__ = ["Motion", "motion", "step_labels", "draw_whole_model", "whole_model_figure",
           "whole_model_widget"]

_INK, _MUTED, _OFF = kit.COLORS["text"], kit.COLORS["muted"], kit.COLORS["off"]


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
    and the parts drawn one after another from the source words up. The source words and the
    decoder's input wrap onto rows within their column, and the headings onto lines across the
    figure, so a sentence of ``max_len`` tokens keeps every word at its size inside the figure
    (the stacks are lifted by the extra rows, the headings raise the top)."""

    def __init__(self, m: Motion, step: int, width: float, overview: bool):
        self.m, self.step, self.overview = m, step, overview
        self.small = small = kit.narrow(width)
        self.n, self.src, self.written = m.n_layers, len(m.source), m.target[:max(step, 0)]
        self.encoding, self.fs, self.note_fs = step < 0, 9, (9 if small else 8)
        self.reading = _reading(m, step)  # the decoder's input so far
        self.enc_x, self.dec_x = (0.06, width / 2 + 0.2) if small else (0.5, 4.1)
        self.col_w = (width / 2 - 0.3) if small else 2.4
        self.slots = _slots(m.source, self.col_w, self.fs)  # (row, centre, room) of each word
        # Every frame of a sentence is as tall as its tallest (the last step's): no jump as the
        # slider moves.
        last, room = len(m.target) - 1, width - self.enc_x - 0.05
        self.input_rows, rows = (_lines(_reading(m, s), self.col_w, self.fs) for s in (step, last))
        self.title, titles = (_lines(_title(m, s).split(" "), room, self.fs + 1, bold=True)
                              for s in (step, last))
        self.so_far, so_fars = (_lines(_so_far(m, s).split(" "), room, self.note_fs)
                                for s in (step, last))
        rows = max(self.slots[-1][0] + 1, len(self.input_rows), len(rows))
        self.words_y = 0.5 + (rows - 1) * _ROW_H  # y of the first row of words (the last at 0.5)
        self.layer_h, self.gap = 0.42, (0.62 if small else 0.5)
        self.base = (1.3 if small else 1.15) + self.words_y - 0.5  # y of the bottom layer
        self.top = self.base + self.n * self.layer_h + (self.n - 1) * self.gap  # top of the stacks
        self.word_y = self.top + 0.82 + (0.5 if small else 0.38)  # the word written, its bottom
        self.title_h = _lines_h(max(len(self.title), len(titles)), self.fs + 1, bold=True) + 0.08
        self.height = self.word_y + 0.3 + self.title_h + _lines_h(
            max(len(self.so_far), len(so_fars)), self.note_fs) + 0.12
        self.fig, self.ax = kit.canvas((width, self.height), (0, width), (0, self.height))

    def note(self, x, y, text, **kw):
        self.ax.text(x, y, text, fontsize=self.note_fs, color=kw.pop("color", _MUTED),
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
        """The source words, embedded, up the encoder stack; one word per slot, in rows."""
        m, ax, enc_x, col_w, fs = self.m, self.ax, self.enc_x, self.col_w, self.fs
        for (row, x, _), word in zip(self.slots, m.source):
            ax.text(enc_x + x, self.words_y - row * _ROW_H, word, ha="center", va="center",
                    fontsize=fs, color=_INK, fontweight="bold")
        kit.arrow(ax, (enc_x + col_w / 2, self.words_y + 0.15), (enc_x + col_w / 2, self.base))
        self.shape(enc_x + col_w / 2 + 0.06, (self.words_y + 0.15 + self.base) / 2, self.src,
                   m.d_model, va="center")
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
        one_row = len(self.input_rows) == 1  # centred under the stack, or rows from its left
        for row, line in enumerate(self.input_rows):
            ax.text(mid if one_row else dec_x, self.words_y - row * _ROW_H, line,
                    ha="center" if one_row else "left", va="center", fontsize=fs,
                    color=_INK if not encoding else _MUTED)
        kit.arrow(ax, (mid, self.words_y + 0.15), (mid, self.base))
        if not encoding:
            self.shape(mid + 0.06, (self.words_y + 0.15 + self.base) / 2, len(self.reading),
                       m.d_model, va="center")
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
        kit.arrow(ax, (mid, out_y + 0.4), (mid, self.word_y - 0.12))
        self.note(beside, out_y + 0.6,
                  "a probability\nper English word" if self.overview
                  else f"{m.vocab_size} probabilities",
                  va="center", ha="right" if small else "left")

    def word_written(self) -> None:
        """The step's word and its probability, where it looked in the source and (on a
        desktop) the word going back in."""
        m, ax, step, word_y = self.m, self.ax, self.step, self.word_y
        said = f"{m.target[step]}   p = {m.probs[step]:.2f}"
        # centred over the decoder, moved in where a long word would pass the figure's edge
        half = _inches(said, self.fs + 2, bold=True) / 2 + 0.05
        x = min(self.dec_x + self.col_w / 2, self.fig.get_figwidth() - half)
        ax.text(x, word_y, said, ha="center", va="bottom", fontsize=self.fs + 2,
                fontweight="bold", color=kit.COLORS["z"])
        for (row, x, room), w in zip(self.slots, m.attention[step]):  # bars under the words
            y, half = self.words_y - row * _ROW_H - 0.2, min(0.2, 0.4 * room)
            ax.plot([self.enc_x + x - half, self.enc_x + x + half], [y, y],
                    color=kit.COLORS["value"], alpha=max(w, 0.05), lw=6, solid_capstyle="butt")
        self.note(self.enc_x, 0.1, "blue: where this step looks in the source", va="center")
        if not self.small:  # the word written comes back as the decoder's next input
            right = self.dec_x + self.col_w + 0.2
            last, y = self.input_rows[-1], self.words_y - (len(self.input_rows) - 1) * _ROW_H
            end = (self.dec_x + _inches(last, self.fs) if len(self.input_rows) > 1
                   else self.dec_x + (self.col_w + _inches(last, self.fs)) / 2)
            ax.plot([right - 0.1, right, right], [word_y + 0.1, word_y + 0.1, y], ls="--",
                    color=_MUTED, lw=1)
            kit.arrow(ax, (right, y), (min(end + 0.1, right - 0.05), y), color=_MUTED)
            self.note(right + 0.06, (word_y + 0.2 + self.words_y - 0.5) / 2,
                      "fed back in\nat the next step",
                      va="center")

    def headings(self) -> None:
        """The frame's title and the words written so far, each on as many lines as it needs."""
        title_y = self.height - 0.12
        self.ax.text(self.enc_x, title_y, "\n".join(self.title), ha="left", va="top",
                     fontsize=self.fs + 1, color=_INK, fontweight="bold")
        self.note(self.enc_x, title_y - self.title_h,
                  "\n".join(self.so_far), va="top")


def _reading(m: Motion, step: int) -> list[str]:
    """The decoder's input at ``step``: <bos> and the words written before it."""
    return ["<bos>"] + m.target[:max(step, 0)]


def _title(m: Motion, step: int) -> str:
    if step < 0:
        return "the encoder reads the whole sentence once"
    return f"step {step}: reads {' '.join(_reading(m, step))}, writes '{m.target[step]}'"


def _so_far(m: Motion, step: int) -> str:
    return "written so far: " + (" ".join(m.target[:max(step, 0)]) or "nothing yet")


_AGG = RendererAgg(1, 1, kit.DPI)  # measures text as the book's pictures draw it
_ROW_H = 0.36  # inches from one row of words to the next (a word, then its attention bar)


@functools.cache
def _lines_h(lines: int, fontsize: float, bold: bool = False) -> float:
    """How tall ``lines`` lines of ``fontsize`` text are drawn, in inches."""
    text = Figure(dpi=kit.DPI).text(0, 0, "\n".join(["Élpg"] * lines), fontsize=fontsize,
                                    fontweight="bold" if bold else "normal")
    return text.get_window_extent(_AGG).height / kit.DPI


def _inches(text: str, fontsize: float, bold: bool = False) -> float:
    """How wide ``text`` is drawn at ``fontsize`` points, in inches."""
    prop = FontProperties(size=fontsize, weight="bold" if bold else "normal")
    return _AGG.get_text_width_height_descent(text, prop, ismath=False)[0] / kit.DPI


def _lines(words: list[str], room: float, fontsize: float, bold: bool = False) -> list[str]:
    """``words`` joined by spaces into lines at most ``room`` inches wide (a word wider than
    ``room`` alone on its line)."""
    lines = [words[0]]
    for word in words[1:]:
        longer = f"{lines[-1]} {word}"
        if _inches(longer, fontsize, bold) <= room:
            lines[-1] = longer
        else:
            lines.append(word)
    return lines


def _slots(words: list[str], room: float, fontsize: float) -> list[tuple[int, float, float]]:
    """Each word's (row, centre, width), in inches from the column's left: one row of equal
    slots, or slots as wide as their words, where equal ones are too narrow; rows of such slots,
    from the left, where one row is too narrow."""
    inches = [_inches(w, fontsize, bold=True) + _inches(" ", fontsize, bold=True) * 2
              for w in words]
    if sum(inches) <= room:
        widths = [room / len(words)] * len(words) if max(inches) * len(words) <= room else [
            room * w / sum(inches) for w in inches]
        return [(0, sum(widths[:j]) + widths[j] / 2, widths[j]) for j in range(len(words))]
    slots, row, x = [], 0, 0.0
    for w in inches:
        if x and x + w > room:
            row, x = row + 1, 0.0
        slots.append((row, x + w / 2, w))
        x += w
    return slots


def draw_whole_model(m: Motion, step: int, *, width: float = kit.DESKTOP_WIDTH_IN,
                     overview: bool = False):
    """Frame ``step`` (-1: the encoder runs; t: the decoder writes word t) of the whole model;
    an ``overview`` (the front page's, before any chapter) names no shape and no K and V."""
    frame = _Frame(m, step, width, overview)
    frame.encoder()
    frame.memory()
    frame.decoder()
    if not frame.encoding:
        frame.word_written()
    frame.headings()
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
