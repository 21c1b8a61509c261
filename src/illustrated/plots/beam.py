"""Beam search drawn: the hypotheses as a tree, one step's scores as bars, the length penalty.

Arrays and labels in, Figure out; nothing here computes a probability or runs a model (see
:mod:`illustrated.explain.beam` for the numbers).

References: post, end of "The Loss Function" (beam search, ``beam_size``, ``top_beams``); paper
§6.1; Wu et al. 2016 (GNMT) §7, Eq. 14.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .style import COLORS, MAX_FIGURE_WIDTH_IN, MIN_FONT_PT

__all__ = ["STATUS_STYLE", "tree_layout", "plot_beam_tree", "plot_step_scores", "plot_beam_step",
           "plot_length_penalty", "plot_alpha_scores"]

_INK = COLORS["text"]

#: How each kind of hypothesis is drawn: fill, edge colour, edge width, text colour, edge style.
STATUS_STYLE = {
    "start": {"fc": "#eceff1", "ec": "#78909c", "lw": 1.0, "color": _INK, "ls": "-"},
    "kept": {"fc": COLORS["query"], "ec": "#6a3d9a", "lw": 1.0, "color": "white", "ls": "-"},
    "finished": {"fc": COLORS["input"], "ec": "#2e7d32", "lw": 1.5, "color": _INK, "ls": "-"},
    "dropped": {"fc": "#f5f5f5", "ec": "#bdbdbd", "lw": 0.8, "color": "#9e9e9e", "ls": "--"},
}
_LEGEND = {"kept": "kept in the beam", "finished": "finished (<eos>)",
           "dropped": "dropped"}


def _check_tree(parents: Sequence[int], steps: Sequence[int], labels: Sequence[str],
                log_probs: Sequence[float], statuses: Sequence[str],
                returned: Sequence[bool] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    n = len(parents)
    for name, values in (("steps", steps), ("labels", labels), ("log_probs", log_probs),
                         ("statuses", statuses)):
        if len(values) != n:
            raise ValueError(f"{name}: expected {n} entries (one per node), got {len(values)}")
    if returned is not None and len(returned) != n:
        raise ValueError(f"returned: expected {n} entries (one per node), got {len(returned)}")
    if n == 0:
        raise ValueError("parents: expected at least one node (the start node), got none")
    parents_arr = np.asarray(parents, dtype=int)  # (n,)
    steps_arr = np.asarray(steps, dtype=int)  # (n,)
    bad = [s for s in statuses if s not in STATUS_STYLE]
    if bad:
        raise ValueError(f"statuses: expected values in {tuple(STATUS_STYLE)}, got {bad[0]!r}")
    for i, p in enumerate(parents_arr):
        if p >= 0 and (p >= n or steps_arr[p] != steps_arr[i] - 1):
            raise ValueError(f"parents: node {i} (step {steps_arr[i]}) has parent {p}, expected "
                             f"a node one step earlier or -1")
    return parents_arr, steps_arr, np.asarray(log_probs, dtype=np.float64), list(statuses)


def tree_layout(parents: Sequence[int], steps: Sequence[int]) -> np.ndarray:
    """Vertical position of every node: children listed under their parent, parents' order kept.

    Parameters
    ----------
    parents : index of each node's parent (-1 for a root).   steps : each node's column.

    Returns
    -------
    np.ndarray of shape (n,): y positions, each column centred on 0, one unit apart, the
    first node of a column at the top (largest y).

    Raises
    ------
    ValueError
        If the lengths differ.
    """
    if len(parents) != len(steps):
        raise ValueError(f"steps: expected {len(parents)} entries, got {len(steps)}")
    parents_arr, steps_arr = np.asarray(parents, dtype=int), np.asarray(steps, dtype=int)
    y = np.zeros(len(parents_arr))
    order_in_column: dict[int, int] = {}
    for step in sorted(set(steps_arr.tolist())):
        members = [i for i in range(len(steps_arr)) if steps_arr[i] == step]
        members.sort(key=lambda i: (order_in_column.get(int(parents_arr[i]), -1), i))
        for rank, i in enumerate(members):
            order_in_column[i] = rank
            y[i] = (len(members) - 1) / 2 - rank
    return y


def _draw_tree(ax: Axes, parents: np.ndarray, steps: np.ndarray, labels: Sequence[str],
               log_probs: np.ndarray, statuses: list, returned: Sequence[bool],
               upto_step: int, highlight_step: int | None) -> None:
    y = tree_layout(parents, steps)
    n_steps = int(steps.max())
    if highlight_step is not None:
        ax.axvspan(highlight_step - 0.5, highlight_step + 0.5, color="#fff8e1", zorder=0,
                   gid="current-step")
    for i in range(len(parents)):
        if steps[i] > upto_step:
            continue
        style = STATUS_STYLE[statuses[i]]
        if parents[i] >= 0:
            p = parents[i]
            ax.add_line(Line2D([steps[p] + 0.32, steps[i] - 0.32], [y[p], y[i]], color=style["ec"],
                               lw=1.0, ls=style["ls"], zorder=1, gid=f"edge-{i}"))
        text = labels[i] if statuses[i] == "start" else f"{labels[i]}\n{log_probs[i]:.2f}"
        ax.text(steps[i], y[i], text, ha="center", va="center", fontsize=MIN_FONT_PT, color=style["color"],
                fontweight="bold" if returned[i] else "normal", zorder=3, gid=f"node-{i}",
                bbox={"boxstyle": "round,pad=0.3", "fc": style["fc"], "ec": style["ec"],
                      "lw": 2.4 if returned[i] else style["lw"], "ls": style["ls"]})
    ax.set_xlim(-0.5, n_steps + 0.5)
    ax.set_ylim(y.min() - 0.7, y.max() + 0.7)
    ax.set_xticks(range(n_steps + 1), ["start"] + [f"step {s}" for s in range(1, n_steps + 1)],
                  fontsize=8)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    handles = [Patch(fc=STATUS_STYLE[s]["fc"], ec=STATUS_STYLE[s]["ec"], ls=STATUS_STYLE[s]["ls"],
                     label=label) for s, label in _LEGEND.items()]
    handles.append(Patch(fc="white", ec=_INK, lw=2.4, label="returned (top_beams)"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, fontsize=MIN_FONT_PT,
              frameon=False)


def _tree_width(steps: np.ndarray) -> float:
    """Inches for a tree of ``steps.max()`` steps: 1.25 per step, within the page."""
    return min(MAX_FIGURE_WIDTH_IN, max(4.0, 1.25 * (int(steps.max()) + 1)))


def plot_beam_tree(parents: Sequence[int], steps: Sequence[int], labels: Sequence[str],
                   log_probs: Sequence[float], statuses: Sequence[str],
                   returned: Sequence[bool] | None = None, *, upto_step: int | None = None,
                   title: str = "", fig: Figure | None = None) -> Figure:
    """Beam search as a tree: each box is a partial translation with its summed log-probability.

    Parameters
    ----------
    parents : index of each node's parent, -1 for the start node.
    steps : each node's step (0 for the start node): the column it is drawn in.
    labels : the word each node adds.   log_probs : cumulative log-probability of each node.
    statuses : "start", "kept", "finished" or "dropped" per node (see :data:`STATUS_STYLE`).
    returned : per node, whether beam search returned it (drawn with a thick edge, bold text).
    upto_step : draw only the nodes up to this step (the layout and limits stay those of the
        whole tree, so the frames of a player line up); default all.
    title : axes title.   fig : a Figure to clear and draw into; a new one by default.

    Returns
    -------
    Figure with one axes: one text per drawn node (gid ``node-<index>``, its box is
    ``text.get_bbox_patch()``), one line per drawn edge (gid ``edge-<index>``), a legend.

    Shapes
    ------
    All sequences have one entry per node (n,).

    Raises
    ------
    ValueError
        If the sequences differ in length, a status is unknown, a parent is not one step
        earlier, or there is no node.

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1.
    """
    parents_arr, steps_arr, values, statuses = _check_tree(parents, steps, labels, log_probs,
                                                           statuses, returned)
    returned = [False] * len(parents_arr) if returned is None else [bool(r) for r in returned]
    upto = int(steps_arr.max()) if upto_step is None else int(upto_step)
    column = np.bincount(steps_arr).max()
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(_tree_width(steps_arr), 0.5 * column + 1.3)
    ax = fig.add_subplot(1, 1, 1)
    _draw_tree(ax, parents_arr, steps_arr, labels, values, statuses, returned, upto,
               None if upto_step is None else upto)
    if title:
        ax.set_title(title, fontsize=9, color=_INK)
    fig.tight_layout()
    return fig


def _draw_scores(ax: Axes, hypotheses: Sequence[str], log_probs: np.ndarray,
                 statuses: Sequence[str], title: str) -> None:
    rows = np.arange(len(hypotheses))
    colors = [STATUS_STYLE[s]["fc"] for s in statuses]
    edges = [STATUS_STYLE[s]["ec"] for s in statuses]
    # Bars grow from the left edge of the axis to the score, so the most probable candidate
    # (closest to 0) has the longest bar; the label sits right of the bar's end.
    low, high = float(np.min(log_probs)), float(np.max(log_probs))
    span = max(high - low, 1.0)
    left = low - 0.25 * span
    ax.barh(rows, np.asarray(log_probs) - left, left=left, color=colors, edgecolor=edges)
    ax.set_yticks(rows, list(hypotheses), fontsize=9)
    ax.invert_yaxis()
    ax.axvline(0, color=_INK, lw=0.6)
    for r, value in zip(rows, log_probs):
        ax.text(value, r, f" {value:.2f}", ha="left", va="center", fontsize=9, color=_INK)
    ax.set_xlim(left, max(high, 0.0) + 0.35 * span)
    ax.set_xlabel("cumulative log-probability (0 is certain)", fontsize=9)
    if title:
        ax.set_title(title, fontsize=9, color=_INK)


def plot_step_scores(hypotheses: Sequence[str], log_probs: Sequence[float],
                     statuses: Sequence[str], *, title: str = "",
                     fig: Figure | None = None) -> Figure:
    """One step's candidates as bars of summed log-probability, coloured kept / finished / dropped.

    Parameters
    ----------
    hypotheses : the candidates' words.   log_probs : their cumulative log-probabilities.
    statuses : their statuses (keys of :data:`STATUS_STYLE`).   title : axes title.
    fig : a Figure to clear and draw into; a new one by default.

    Returns
    -------
    Figure with one axes holding one bar per candidate (``ax.patches``), best at the top.

    Shapes
    ------
    All three sequences (n_candidates,).

    Raises
    ------
    ValueError
        If the lengths differ, there is no candidate or a status is unknown.

    References
    ----------
    Post, end of "The Loss Function".
    """
    n = len(hypotheses)
    if n == 0 or len(log_probs) != n or len(statuses) != n:
        raise ValueError(f"log_probs, statuses: expected {n} (> 0) entries like hypotheses, got "
                         f"{len(log_probs)} and {len(statuses)}")
    bad = [s for s in statuses if s not in STATUS_STYLE]
    if bad:
        raise ValueError(f"statuses: expected values in {tuple(STATUS_STYLE)}, got {bad[0]!r}")
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(5.5, 0.32 * n + 1.0)
    _draw_scores(fig.add_subplot(1, 1, 1), hypotheses, np.asarray(log_probs, dtype=np.float64),
                 statuses, title)
    fig.tight_layout()
    return fig


def plot_beam_step(parents: Sequence[int], steps: Sequence[int], labels: Sequence[str],
                   log_probs: Sequence[float], statuses: Sequence[str],
                   returned: Sequence[bool], hypotheses: Sequence[str], *, step: int,
                   title: str = "", fig: Figure | None = None) -> Figure:
    """One frame of the beam player: the tree up to ``step`` (left), that step's scores (right).

    Parameters
    ----------
    parents, steps, labels, log_probs, statuses, returned : the tree, as in :func:`plot_beam_tree`.
    hypotheses : the full words of every node (used for the bars of the step's candidates).
    step : int >= 1, the step shown.   title : figure title.   fig : Figure to redraw into.

    Returns
    -------
    Figure with two axes: ``axes[0]`` the tree, ``axes[1]`` the bars of step ``step``.

    Shapes
    ------
    All sequences (n,).

    Raises
    ------
    ValueError
        As :func:`plot_beam_tree`; also if ``step`` has no node or ``hypotheses`` has the wrong
        length.

    References
    ----------
    Post, end of "The Loss Function".
    """
    parents_arr, steps_arr, values, statuses = _check_tree(parents, steps, labels, log_probs,
                                                           statuses, returned)
    if len(hypotheses) != len(parents_arr):
        raise ValueError(f"hypotheses: expected {len(parents_arr)} entries, got {len(hypotheses)}")
    here = [i for i in range(len(steps_arr)) if steps_arr[i] == step]
    if step < 1 or not here:
        raise ValueError(f"step: expected a step in [1, {steps_arr.max()}], got {step!r}")
    column = np.bincount(steps_arr).max()
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    tree_w = _tree_width(steps_arr)
    if tree_w + 4.2 <= MAX_FIGURE_WIDTH_IN:  # side by side
        fig.set_size_inches(tree_w + 4.2, 0.5 * column + 1.5)
        grid = fig.add_gridspec(1, 2, width_ratios=[tree_w, 3.4])
    else:  # the scores under the tree: the same size at every step, for players
        tree_h, bar_h = 0.5 * column + 1.3, 0.32 * column + 1.0
        fig.set_size_inches(max(tree_w, 5.5), tree_h + bar_h + 0.4)
        grid = fig.add_gridspec(2, 1, height_ratios=[tree_h, bar_h])
    tree_ax, bar_ax = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    _draw_tree(tree_ax, parents_arr, steps_arr, labels, values, statuses,
               [bool(r) for r in returned], step, step)
    _draw_scores(bar_ax, [hypotheses[i] for i in here], values[here],
                 [statuses[i] for i in here], f"candidates at step {step}")
    if title:
        fig.suptitle(title, fontsize=10, color=_INK)
    fig.tight_layout()
    return fig


def plot_length_penalty(lengths: Sequence[int], penalties: Sequence[Sequence[float]],
                        alphas: Sequence[float], *, title: str = "") -> Figure:
    """The GNMT length penalty against the output length, one line per α.

    Parameters
    ----------
    lengths : output lengths (x).   penalties : (n_alpha, n_lengths) values ((5+len)/6)**α.
    alphas : the α of each row.   title : axes title.

    Returns
    -------
    Figure with one axes and one line per α (``ax.lines``), labelled "α = ...".

    Shapes
    ------
    ``penalties`` (len(alphas), len(lengths)).

    Raises
    ------
    ValueError
        If ``penalties`` does not have that shape.

    References
    ----------
    Wu et al. 2016, Eq. 14; paper §6.1.
    """
    table = np.asarray(penalties, dtype=np.float64)
    if table.shape != (len(alphas), len(lengths)):
        raise ValueError(f"penalties: expected shape ({len(alphas)}, {len(lengths)}), got "
                         f"{table.shape}")
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    for alpha, row in zip(alphas, table):
        ax.plot(lengths, row, marker="o", ms=3, label=f"α = {alpha:g}")
    ax.set(xlabel="output length (tokens, <eos> included)", ylabel="penalty ((5 + len) / 6)^α")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10, color=_INK)
    fig.tight_layout()
    return fig


def plot_alpha_scores(alphas: Sequence[float], scores: Sequence[Sequence[float]],
                      hypotheses: Sequence[str], best: Sequence[int], *,
                      current: int | None = None, title: str = "",
                      fig: Figure | None = None) -> Figure:
    """Each returned hypothesis's length-penalised score against α; the winner at each α marked.

    Parameters
    ----------
    alphas : the α values (x), (n_alpha,).   scores : (n_alpha, n_hyp), NaN where a hypothesis
    was not returned.   hypotheses : their words, (n_hyp,).   best : index of the winner at each α.
    current : index of one α to mark with a vertical line and name its winner in the title.
    title : title (the current winner is added below it).   fig : a Figure to redraw into.

    Returns
    -------
    Figure with one axes: one line per hypothesis (``ax.lines[:n_hyp]``, labelled by its words),
    star markers on the winners, and the vertical line when ``current`` is given.

    Shapes
    ------
    ``scores`` (n_alpha, n_hyp).

    Raises
    ------
    ValueError
        For mismatched shapes or ``current`` out of range.

    References
    ----------
    Wu et al. 2016, Eq. 14; paper §6.1.
    """
    table = np.asarray(scores, dtype=np.float64)
    alphas_arr = np.asarray(alphas, dtype=np.float64)
    best_arr = np.asarray(best, dtype=int)
    if table.shape != (len(alphas_arr), len(hypotheses)) or best_arr.shape != alphas_arr.shape:
        raise ValueError(f"scores, best: expected shapes ({len(alphas_arr)}, {len(hypotheses)}) "
                         f"and ({len(alphas_arr)},), got {table.shape} and {best_arr.shape}")
    if current is not None and not 0 <= current < len(alphas_arr):
        raise ValueError(f"current: expected an index in [0, {len(alphas_arr)}), got {current!r}")
    fig = fig if fig is not None else plt.figure()
    fig.clear()
    fig.set_size_inches(7.5, 3.6)
    ax = fig.add_subplot(1, 1, 1)
    for h, words in enumerate(hypotheses):
        ax.plot(alphas_arr, table[:, h], marker="o", ms=3, label=words)
    ax.plot(alphas_arr, table[np.arange(len(alphas_arr)), best_arr], ls="none", marker="*",
            ms=11, color=COLORS["key"], label="chosen translation", zorder=3)
    heading = title
    if current is not None:
        ax.axvline(alphas_arr[current], color=_INK, lw=1.0, ls=":", gid="current-alpha")
        winner = hypotheses[best_arr[current]]
        line = (f"α = {alphas_arr[current]:g}: chosen '{winner}', "
                f"score {table[current, best_arr[current]]:.3f}")
        heading = f"{title}\n{line}" if title else line
    ax.set(xlabel="length-penalty exponent α", ylabel="log-prob / ((5 + len) / 6)^α")
    ax.legend(fontsize=MIN_FONT_PT, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    if heading:
        ax.set_title(heading, fontsize=9, color=_INK)
    fig.tight_layout()
    return fig
