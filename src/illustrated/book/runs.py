"""The training widget's run bench in a kernel (the twin of site/js/runs.js): every run kept,
named by what differs from the recipe, drawn on one chart with the label-smoothing floor, and
listed in a table. The floors the page draws come from here too (train_widget's params)."""
from __future__ import annotations

import html
from collections import Counter

import matplotlib.pyplot as plt
import numpy as np

from ..data import load_corpus
from ..reference import smooth_labels
from . import kit
from .ch08 import entropy

#: How a run's name says one setting (the page's option names; site/js/runs.js says the same).
SAID = {"corpus": "{}", "steps": "{} steps", "lr": "lr {}", "warmup": "warm-up {}",
        "schedule": "{}", "labelSmoothing": "label smoothing {}", "dModel": "d_model {}",
        "nHeads": "{} heads", "nLayers": "{} layers", "seed": "seed {}"}
#: The floors' grid: label smoothing 0, 0.01, ..., 0.5 (the page draws one where ε is on it).
FLOOR_STEPS = 50


def say(key: str, value) -> str:
    """One setting as a run's name says it: "pre-LN", "lr 0.01", "label smoothing 0.1"."""
    if key == "normFirst":
        return f"{value}-LN"
    if value == 1 and key in ("nLayers", "nHeads", "steps"):  # "1 layer", not "1 layers"
        return SAID[key][:-1].format(1)
    if key == "referentWeight":  # the "it" objective's switch
        return (f"“it” objective{'' if value == 1 else f' x{value:g}'}" if value > 0
                else "no “it” objective")
    return SAID[key].format(f"{value:g}" if isinstance(value, float) else value)


def run_name(values: dict, recipe: dict, always=()) -> str:
    """What differs from ``recipe`` (and the settings in ``always``, e.g. the compared one)."""
    said = [say(k, v) for k, v in values.items() if k in SAID or k in ("normFirst", "referentWeight")
            if k in always or v != recipe.get(k)]
    return ", ".join(said) or "the recipe"


def floors(corpus: str) -> list[float]:
    """The lowest loss reachable with label smoothing ε = i / 100, i = 0..50, for the corpus's
    output vocabulary: the entropy of the smoothed target (it does not depend on the word), nats."""
    size = len(load_corpus(corpus, "train")[2])
    return [round(entropy(smooth_labels([0], size, i / 100)[0]), 4) + 0.0  # (no -0.0)
            for i in range(FLOOR_STEPS + 1)]


#: How the chart names the loss of knowing only how often each token occurs (chapter 06's words).
FREQUENCY_SAID = "knows only how often each token occurs"


def frequency_loss(corpus: str) -> float:
    """The loss of a model that knows only how often each target token occurs (<eos> included)
    in the corpus's training pairs: the entropy of that unigram distribution, nats. A model
    whose loss stays there has learned nothing about the source."""
    pairs = load_corpus(corpus, "train")[0]
    counts = Counter(w for _, target in pairs for w in target.split() + ["<eos>"])
    p = np.array(list(counts.values()), dtype=np.float64) / sum(counts.values())
    return round(float(-(p * np.log(p)).sum()), 4)


def draw_runs(runs: list[dict], *, log: bool = False, width: float = kit.DESKTOP_WIDTH_IN):
    """Every run's loss per step on one chart (``runs``: dicts with name, losses, floor and
    baseline), each named in the legend; a run with label smoothing has its floor dashed in its
    colour, and each corpus's frequency-only loss (:func:`frequency_loss`) is dashed grey."""
    phone = kit.narrow(width)
    fig, ax = plt.subplots(figsize=(width, 3.6 if phone else 3.2), dpi=kit.DPI,
                           layout="constrained")
    for i, run in enumerate(runs):
        color = plt.get_cmap("tab10")(i % 10)
        ax.plot(range(1, len(run["losses"]) + 1), run["losses"], color=color, lw=1.5,
                label=run["name"])
        if run.get("floor"):
            ax.axhline(run["floor"], color=color, lw=1, ls="--",
                       label=f"floor of {run['name']}: {run['floor']:.3f}")
    for baseline in sorted({run["baseline"] for run in runs if run.get("baseline")}):
        ax.axhline(baseline, color=kit.COLORS["muted"], lw=1, ls=(0, (2, 3)),
                   label=f"{FREQUENCY_SAID}: {baseline:.3f}")
    ax.set(xlabel="step", ylabel="loss (nats)", yscale="log" if log else "linear")
    ax.tick_params(labelsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    if runs and phone:  # under the plot, where it hides no curve
        ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    elif runs:
        ax.legend(fontsize=9, frameon=False, loc="upper right")
    return fig


def table_html(runs: list[dict]) -> str:
    """The runs as an HTML table: name, settings, time, final loss, exact match, file."""
    head = ("run", "settings", "time", "final loss", "exact match", "file")
    rows = [(r["name"], r["settings"], f"{r['seconds']:.1f} s", f"{r['losses'][-1]:.3f}",
             f"{100 * r['exact_match']:.1f} %", r["file"]) for r in runs]
    cells = lambda row, tag: "".join(f"<{tag}>{html.escape(str(c))}</{tag}>" for c in row)  # noqa: E731
    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    return f"<table><thead><tr>{cells(head, 'th')}</tr></thead><tbody>{body}</tbody></table>"
