"""The playground's numbers: train a tiny Transformer from a few settings, translate, look inside.

Everything goes through the package's own entry points (``il.presets.make_config``, ``il.train``,
``il.translate``, ``Transformer.forward(..., return_attention=True)``) and comes back as plain
Python/NumPy data for :mod:`illustrated.plots.playground`.

References: post "Go Forth And Transform" (experiment with the model), "Recap Of Training",
"The Loss Function", "The Decoder Side" (encoder-decoder attention); paper §5 (training), §3.2.3.
"""
from __future__ import annotations

import html
import time
from dataclasses import replace
from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch

from ..data import CORPORA, Vocab, load_corpus
from ..decoding import greedy_decode, prepare_source
from ..modules.transformer import Transformer
from ..presets import SETTINGS, make_config
from ..training import History, pick_device, set_seed, train, translate

__all__ = ["PLAYGROUND_KNOBS", "playground_defaults", "LossCurve", "PlaygroundRun",
           "train_playground", "TranslationRow", "translation_rows", "TranslationSummary",
           "summarize_translations", "format_translation_table",
           "CrossAttention", "cross_attention"]

#: The settings the playground lets a reader change (everything else comes from ``il.SETTINGS``).
PLAYGROUND_KNOBS = ("d_model", "n_heads", "n_layers", "lr", "steps", "label_smoothing")


def _check_corpus(corpus: object) -> str:
    if corpus not in SETTINGS:
        raise ValueError(f"corpus: expected one of {', '.join(CORPORA)}, got {corpus!r}")
    return corpus


def playground_defaults(corpus: str = "fr-en") -> dict[str, float | int]:
    """The default value of every playground knob for a corpus: its ``il.SETTINGS`` over ``il.TINY``.

    Parameters
    ----------
    corpus : str, a name of ``il.data.CORPORA``.

    Returns
    -------
    dict with the keys of :data:`PLAYGROUND_KNOBS` (``label_smoothing`` 0 unless the settings
    say otherwise).

    Raises
    ------
    ValueError
        For an unknown corpus.

    References
    ----------
    Post "Go Forth And Transform"; paper §5.3-5.4 (learning rate, label smoothing), Table 3.
    """
    settings = SETTINGS[_check_corpus(corpus)]
    cfg = make_config(corpus, Vocab(["<pad>", "<bos>", "<eos>", "<unk>"]),
                      Vocab(["<pad>", "<bos>", "<eos>", "<unk>"]))
    train_kw = {"steps": 300, "lr": 3e-3, "label_smoothing": 0.0, **settings["train"]}
    return {"d_model": cfg.d_model, "n_heads": cfg.n_heads, "n_layers": cfg.n_layers,
            "lr": float(train_kw["lr"]), "steps": int(train_kw["steps"]),
            "label_smoothing": float(train_kw["label_smoothing"])}


class LossCurve:
    """A ``train`` callback that keeps the loss of every step and reports every ``every`` steps.

    Parameters
    ----------
    every : int >= 1, how often ``on_update`` is called.
    on_update : optional function ``on_update(steps, losses)`` (e.g. a live plot), called with
        the lists so far every ``every`` steps and at the last step.
    total_steps : int, optional: the run's length, so the last step is always reported.

    Attributes
    ----------
    steps, losses : lists, one entry per training step seen.

    Raises
    ------
    ValueError
        If ``every < 1``.

    References
    ----------
    Post "Recap Of Training", "The Loss Function".
    """

    def __init__(self, every: int = 25,
                 on_update: Callable[[list[int], list[float]], None] | None = None,
                 total_steps: int | None = None) -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every: expected an int >= 1, got {every!r}")
        self.every, self.on_update, self.total_steps = every, on_update, total_steps
        self.steps: list[int] = []
        self.losses: list[float] = []

    def __call__(self, step: int, history: History) -> None:
        self.steps.append(step)
        self.losses.append(history.loss[-1])
        if self.on_update is not None and (step % self.every == 0 or step == self.total_steps):
            self.on_update(self.steps, self.losses)


class PlaygroundRun(NamedTuple):
    """One training run of the playground and everything needed to show it."""

    corpus: str
    model: Transformer
    src_vocab: Vocab
    tgt_vocab: Vocab
    history: History
    settings: dict
    """The knob values used (keys of :data:`PLAYGROUND_KNOBS`)."""
    device: str
    """Where training ran, e.g. "cpu" or "cuda"."""
    seconds: float
    """Wall-clock training time (varies from run to run)."""


def train_playground(corpus: str = "fr-en", *, d_model: int | None = None,
                     n_heads: int | None = None, n_layers: int | None = None,
                     lr: float | None = None, steps: int | None = None,
                     label_smoothing: float | None = None, device: str = "auto", seed: int = 0,
                     callback: Callable[[int, History], None] | None = None) -> PlaygroundRun:
    """Build the corpus's tiny Transformer with some settings changed, and train it on the training split.

    Unset knobs keep :func:`playground_defaults`; the other training keywords (warm-up,
    schedule, batch size) come from ``il.SETTINGS[corpus]``. When ``d_model`` changes, the
    feed-forward width ``d_ff`` keeps its ratio to ``d_model``.

    Parameters
    ----------
    corpus : str.   d_model, n_heads, n_layers : model sizes (``d_model % n_heads == 0``).
    lr : float, peak learning rate.   steps : int, optimiser steps.
    label_smoothing : float in [0, 1).   device : "auto", "cpu", "cuda" or "mps".
    seed : int.   callback : ``callback(step, history)`` after each step (e.g. a :class:`LossCurve`).

    Returns
    -------
    PlaygroundRun, its model in eval mode on ``device``.

    Raises
    ------
    ValueError
        For an unknown corpus, an invalid size (e.g. ``d_model`` not a multiple of ``n_heads``),
        a bad learning rate or step count, or a diverging run (``il.TrainingDiverged``).

    References
    ----------
    Post "Go Forth And Transform", "Recap Of Training"; paper §5.3, §5.4, Table 3.
    """
    defaults = playground_defaults(corpus)
    given = {"d_model": d_model, "n_heads": n_heads, "n_layers": n_layers, "lr": lr,
             "steps": steps, "label_smoothing": label_smoothing}
    knobs = {k: (defaults[k] if v is None else v) for k, v in given.items()}
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    base = make_config(corpus, src_vocab, tgt_vocab)
    d_ff = base.d_ff * knobs["d_model"] // base.d_model if knobs["d_model"] != base.d_model \
        else base.d_ff
    cfg = replace(base, d_model=knobs["d_model"], n_heads=knobs["n_heads"],
                  n_layers=knobs["n_layers"], d_ff=max(1, d_ff))
    chosen = pick_device(device)
    set_seed(seed)
    model = Transformer(cfg)
    train_kw = {**SETTINGS[corpus]["train"], "steps": knobs["steps"], "lr": knobs["lr"],
                "label_smoothing": knobs["label_smoothing"]}
    start = time.perf_counter()
    history = train(model, pairs, src_vocab, tgt_vocab, **train_kw, device=chosen, seed=seed,
                    callback=callback, progress=False)
    seconds = time.perf_counter() - start
    return PlaygroundRun(corpus, model, src_vocab, tgt_vocab, history, knobs, str(chosen), seconds)


class TranslationRow(NamedTuple):
    """One test sentence, its reference translation and what the model made of it."""

    source: str
    target: str
    greedy: str
    beam: str
    greedy_ok: bool
    beam_ok: bool


def translation_rows(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                     tgt_vocab: Vocab, *, beam_size: int = 4) -> list[TranslationRow]:
    """Translate every source sentence greedily and with a beam, and check each against its target.

    Parameters
    ----------
    model : Transformer.   pairs : (source, target) sentences.   src_vocab, tgt_vocab : Vocab.
    beam_size : int >= 2, the beam of the second translation.

    Returns
    -------
    list of TranslationRow, in the order of ``pairs``.

    Raises
    ------
    ValueError
        For an empty ``pairs`` or ``beam_size < 2``.

    References
    ----------
    Post, end of "The Loss Function" (greedy decoding and beam search); paper §6.1.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs: expected at least one (source, target) pair, got none")
    if not isinstance(beam_size, int) or beam_size < 2:
        raise ValueError(f"beam_size: expected an int >= 2 (1 is greedy), got {beam_size!r}")
    sources = [s for s, _ in pairs]
    targets = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]
    greedy = translate(model, sources, src_vocab, tgt_vocab)
    beam = translate(model, sources, src_vocab, tgt_vocab, beam_size=beam_size)
    return [TranslationRow(s, t, g, b, g == t, b == t)
            for s, t, g, b in zip(sources, targets, greedy, beam)]


class TranslationSummary(NamedTuple):
    """Exact match of both decoders over some translations, and the rows split by outcome."""

    greedy_exact_match: float  # fraction of rows, in [0, 1]
    beam_exact_match: float  # fraction of rows, in [0, 1]
    wrong: list[TranslationRow]  # rows that greedy decoding or the beam got wrong, in order
    right: list[TranslationRow]  # rows that both got right, in order


def summarize_translations(rows: Sequence[TranslationRow]) -> TranslationSummary:
    """Exact match of greedy decoding and of the beam, with the mistakes put apart.

    Parameters
    ----------
    rows : TranslationRow list, e.g. from :func:`translation_rows`.

    Returns
    -------
    TranslationSummary: ``wrong + right`` holds every row once, mistakes first (the table a
    reader wants to see), each part in the order of ``rows``.

    Raises
    ------
    ValueError
        If ``rows`` is empty (no exact match to compute).

    References
    ----------
    Post, end of "The Loss Function"; exact match as in :func:`illustrated.training.exact_match`.
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows: expected at least one TranslationRow, got none")
    return TranslationSummary(
        greedy_exact_match=sum(r.greedy_ok for r in rows) / len(rows),
        beam_exact_match=sum(r.beam_ok for r in rows) / len(rows),
        wrong=[r for r in rows if not (r.greedy_ok and r.beam_ok)],
        right=[r for r in rows if r.greedy_ok and r.beam_ok])


def format_translation_table(rows: Sequence[TranslationRow], *, limit: int | None = None,
                             beam_size: int | None = None, fmt: str = "markdown") -> str:
    """A table of translations: source, reference, greedy, beam, each marked right or wrong.

    Parameters
    ----------
    rows : TranslationRow list.   limit : show at most this many rows (default all).
    beam_size : named in the beam column's header when given.
    fmt : "markdown" (for ``IPython.display.Markdown`` in a notebook cell) or "html" (for an
        ``ipywidgets.Output``, whose static-page renderer shows no Markdown).

    Returns
    -------
    str: a header, then one line (Markdown) or one ``<tr>`` (HTML) per row; ✓ marks an exact
    match, ✗ a miss. HTML text is escaped.

    Raises
    ------
    ValueError
        If ``limit`` is negative or ``fmt`` is not "markdown" or "html".
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit: expected None or an int >= 0, got {limit!r}")
    if fmt not in ("markdown", "html"):
        raise ValueError(f"fmt: expected 'markdown' or 'html', got {fmt!r}")
    header = ["source", "reference", "greedy", f"beam {beam_size}" if beam_size else "beam"]
    body = [[row.source, row.target, f"{'✓' if row.greedy_ok else '✗'} {row.greedy}",
             f"{'✓' if row.beam_ok else '✗'} {row.beam}"] for row in list(rows)[:limit]]
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|---|---|---|---|"]
        return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in body])
    def tr(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"
    return ('<table border="1" class="dataframe">\n<thead>' + tr(header, "th") + "</thead>\n<tbody>\n"
            + "\n".join(tr(cells, "td") for cells in body) + "\n</tbody>\n</table>")


class CrossAttention(NamedTuple):
    """Encoder-decoder attention of one translated sentence: which source word each output word looked at."""

    weights: np.ndarray
    """Attention weights averaged over the heads of one decoder layer, (out_len, src_len); each
    row sums to 1."""
    source_tokens: list[str]
    """The source words (columns)."""
    output_tokens: list[str]
    """The output words, ``<eos>`` included (rows): row i is the position that predicted word i."""
    layer: int
    """The decoder layer used (0-based)."""


def cross_attention(model: Transformer, sentence: str, src_vocab: Vocab, tgt_vocab: Vocab, *,
                    layer: int = -1) -> CrossAttention:
    """Translate a sentence greedily, then read where each output position attended in the source.

    The greedy output is fed back as the decoder's input (``<bos>`` + output without its last
    token), so row i holds the attention of the position that produced output word i, averaged
    over the heads of decoder layer ``layer``.

    Parameters
    ----------
    model : Transformer.   sentence : str.   src_vocab, tgt_vocab : Vocab.
    layer : int, decoder layer (negative counts from the last).

    Returns
    -------
    CrossAttention.

    Shapes
    ------
    ``weights`` (out_len, src_len).

    Raises
    ------
    ValueError
        For an empty sentence or a layer outside the decoder.

    References
    ----------
    Post "The Decoder Side" (the encoder-decoder attention layer); paper §3.2.3.
    """
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence: expected a non-empty str, got {sentence!r}")
    n = model.cfg.n_layers
    if not isinstance(layer, int) or not -n <= layer < n:
        raise ValueError(f"layer: expected a decoder layer index in [-{n}, {n}), got {layer!r}")
    ids = src_vocab.encode(sentence)
    out = greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                        max_len=model.cfg.max_len - 1)
    src = prepare_source(model, ids)  # (1, src_len)
    tgt_in = torch.tensor([[tgt_vocab.bos_id, *out[:-1]]], device=src.device)  # (1, out_len)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            _, attention = model(src, tgt_in, return_attention=True)
    finally:
        model.train(was_training)
    weights = attention.decoder_cross[layer][0].mean(dim=0)  # (out_len, src_len)
    return CrossAttention(weights.double().cpu().numpy(), [src_vocab.tokens[i] for i in ids],
                          [tgt_vocab.tokens[i] for i in out], layer % n)
