"""Beam search in numbers: the beam as a tree, sentences where it beats greedy decoding, speed.

Everything here runs :func:`illustrated.beam_search` or :func:`illustrated.greedy_decode` on a
real model and returns plain Python/NumPy data (words, log-probabilities, flags) for the plots
of :mod:`illustrated.plots.beam`. No decoding logic is re-implemented: the tree is read from the
``BeamStep`` records that ``beam_search(..., return_steps=True)`` returns.

References: post, end of "The Loss Function" (greedy decoding; beam search with ``beam_size`` and
``top_beams``); paper §6.1 (beam size 4, length penalty α = 0.6); Wu et al. 2016 (GNMT) §7, Eq. 14.
"""
from __future__ import annotations

import math
import time
from typing import NamedTuple, Sequence

import numpy as np
import torch

from ..data import Vocab
from ..decoding import EvalMode, beam_search, greedy_decode, greedy_decode_batch, length_penalty
from ..display_explain import format_decoder_table, format_step_rows
from ..modules.transformer import Transformer
from ._checks import check_model, check_vocab, encode_sentence, to_numpy

__all__ = ["BeamNode", "BeamTree", "beam_tree", "tree_arrays", "step_table", "format_step_table", "BeamFix",
           "find_beam_fixes", "GreedyMargin", "greedy_margins", "DecoderRow", "compare_decoders",
           "format_decoder_table", "AlphaSweep", "alpha_sweep", "AlphaFlip", "find_alpha_flips",
           "penalty_curves"]

def _source_ids(model: Transformer, sentence: object, src_vocab: Vocab) -> list[int]:
    check_vocab("src_vocab", src_vocab, model.cfg.src_vocab_size)
    return encode_sentence(src_vocab, sentence)


def _default_max_len(model: Transformer, max_len: int | None) -> int:
    """The longest output decoding allows: the model's positions minus the one <bos> takes."""
    return model.cfg.max_len - 1 if max_len is None else max_len


class BeamNode(NamedTuple):
    """One hypothesis of the beam: a partial (or finished) translation and its log-probability."""

    index: int
    """Position of the node in :attr:`BeamTree.nodes`."""
    parent: int
    """Index of the hypothesis it extends (one word shorter); -1 for the start node."""
    step: int
    """Number of generated tokens (0 for the start node, which holds only ``<bos>``)."""
    token: str
    """The word this node adds (``"<bos>"`` for the start node)."""
    token_ids: tuple[int, ...]
    """The whole hypothesis as target ids, without ``<bos>``."""
    log_prob: float
    """Cumulative log-probability: the sum of the model's log-probs of every word so far."""
    score: float
    """``log_prob`` divided by the length penalty ((5 + step) / 6) ** alpha (equal when alpha=0)."""
    status: str
    """"start", "kept" (alive after this step), "finished" (ended with ``<eos>`` among the best
    ``beam_size``, or cut at ``max_len``) or "dropped" (considered but not kept)."""
    returned: bool
    """True for the ``top_beams`` hypotheses that beam search returns."""


class BeamTree(NamedTuple):
    """A whole beam search as a tree of hypotheses, with its settings and its answer."""

    source_tokens: list[str]
    """The source words."""
    nodes: list[BeamNode]
    """Every hypothesis shown: the start node, then each step's candidates, best first."""
    results: list[tuple[list[int], float]]
    """What :func:`illustrated.beam_search` returned: ``top_beams`` (token_ids, score), best first."""
    translations: list[str]
    """The returned hypotheses as sentences (special tokens dropped), best first."""
    beam_size: int
    top_beams: int
    alpha: float
    n_steps: int
    """Number of search steps run."""


def beam_tree(model: Transformer, sentence: str, src_vocab: Vocab, tgt_vocab: Vocab, *,
              beam_size: int = 2, top_beams: int = 2, alpha: float = 0.0,
              max_len: int | None = None) -> BeamTree:
    """Hold on to the ``beam_size`` best partial translations at every step, and draw them as a tree.

    Runs ``il.beam_search(..., return_steps=True)`` and turns its records into nodes: each step's
    candidates (the ``2 * beam_size`` best one-word extensions of the live hypotheses) become
    children of the hypothesis they extend, marked kept, finished or dropped as the search
    decided. The returned hypotheses are the finished nodes with ``returned=True``, with the very
    scores ``beam_search`` returned.

    Parameters
    ----------
    model : Transformer (trained).   sentence : str, source sentence.
    src_vocab, tgt_vocab : Vocab, the model's vocabularies.
    beam_size : int >= 1 (post: ``beam_size``).   top_beams : int in [1, beam_size] (post: ``top_beams``).
    alpha : float >= 0, GNMT length-penalty exponent.
    max_len : int, most tokens generated; default the model's ``max_len - 1``.

    Returns
    -------
    BeamTree.

    Shapes
    ------
    ``len(nodes) = 1 + sum over steps of the number of candidates``.

    Raises
    ------
    ValueError
        For a model or vocabulary of the wrong kind or size, an empty sentence, or bad
        ``beam_size``/``top_beams``/``alpha``/``max_len`` (from :func:`illustrated.beam_search`).

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1; Wu et al. 2016, Eq. 14.
    """
    model = check_model(model)
    ids = _source_ids(model, sentence, src_vocab)
    check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    results, steps = beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                 beam_size=beam_size, top_beams=top_beams,
                                 max_len=_default_max_len(model, max_len), alpha=alpha,
                                 return_steps=True)
    nodes = [BeamNode(0, -1, 0, "<bos>", (), 0.0, 0.0, "start", False)]
    alive = {(): 0}  # hypothesis -> index of its node, for the hypotheses that may have children
    for record in steps:
        kept, ended = set(record.kept), set(record.finished)
        next_alive = {}
        for hyp, log_prob in record.candidates:
            status = "kept" if hyp in kept else "finished" if hyp in ended else "dropped"
            index = len(nodes)
            nodes.append(BeamNode(index, alive[hyp[:-1]], record.step, tgt_vocab.tokens[hyp[-1]],
                                  hyp, log_prob, log_prob / length_penalty(record.step, alpha),
                                  status, False))
            if status == "kept":
                next_alive[hyp] = index
        alive = next_alive
    by_ids = {node.token_ids: node.index for node in nodes}  # each hypothesis appears once
    for token_ids, _ in results:
        node = nodes[by_ids[tuple(token_ids)]]
        # a hypothesis cut at max_len is returned unfinished: it ends the search like a finished one
        nodes[node.index] = node._replace(status="finished", returned=True)
    return BeamTree([src_vocab.tokens[i] for i in ids], nodes, results,
                    [tgt_vocab.decode(h) for h, _ in results], beam_size, top_beams, float(alpha),
                    len(steps))


def tree_arrays(tree: BeamTree) -> dict[str, list]:
    """The tree as parallel lists, one entry per node, ready for
    :func:`illustrated.plots.beam.plot_beam_tree`.

    Returns
    -------
    dict with keys ``parents``, ``steps``, ``labels`` (the word each node adds), ``log_probs``,
    ``statuses``, ``returned`` and ``hypotheses`` (each node's whole hypothesis as words).

    Shapes
    ------
    Every list has ``len(tree.nodes)`` entries.

    Raises
    ------
    ValueError
        If ``tree`` is not a BeamTree.
    """
    if not isinstance(tree, BeamTree):
        raise ValueError(f"tree: expected a BeamTree, got {type(tree).__name__}")
    return {"parents": [n.parent for n in tree.nodes], "steps": [n.step for n in tree.nodes],
            "labels": [n.token for n in tree.nodes], "log_probs": [n.log_prob for n in tree.nodes],
            "statuses": [n.status for n in tree.nodes], "returned": [n.returned for n in tree.nodes],
            "hypotheses": [_words(tree, n) or n.token for n in tree.nodes]}


def step_table(tree: BeamTree, step: int) -> list[tuple[str, float, str]]:
    """The candidates of one step of the beam, best first: (hypothesis, log-prob, status).

    Parameters
    ----------
    tree : BeamTree.   step : int in [1, tree.n_steps].

    Returns
    -------
    list of (words of the hypothesis joined by spaces, ``<eos>`` included; cumulative
    log-probability; status).

    Raises
    ------
    ValueError
        If ``step`` is outside [1, tree.n_steps].

    References
    ----------
    Post, end of "The Loss Function" (keep the top two partial hypotheses at every step).
    """
    if not isinstance(step, int) or not 1 <= step <= tree.n_steps:
        raise ValueError(f"step: expected an int in [1, {tree.n_steps}], got {step!r}")
    return [(_words(tree, node), node.log_prob, node.status)
            for node in tree.nodes if node.step == step]


def _words(tree: BeamTree, node: BeamNode) -> str:
    """The words of a hypothesis, read from the tree by walking up to the start node."""
    words = []
    while node.parent >= 0:
        words.append(node.token)
        node = tree.nodes[node.parent]
    return " ".join(reversed(words))


def format_step_table(tree: BeamTree, step: int, decimals: int = 2) -> str:
    """Text table of one step's candidates: rank, hypothesis, cumulative log-prob, status.

    Raises
    ------
    ValueError
        If ``step`` is outside [1, tree.n_steps] or ``decimals`` is negative.
    """
    if not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals: expected an int >= 0, got {decimals!r}")
    return format_step_rows(step, step_table(tree, step), decimals)


def _greedy_all(model: Transformer, sources: Sequence[str], src_vocab: Vocab, tgt_vocab: Vocab,
                max_len: int) -> tuple[list[list[int]], torch.Tensor]:
    """Greedy decoding of many sentences in one padded batch (the fast path of ``il.translate``).

    Returns the generated ids of each sentence and the padded source batch (n, src_len).
    """
    encoded = [_source_ids(model, s, src_vocab) for s in sources]
    src = torch.nn.utils.rnn.pad_sequence([torch.tensor(ids) for ids in encoded], batch_first=True,
                                          padding_value=model.cfg.pad_id)  # (n, src_len)
    outputs = greedy_decode_batch(model, src, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                  max_len=max_len)
    return outputs, src


class BeamFix(NamedTuple):
    """A test sentence that greedy decoding gets wrong and beam search gets right."""

    source: str
    target: str
    greedy: str
    """Greedy decoding's translation."""
    beam: str
    """Beam search's best translation (equal to ``target``)."""
    beam_size: int
    """The smallest beam size tried that fixes it."""
    greedy_log_prob: float
    """Summed log-probability of greedy's whole output (``<eos>`` included)."""
    beam_log_prob: float
    """Summed log-probability of the beam's best output: higher, or the beam would not pick it."""


def _check_pairs(pairs: object) -> list[tuple[str, str]]:
    pairs = list(pairs) if not isinstance(pairs, (str, bytes)) else None
    if not pairs or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs):
        raise ValueError("pairs: expected a non-empty sequence of (source, target) sentences")
    return [(str(s), str(t)) for s, t in pairs]


def _check_beam_sizes(beam_sizes: object) -> tuple[int, ...]:
    sizes = tuple(beam_sizes) if not isinstance(beam_sizes, (str, bytes)) else ()
    if not sizes or not all(isinstance(b, int) and b >= 1 for b in sizes):
        raise ValueError(f"beam_sizes: expected a non-empty sequence of ints >= 1, got {beam_sizes!r}")
    return sizes


def find_beam_fixes(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                    tgt_vocab: Vocab, *, beam_sizes: Sequence[int] = (2, 4, 8),
                    max_len: int | None = None) -> tuple[list[BeamFix], int]:
    """Search a split for sentences where picking the best word at each step goes wrong and a beam fixes it.

    Every pair is translated greedily (the whole split in one padded batch, then each miss again
    on its own); each wrong one is retried with beam search at each size of ``beam_sizes``
    (smallest first) until the best hypothesis equals the target.

    Parameters
    ----------
    model : Transformer.   pairs : (source, target) sentences, e.g. a test split.
    src_vocab, tgt_vocab : Vocab.   beam_sizes : beam sizes to try, smallest first.
    max_len : int, most tokens generated; default the model's ``max_len - 1``.

    Returns
    -------
    (fixes, n_greedy_wrong): the sentences a beam fixes, in the order of ``pairs``, and how many
    sentences greedy decoding got wrong in all.

    Raises
    ------
    ValueError
        For an empty ``pairs``, bad ``beam_sizes``, or a model/vocabulary mismatch.

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1.
    """
    model = check_model(model)
    pairs = _check_pairs(pairs)
    sizes = sorted(_check_beam_sizes(beam_sizes))
    check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    max_len = _default_max_len(model, max_len)
    batch_outputs, _ = _greedy_all(model, [s for s, _ in pairs], src_vocab, tgt_vocab, max_len)
    fixes, n_wrong = [], 0
    for (source, target), batch_out in zip(pairs, batch_outputs):
        want = tgt_vocab.decode(tgt_vocab.encode(target))
        if tgt_vocab.decode(batch_out) == want:
            continue
        ids = _source_ids(model, source, src_vocab)
        # one sentence at a time, as greedy_decode does it, with its summed log-probability
        greedy = beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                             beam_size=1, max_len=max_len)[0]  # beam_size=1 equals greedy
        if tgt_vocab.decode(greedy[0]) == want:
            continue
        n_wrong += 1
        for size in sizes:
            best = beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                               beam_size=size, max_len=max_len)[0]
            if tgt_vocab.decode(best[0]) == want:
                fixes.append(BeamFix(source, target, tgt_vocab.decode(greedy[0]), want, size,
                                     greedy[1], best[1]))
                break
    return fixes, n_wrong


class GreedyMargin(NamedTuple):
    """The closest call of greedy decoding on one sentence: where its best word barely won."""

    source: str
    greedy: str
    """Greedy decoding's translation."""
    correct: bool
    """Whether it equals the target."""
    step: int
    """1-based step with the smallest margin."""
    chosen: str
    """The word greedy decoding picked there."""
    runner_up: str
    """The second most probable word there."""
    margin: float
    """log p(chosen) - log p(runner_up) at that step (>= 0)."""


def greedy_margins(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                   tgt_vocab: Vocab, *, max_len: int | None = None) -> list[GreedyMargin]:
    """For every sentence, the step where greedy decoding's first choice beat its second by the least.

    Greedy decoding is run on all sentences as one padded batch, then its outputs are fed back in
    one pass (teacher forcing on its own words), which gives the same next-word log-probabilities
    as the step-by-step run; ``<bos>`` and ``<pad>`` are excluded, as in decoding.

    Parameters
    ----------
    model : Transformer.   pairs : (source, target) sentences.   src_vocab, tgt_vocab : Vocab.
    max_len : int, most tokens generated; default the model's ``max_len - 1``.

    Returns
    -------
    list of GreedyMargin, smallest margin first.

    Raises
    ------
    ValueError
        For an empty ``pairs`` or a model/vocabulary mismatch.

    References
    ----------
    Post, end of "The Loss Function" ("selecting the word with the highest probability ... and
    throwing away the rest").
    """
    model = check_model(model)
    pairs = _check_pairs(pairs)
    check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    max_len = _default_max_len(model, max_len)
    outputs, src = _greedy_all(model, [s for s, _ in pairs], src_vocab, tgt_vocab, max_len)
    longest = max(len(out) for out in outputs)
    tgt_in = torch.full((len(outputs), longest), tgt_vocab.pad_id, dtype=torch.long)  # (n, t)
    for row, out in enumerate(outputs):
        tgt_in[row, :len(out)] = torch.tensor([tgt_vocab.bos_id, *out[:-1]])
    with EvalMode(model):
        device = next(model.parameters()).device
        log_probs = model(src.to(device), tgt_in.to(device)).log_softmax(dim=-1)  # (n, t, vocab)
    log_probs[..., [tgt_vocab.bos_id, tgt_vocab.pad_id]] = -math.inf
    top2 = log_probs.topk(2, dim=-1)
    gaps = to_numpy(top2.values[..., 0] - top2.values[..., 1])  # (n, t)
    rows = []
    for row, ((source, target), out) in enumerate(zip(pairs, outputs)):
        i = int(np.argmin(gaps[row, :len(out)]))
        words = tgt_vocab.decode(out)
        rows.append(GreedyMargin(source, words, words == tgt_vocab.decode(tgt_vocab.encode(target)),
                                 i + 1, tgt_vocab.tokens[int(top2.indices[row, i, 0])],
                                 tgt_vocab.tokens[int(top2.indices[row, i, 1])],
                                 float(gaps[row, i])))
    return sorted(rows, key=lambda row: row.margin)


class DecoderRow(NamedTuple):
    """Exact match and speed of one decoder on a split."""

    name: str
    beam_size: int
    exact_match: float
    """Share of sentences translated exactly, in [0, 1]."""
    seconds_per_sentence: float
    """Median wall-clock seconds per sentence, each decoded on its own (varies between runs;
    the median is less disturbed than the mean by other programs competing for the CPU)."""


def compare_decoders(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                     tgt_vocab: Vocab, *, beam_sizes: Sequence[int] = (1, 2, 4, 8),
                     alpha: float = 0.0, max_len: int | None = None) -> list[DecoderRow]:
    """Exact match and time per sentence of greedy decoding (beam size 1) and of wider beams.

    Each sentence is decoded and timed on its own (no batching), the decoders taking turns
    sentence by sentence, so the times compare like with like; the median time is kept.

    Parameters
    ----------
    model : Transformer.   pairs : (source, target) sentences.   src_vocab, tgt_vocab : Vocab.
    beam_sizes : beam sizes; 1 means greedy decoding (``il.greedy_decode``).
    alpha : float >= 0, length-penalty exponent of the beams.
    max_len : int, most tokens generated; default the model's ``max_len - 1``.

    Returns
    -------
    list of DecoderRow, one per beam size, in the order given.

    Raises
    ------
    ValueError
        For an empty ``pairs``, bad ``beam_sizes`` or ``alpha``, or a model/vocabulary mismatch.

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1 (beam size 4, α = 0.6).
    """
    model = check_model(model)
    pairs = _check_pairs(pairs)
    sizes = _check_beam_sizes(beam_sizes)
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"beam_sizes: expected each beam size once, got {beam_sizes!r}")
    check_vocab("tgt_vocab", tgt_vocab, model.cfg.tgt_vocab_size)
    max_len = _default_max_len(model, max_len)
    encoded = [_source_ids(model, s, src_vocab) for s, _ in pairs]
    wanted = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]
    outputs = {size: [] for size in sizes}
    seconds = {size: [] for size in sizes}
    for ids in encoded:  # decoders take turns on each sentence, so a busy spell hits them alike
        for size in sizes:
            start = time.perf_counter()
            if size == 1:
                out = greedy_decode(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                    max_len=max_len)
            else:
                out = beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                  beam_size=size, alpha=alpha, max_len=max_len)[0][0]
            seconds[size].append(time.perf_counter() - start)
            outputs[size].append(out)
    rows = []
    for size in sizes:
        correct = sum(tgt_vocab.decode(o) == w for o, w in zip(outputs[size], wanted))
        rows.append(DecoderRow("greedy" if size == 1 else f"beam {size}", size,
                               correct / len(pairs), float(np.median(seconds[size]))))
    return rows


class AlphaSweep(NamedTuple):
    """Beam search of one sentence rerun for several length-penalty exponents α."""

    alphas: np.ndarray
    """The α values, shape (n_alpha,)."""
    hypotheses: list[str]
    """Every hypothesis returned at some α (``<eos>`` shown), in order of first appearance."""
    lengths: np.ndarray
    """Their lengths in generated tokens, ``<eos>`` included, shape (n_hyp,)."""
    log_probs: np.ndarray
    """Their summed log-probabilities, shape (n_hyp,) (independent of α)."""
    scores: np.ndarray
    """Length-penalised scores, shape (n_alpha, n_hyp); NaN where the hypothesis was not returned
    at that α."""
    best: np.ndarray
    """Index (into ``hypotheses``) of the translation chosen at each α, shape (n_alpha,)."""


def alpha_sweep(model: Transformer, sentence: str, src_vocab: Vocab, tgt_vocab: Vocab, *,
                alphas: Sequence[float] = tuple(np.round(np.linspace(0.0, 2.0, 11), 2)),
                beam_size: int = 4, top_beams: int = 4,
                max_len: int | None = None) -> AlphaSweep:
    """Divide each hypothesis's log-probability by ((5 + length) / 6) ** α and see which translation wins.

    Beam search is rerun at every α (α also changes when the search may stop), and its
    ``top_beams`` returned hypotheses are collected with their scores.

    Parameters
    ----------
    model : Transformer.   sentence : str.   src_vocab, tgt_vocab : Vocab.
    alphas : α values, each >= 0.   beam_size, top_beams : as in :func:`illustrated.beam_search`.
    max_len : int, most tokens generated; default the model's ``max_len - 1``.

    Returns
    -------
    AlphaSweep.

    Shapes
    ------
    ``scores`` (n_alpha, n_hyp); ``alphas`` (n_alpha,); ``lengths``, ``log_probs`` (n_hyp,).

    Raises
    ------
    ValueError
        For an empty ``alphas``, a negative α, or what :func:`beam_tree` rejects.

    References
    ----------
    Paper §6.1 (α = 0.6); Wu et al. 2016 (GNMT) §7, Eq. 14.
    """
    alphas = np.asarray(list(alphas), dtype=np.float64)  # (n_alpha,)
    if alphas.ndim != 1 or alphas.size == 0 or not np.all(alphas >= 0):
        raise ValueError(f"alphas: expected a non-empty sequence of values >= 0, got {alphas!r}")
    found: dict[tuple[int, ...], tuple[str, int, float]] = {}
    per_alpha: list[dict[tuple[int, ...], float]] = []
    for alpha in alphas:
        tree = beam_tree(model, sentence, src_vocab, tgt_vocab, beam_size=beam_size,
                         top_beams=top_beams, alpha=float(alpha), max_len=max_len)
        returned = {}
        for node in tree.nodes:
            if node.returned:
                found.setdefault(node.token_ids, (_words(tree, node), node.step, node.log_prob))
                returned[node.token_ids] = node.score
        per_alpha.append(returned)
    keys = list(found)
    scores = np.full((alphas.size, len(keys)), np.nan)  # (n_alpha, n_hyp)
    for a, returned in enumerate(per_alpha):
        for h, key in enumerate(keys):
            if key in returned:
                scores[a, h] = returned[key]
    best = np.nanargmax(scores, axis=1)  # (n_alpha,)
    return AlphaSweep(alphas, [found[k][0] for k in keys],
                      np.array([found[k][1] for k in keys]), np.array([found[k][2] for k in keys]),
                      scores, best)


class AlphaFlip(NamedTuple):
    """A sentence whose best beam hypothesis changes when the length penalty is switched on."""

    source: str
    target: str
    without: str
    """The winner with α = 0 (summed log-probability), ``<eos>`` shown."""
    with_penalty: str
    """The winner among the same finished hypotheses once divided by ((5 + len) / 6) ** α."""
    alpha: float


def find_alpha_flips(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                     tgt_vocab: Vocab, *, alpha: float = 0.6, beam_size: int = 4,
                     max_len: int | None = None) -> list[AlphaFlip]:
    """Search sentences whose winner changes when the length penalty divides the scores.

    Each source is decoded once with α = 0 (``top_beams = beam_size``); its returned
    hypotheses are then ranked again by ``log_prob / length_penalty(len, alpha)``. (A search run
    with α > 0 may also stop later and find more hypotheses; :func:`alpha_sweep` reruns it.)

    Parameters
    ----------
    model : Transformer.   pairs : (source, target) sentences.   src_vocab, tgt_vocab : Vocab.
    alpha : float > 0.   beam_size : int >= 1.
    max_len : int, most tokens generated; default the model's ``max_len - 1``.

    Returns
    -------
    list of AlphaFlip, in the order of ``pairs``.

    Raises
    ------
    ValueError
        For an empty ``pairs``, ``alpha <= 0``, or what :func:`beam_tree` rejects.

    References
    ----------
    Paper §6.1; Wu et al. 2016, Eq. 14.
    """
    pairs = _check_pairs(pairs)
    if not alpha > 0:
        raise ValueError(f"alpha: expected a length-penalty exponent > 0, got {alpha!r}")
    flips = []
    for source, target in pairs:
        tree = beam_tree(model, source, src_vocab, tgt_vocab, beam_size=beam_size,
                         top_beams=beam_size, max_len=max_len)
        finished = [n for n in tree.nodes if n.returned]
        plain = max(finished, key=lambda n: n.log_prob)
        penalised = max(finished, key=lambda n: n.log_prob / length_penalty(n.step, alpha))
        if penalised is not plain:
            flips.append(AlphaFlip(source, target, _words(tree, plain), _words(tree, penalised),
                                   float(alpha)))
    return flips


def penalty_curves(lengths: Sequence[int], alphas: Sequence[float]) -> np.ndarray:
    """The GNMT length penalty ((5 + length) / 6) ** α for every α (rows) and length (columns).

    Raises
    ------
    ValueError
        For a length < 1 or a negative α.

    Shapes
    ------
    (len(alphas), len(lengths)).

    References
    ----------
    Wu et al. 2016, Eq. 14; paper §6.1.
    """
    lengths, alphas = list(lengths), list(alphas)
    if not lengths or any(int(n) != n or n < 1 for n in lengths):
        raise ValueError(f"lengths: expected integers >= 1, got {lengths!r}")
    if not alphas or any(a < 0 for a in alphas):
        raise ValueError(f"alphas: expected values >= 0, got {alphas!r}")
    return np.array([[length_penalty(int(n), float(a)) for n in lengths] for a in alphas])
