"""Chapter 09: greedy decoding and beam search, the beam drawn as a tree, the length penalty, and
the KV cache (what each step computes with and without it, and what it saves)."""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..inference.decoding import beam_search, greedy_decode, length_penalty
from . import interactive as ia
from .kit import COLORS, DESKTOP_WIDTH_IN, DPI, MIN_FONT_PT, narrow, wrap

#: benchmarks/decoding.py's results (a source checkout's): the measured times the chapter shows.
BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "decoding.json"

# How a hypothesis is drawn: kept in the beam, finished with <eos>, looked at and dropped.
STYLE = {"start": (COLORS["off"], COLORS["text"], "-"), "kept": (COLORS["kept"], COLORS["query"], "-"),
         "finished": (COLORS["finished"], COLORS["finished-edge"], "-"),
         "dropped": (COLORS["blank"], COLORS["dropped-edge"], "--")}
LEGEND = {"kept": "kept in the beam", "finished": "ended with <eos>", "dropped": "dropped"}


@dataclass(frozen=True)
class Node:
    """One hypothesis of the beam: its parent, step, last word, log-probability and fate."""
    parent: int
    step: int
    word: str
    words: str
    log_prob: float
    status: str
    returned: bool = False


def beam_tree(model, sentence, src_vocab, tgt_vocab, *, beam_size=2, top_beams=2, alpha=0.0):
    """Every hypothesis ``il.beam_search`` looked at, as tree nodes, and what it returned."""
    ids = src_vocab.encode(sentence)
    results, steps = beam_search(model, ids, bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id,
                                 beam_size=beam_size, top_beams=top_beams, alpha=alpha,
                                 max_len=model.cfg.max_len - 1, return_steps=True)
    nodes, alive = [Node(-1, 0, "<bos>", "", 0.0, "start")], {(): 0}
    for record in steps:
        kept, ended, next_alive = set(record.kept), set(record.finished), {}
        for hyp, log_prob in record.candidates:
            status = "kept" if hyp in kept else "finished" if hyp in ended else "dropped"
            nodes.append(Node(alive[hyp[:-1]], record.step, tgt_vocab.tokens[hyp[-1]],
                              " ".join(tgt_vocab.tokens[i] for i in hyp), log_prob, status))
            if status == "kept":
                next_alive[hyp] = len(nodes) - 1
        alive = next_alive
    returned = {" ".join(tgt_vocab.tokens[i] for i in ids) for ids, _ in results}
    nodes = [Node(n.parent, n.step, n.word, n.words, n.log_prob,
                  "finished" if n.words in returned else n.status, n.words in returned)
             for n in nodes]
    return nodes, [(tgt_vocab.decode(ids), score) for ids, score in results]


def score_text(value: float) -> str:
    """A log-probability with two decimals, or as many as its first digit needs (-0.002)."""
    digits = 2 if value == 0 else max(2, math.ceil(-math.log10(abs(value))))
    return f"{value:.{digits}f}"


def _layout(nodes) -> np.ndarray:
    """Height of each node: a column's nodes one unit apart, children in their parents' order."""
    y, rank = np.zeros(len(nodes)), {}
    for step in range(max(n.step for n in nodes) + 1):
        members = sorted((i for i, n in enumerate(nodes) if n.step == step),
                         key=lambda i: (rank.get(nodes[i].parent, -1), i))
        for r, i in enumerate(members):
            rank[i], y[i] = r, (len(members) - 1) / 2 - r
    return y


def draw_tree(nodes, title: str = "", *, width: float = DESKTOP_WIDTH_IN):
    """The beam as a tree: every box a hypothesis with its summed log-probability; the steps
    run left to right, or top to bottom in a phone's column."""
    y, n_steps = _layout(nodes), max(n.step for n in nodes)
    height = max(sum(n.step == s for n in nodes) for s in range(n_steps + 1))
    # A phone's column turns the tree when a step's boxes fit across it (a beam of 2 or 3);
    # a wider beam keeps its steps across, closer together.
    phone = narrow(width) and height <= 6
    if phone:
        fig, ax = plt.subplots(figsize=(width, 0.62 * (n_steps + 1) + 1.3), dpi=DPI,
                               layout="constrained")
    else:
        fig, ax = plt.subplots(figsize=(min(width, max(4.0, 1.25 * (n_steps + 1))),
                                        0.5 * height + 1.4), dpi=DPI, layout="constrained")

    def at(step, rank):  # (x, y) of a box; a phone's column turns the tree
        return (-rank, step) if phone else (step, rank)

    for i, node in enumerate(nodes):
        fill, edge, line = STYLE[node.status]
        if node.parent >= 0:
            p = nodes[node.parent]
            (x0, y0), (x1, y1) = at(p.step + 0.22, y[node.parent]), at(node.step - 0.22, y[i])
            ax.add_line(Line2D([x0, x1], [y0, y1], color=edge, lw=1.0, ls=line, zorder=1))
        text = node.word if node.status == "start" else f"{node.word}\n{score_text(node.log_prob)}"
        ax.text(*at(node.step, y[i]), text, ha="center", va="center", fontsize=MIN_FONT_PT,
                fontweight="bold" if node.returned else "normal", zorder=3,
                bbox={"boxstyle": "round,pad=0.3", "fc": fill, "ec": edge, "ls": line,
                      "lw": 2.4 if node.returned else 1.0})
    steps = ["start"] + [f"step {s}" for s in range(1, n_steps + 1)]
    if phone:
        ax.set_ylim(n_steps + 0.5, -0.5)
        ax.set_xlim(-y.max() - 0.7, -y.min() + 0.7)
        ax.set_yticks(range(n_steps + 1), steps, fontsize=MIN_FONT_PT)
        ax.set_xticks([])
    else:
        ax.set_xlim(-0.5, n_steps + 0.5)
        ax.set_ylim(y.min() - 0.7, y.max() + 0.7)
        ax.set_xticks(range(n_steps + 1), steps, fontsize=MIN_FONT_PT)
        ax.set_yticks([])
    for side in ("right", "top") + (("bottom",) if phone else ("left",)):
        ax.spines[side].set_visible(False)
    handles = [Patch(fc=STYLE[s][0], ec=STYLE[s][1], ls=STYLE[s][2], label=label)
               for s, label in LEGEND.items()]
    handles.append(Patch(fc="white", ec=COLORS["text"], lw=2.4, label="returned"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02 if phone else -0.08),
              ncol=2 if narrow(width) else 4, fontsize=MIN_FONT_PT, frameon=False)
    ax.set_title(title, fontsize=9)
    return fig


def step_table(nodes, step: int) -> str:
    """The candidates of one step, best first: hypothesis, summed log-probability, fate (narrow
    enough for a phone's column: the words column is as wide as its longest hypothesis)."""
    rows = [n for n in nodes if n.step == step]
    width = max(len(f"step {step}"), *(len(n.words) for n in rows))
    head = f"{f'step {step}':<{width}}  {'log p':>7}  fate"
    return "\n".join([head] + [f"{n.words:<{width}}  {score_text(n.log_prob):>7}  {n.status}"
                               for n in rows])


def beam_fixes(model, pairs, src_vocab, tgt_vocab, beam_sizes=(2, 4, 8)):
    """Test pairs that greedy decoding gets wrong and a beam gets right, with both log-probs."""
    fixes, special = [], dict(bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    for source, target in pairs:
        ids = src_vocab.encode(source)
        greedy = greedy_decode(model, ids, **special)
        if tgt_vocab.decode(greedy) == target:
            continue
        greedy_lp = beam_search(model, ids, beam_size=1, **special)[0][1]
        for size in beam_sizes:
            (best, score), = beam_search(model, ids, beam_size=size, **special)
            if tgt_vocab.decode(best) == target:
                fixes.append((source, tgt_vocab.decode(greedy), target, size, greedy_lp, score))
                break
    return fixes


def compare_decoders(model, pairs, src_vocab, tgt_vocab, beam_sizes=(1, 2, 4, 8)) -> str:
    """Exact match and median milliseconds per sentence for greedy decoding and each beam, a
    row each: after a warm-up call of each, every sentence is decoded by each in turn, so that
    a machine whose load changes slows them alike; time it on one thread, as the chapter does."""
    special = dict(bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    for size in beam_sizes:
        beam_search(model, src_vocab.encode(pairs[0][0]), beam_size=size, **special)  # warm-up
    right, times = dict.fromkeys(beam_sizes, 0), {size: [] for size in beam_sizes}
    for source, target in pairs:
        ids = src_vocab.encode(source)
        for size in beam_sizes:
            start = time.perf_counter()
            (best, _), = beam_search(model, ids, beam_size=size, **special)
            times[size].append(time.perf_counter() - start)
            right[size] += tgt_vocab.decode(best) == target
    lines = [f"{'decoder':<7}  {'exact':>6}  {'ms per sentence':>15}"]
    for size in beam_sizes:
        name = "greedy" if size == 1 else f"beam {size}"
        lines.append(f"{name:<7}  {right[size] / len(pairs):>6.1%}  "
                     f"{1000 * np.median(times[size]):>15.1f}")
    return "\n".join(lines)


def penalties(lengths, alphas) -> np.ndarray:
    """The GNMT length penalty for every alpha (rows) and length (columns)."""
    return np.array([[length_penalty(n, a) for n in lengths] for a in alphas])


def _kernel(model, src_vocab, tgt_vocab, sentence, beam_size, top_beams, alpha, max_beam):
    """The Python twin of the page's beam widget: a sentence box and three sliders."""
    box = widgets.Text(value=sentence, description="sentence", continuous_update=False)
    size = widgets.IntSlider(value=beam_size, min=1, max=max_beam, description="beam_size")
    top = widgets.IntSlider(value=top_beams, min=1, max=beam_size, description="top_beams")
    penalty = widgets.FloatSlider(value=alpha, min=0.0, max=1.5, step=0.1, description="alpha")

    def show(_):
        top.max = size.value  # top_beams can never exceed beam_size
        nodes, results = beam_tree(model, box.value, src_vocab, tgt_vocab, beam_size=size.value,
                                   top_beams=top.value, alpha=penalty.value)
        for rank, (words, score) in enumerate(results):
            print(f"#{rank}: {words}  (score {score:.3f})")
        return draw_tree(nodes)

    return ia.twin([box, [size, top, penalty]], show)


def beam_widget(model, src_vocab, tgt_vocab, corpus="fr-en", sentence="je suis étudiant", *,
                beam_size=2, top_beams=2, alpha=0.0, max_beam=6):
    """Beam search on the reader's sentence and settings: live in the page, a widget in Jupyter."""
    params = {"corpus": corpus, "sentence": sentence, "beamSize": beam_size,
              "topBeams": top_beams, "alpha": alpha, "maxBeam": max_beam, "maxLen": 12}
    nodes, _ = beam_tree(model, sentence, src_vocab, tgt_vocab, beam_size=beam_size,
                         top_beams=top_beams, alpha=alpha)
    return ia.live("beam", params, alt=f"beam search of '{sentence}' as a tree: every "
                   f"hypothesis with its summed log-probability, beam_size={beam_size}, "
                   f"top_beams={top_beams}",
                   kernel=lambda: _kernel(model, src_vocab, tgt_vocab, sentence, beam_size,
                                          top_beams, alpha, max_beam),
                   default=lambda width: draw_tree(nodes, width=width))


def cache_work(model, sentence, src_vocab, tgt_vocab, *, layer: int = 0) -> dict:
    """What greedy decoding of ``sentence`` computes, read through forward hooks on decoder layer
    ``layer``'s W_K (self- and cross-attention), with and without the KV cache: for each
    ``use_cache`` the positions whose keys and values each step computes, how many source
    positions' keys it computes, and the tokens fed (<bos> and the words)."""
    ids = src_vocab.encode(sentence)
    special = dict(bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    decoder = model.decoder.layers[layer]
    work = {}
    for use_cache in (False, True):
        calls = {"self": [], "cross": []}
        hooks = [getattr(decoder, f"{kind}_attn").w_k.register_forward_hook(
            lambda module, args, out, kind=kind, calls=calls: calls[kind].append(args[0].shape[1]))
            for kind in ("self", "cross")]
        try:
            out = greedy_decode(model, ids, use_cache=use_cache, **special)
        finally:
            for hook in hooks:
                hook.remove()
        # each call computes the keys of the positions after those already computed (cached)
        # or of the whole prefix (uncached)
        computed, start = [], 0
        for n in calls["self"]:
            start = start if use_cache else 0
            computed.append(list(range(start, start + n)))
            start += n
        work[use_cache] = {"computed": computed, "source": calls["cross"]}
    words = ["<bos>"] + [tgt_vocab.tokens[i] for i in out[:-1]]
    return {"words": words, "src_len": len(ids), **work}


def draw_cache_work(work: dict, *, width: float = DESKTOP_WIDTH_IN):
    """Two grids, without and with the cache: a row per step, a column per position fed; a dark
    cell is a position whose keys and values the step computes, a light one a position it reads
    from the cache. Side by side on the desktop, one above the other on a phone."""
    words, phone = work["words"], narrow(width)
    n = len(words)
    rows, cols = (2, 1) if phone else (1, 2)
    fig, axes = plt.subplots(rows, cols, figsize=(width, 2 * (0.3 * n + 1.4) if phone
                                                 else 0.36 * n + 2.0),
                             dpi=DPI, layout="constrained")
    colours = {"computed": COLORS["key"], "cached": COLORS["cached"], "later": "white"}
    for ax, use_cache in zip(axes, (False, True)):
        computed = work[use_cache]["computed"]
        for step, positions in enumerate(computed, start=1):
            for pos in range(n):
                state = ("computed" if pos in positions else "cached" if pos < step
                         else "later")
                ax.add_patch(plt.Rectangle((pos, step - 1), 0.92, 0.84, fc=colours[state],
                                           ec=COLORS["muted"] if state != "later" else COLORS["off"],
                                           lw=0.6))
        total = sum(len(p) for p in computed)
        source = work[use_cache]["source"]
        ax.set_xlim(-0.1, n)
        ax.set_ylim(len(computed) - 0.05, -0.1)
        ax.set_xticks([i + 0.46 for i in range(n)], words, fontsize=MIN_FONT_PT, rotation=0)
        ax.set_yticks([i + 0.42 for i in range(len(computed))],
                      [f"step {i}" for i in range(1, len(computed) + 1)], fontsize=MIN_FONT_PT)
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        name = "with the KV cache" if use_cache else "without a cache"
        times = "once" if len(source) == 1 else f"at every step ({len(source)} times)"
        ax.set_title(f"{name}\n{total} positions' keys and values computed;\n"
                     f"the source's ({work['src_len']} positions) {times}",
                     fontsize=MIN_FONT_PT + 1)
    handles = [Patch(fc=colours["computed"], ec=COLORS["muted"], label="computed at this step"),
               Patch(fc=colours["cached"], ec=COLORS["muted"], label="read from the cache")]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=MIN_FONT_PT,
               frameon=False)
    return fig


def measured_times(path: Path = BENCHMARK) -> str:
    """benchmarks/decoding.py's times with and without the cache, a line per output length and
    decoder (four columns: a phone's column holds them)."""
    if not Path(path).exists():  # an installed package (Colab) has no benchmarks/ folder
        return f"{path.name}: not in this installation (python benchmarks/decoding.py writes it)"
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    lines = [f"{'tokens':>6} {'decoder':<7} {'no cache':>9} {'cache':>8}"]
    shipped = report["cache"]["shipped"]
    for length in sorted({r["tokens"] for r in shipped.values()}):
        for name, key in (("greedy", "greedy"), ("beam 4", "beam_4"), ("batch 8", "greedy_batch_8")):
            if f"{key}_{length}" not in shipped:  # a report written before the batch was timed
                continue
            run = shipped[f"{key}_{length}"]
            lines.append(f"{length:>6} {name:<7} {run['ms_uncached']:>6.0f} ms "
                         f"{run['ms_cached']:>5.0f} ms")
    note = (f"({report.get('threads', 1)} thread, the machine's load average "
            f"{report.get('load_average', '?')} while it ran: the ratios matter, not the ms)")
    return "\n".join(lines + [wrap(note, len(lines[0]))])
