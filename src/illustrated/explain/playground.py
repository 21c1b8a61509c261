"""The playground's numbers: train a tiny Transformer from a few settings, translate, look inside.

Everything goes through the package's own entry points (``il.presets.make_config``, ``il.train``,
``il.translate``, ``Transformer.forward(..., return_attention=True)``) and comes back as plain
Python/NumPy data for :mod:`illustrated.plots.playground`.

References: post "Go Forth And Transform" (experiment with the model), "Recap Of Training",
"The Loss Function", "The Decoder Side" (encoder-decoder attention); paper §5 (training), §3.2.3.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ..config import TINY
from ..data import CORPORA, Vocab, load_corpus
from ..display_explain import format_translation_table
from ..modules.transformer import Transformer
from ..presets import SETTINGS, make_config
from ..tracing import trace
from ..training import History, pick_device, set_seed, train, translate
from ._checks import check_layer

__all__ = ["PLAYGROUND_KNOBS", "playground_defaults", "LossCurve", "PlaygroundRun",
           "train_playground", "TranslationRow", "translation_rows", "TranslationSummary",
           "summarize_translations", "format_translation_table",
           "AttentionMap", "cross_attention"]

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
    cfg = replace(TINY, **settings["model"])  # the sizes make_config gives any vocabularies
    train_kw = {"steps": 300, "lr": 3e-3, "label_smoothing": 0.0, **settings["train"]}
    return {"d_model": cfg.d_model, "n_heads": cfg.n_heads, "n_layers": cfg.n_layers,
            "lr": float(train_kw["lr"]), "steps": int(train_kw["steps"]),
            "label_smoothing": float(train_kw["label_smoothing"])}


class LossCurve:
    """A ``train`` callback that reports the :class:`~illustrated.History` every ``every`` steps.

    A thin adapter: it keeps no numbers of its own, only the ``History`` that ``train`` fills,
    and hands its losses to ``on_update`` (e.g. a live plot).

    Parameters
    ----------
    every : int >= 1, how often ``on_update`` is called.
    on_update : optional function ``on_update(steps, losses)``, called with the step numbers and
        losses so far every ``every`` steps and at the last step.
    total_steps : int, optional: the run's length, so the last step is always reported.

    Attributes
    ----------
    history : the History of the run (None before the first step).
    steps, losses : the step numbers 1, 2, ... and ``history.loss``.

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
        self.history: History | None = None

    @property
    def losses(self) -> list[float]:
        """The loss of every step so far (the History's own list)."""
        return [] if self.history is None else self.history.loss

    @property
    def steps(self) -> list[int]:
        """1, 2, ..., one step number per loss."""
        return list(range(1, len(self.losses) + 1))

    def __call__(self, step: int, history: History) -> None:
        self.history = history
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


class AttentionMap(NamedTuple):
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
                    layer: int = -1) -> AttentionMap:
    """Translate a sentence greedily, then read where each output position attended in the source.

    A selection from :func:`illustrated.trace` of the greedy translation: the decoder reads
    ``<bos>`` + output without its last token, so row i holds the attention of the position
    that produced output word i, averaged over the heads of decoder layer ``layer``.

    Parameters
    ----------
    model : Transformer.   sentence : str.   src_vocab, tgt_vocab : Vocab.
    layer : int, decoder layer (negative counts from the last).

    Returns
    -------
    AttentionMap.

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
    layer = check_layer(model, layer)
    t = trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
              max_len=model.cfg.max_len - 1)
    weights = t.cross_attention()[layer].mean(axis=0)  # (out_len, src_len)
    return AttentionMap(weights, t.source_tokens, t.target_tokens, layer)
