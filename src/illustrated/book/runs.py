"""The training widget's run bench in a kernel (the twin of site/js/widgets/runs.js): every run kept,
named by what differs from the recipe, drawn on one chart with the label-smoothing floor, and
listed in a table. The floors the page draws come from here too (train_widget's params)."""
from __future__ import annotations

import html
from collections import Counter
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np

from ..data import load_corpus
from ..modules import Transformer
from ..pretrained_models import make_config, manifest
from ..recipe import D_FF_PER_D_MODEL, page_fields, recipe_fields
from ..reference import smooth_labels
from ..training.loop import set_seed, train
from . import kit
from .ch08 import entropy

#: The floors' grid: label smoothing in this many equal steps from 0 to the page's highest (the
#: page draws a floor where ε is on the grid, reading the step from the floors' count).
FLOOR_STEPS = 50


def _written(value) -> str:
    """A value as the page writes it: 0.1, 1 (not 1.0), 1e-05, "pre"."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def say(key: str, value) -> str:
    """One setting (its page name) as a run's name says it: "pre-LN", "lr 0.01", "1 layer"."""
    shown = next(f for f in page_fields() if f["name"] == key)
    return shown["said_at"].get(_written(value), shown["said"].replace("{}", _written(value)))


def run_name(values: dict, recipe: dict, always=()) -> str:
    """What differs from ``recipe`` (and the settings in ``always``, e.g. the compared one)."""
    said = [say(k, v) for k, v in values.items() if k in always or v != recipe.get(k)]
    return ", ".join(said) or "the recipe"


def floor_grid() -> list[float]:
    """The label-smoothing values the floors are drawn at: 0 to the page's highest, in
    :data:`FLOOR_STEPS` steps."""
    high = recipe_fields()["label_smoothing"].metadata["page"][1]
    return [round(i * high / FLOOR_STEPS, 10) for i in range(FLOOR_STEPS + 1)]


def floor_at(floors_of_corpus: list, eps: float) -> float:
    """The floor at label smoothing ``eps`` where it is on the grid (:func:`floor_grid`), else 0."""
    step = floor_grid()[1]
    i = round(eps / step)
    return floors_of_corpus[i] if abs(i * step - eps) < 1e-9 and i < len(floors_of_corpus) else 0


def floors(corpus: str) -> list[float]:
    """The lowest loss reachable with label smoothing ε on :func:`floor_grid`, for the corpus's
    output vocabulary: the entropy of the smoothed target (it does not depend on the word), nats."""
    size = len(load_corpus(corpus, "train")[2])
    return [round(entropy(smooth_labels([0], size, eps)[0]), 4) + 0.0  # (no -0.0)
            for eps in floor_grid()]


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


def train_values(corpus: str, v: dict, callback=None, data=None):
    """A model trained with PyTorch (il.train) on ``corpus``'s training pairs with the page's
    settings ``v`` (page names: steps, lr, dModel, normFirst "post"/"pre", referentWeight...).
    ``callback(step, history, model, (src_vocab, tgt_vocab))`` after each step. Returns the
    model, its config, the History and the vocabularies. ``data``: (pairs, src_vocab, tgt_vocab,
    config) to train on instead of a corpus (the reader's own pairs)."""
    pairs, src_vocab, tgt_vocab, base = data or (*load_corpus(corpus, "train"), None)
    set_seed(v["seed"])
    sizes = dict(d_model=v["dModel"], n_heads=v["nHeads"], d_ff=D_FF_PER_D_MODEL * v["dModel"],
                 n_layers=v["nLayers"], norm_first=v["normFirst"] == "pre")
    cfg = replace(base, **sizes) if base else make_config(corpus, src_vocab, tgt_vocab, **sizes)
    model = Transformer(cfg)
    history = train(model, pairs, src_vocab, tgt_vocab, steps=v["steps"], lr=v["lr"],
                    warmup=v["warmup"], schedule=v["schedule"],
                    label_smoothing=v["labelSmoothing"], seed=v["seed"],
                    referent_weight=v.get("referentWeight", 0.0), progress=False,
                    callback=callback and (lambda step, h: callback(step, h, model,
                                                                    (src_vocab, tgt_vocab))))
    return model, cfg, history, (src_vocab, tgt_vocab)


#: A reference run is trained when the book is built only where its estimate is at most this
#: many seconds (the shipped model's seconds per step, from the manifest, times the steps).
REFERENCE_BUDGET_S = 15.0


def reference_estimate(corpus: str, v: dict) -> float:
    """Seconds a run of ``v["steps"]`` steps on ``corpus`` takes on one CPU thread, estimated
    from the shipped model's training (manifest's train_seconds over its steps), scaled by the
    layers and d_model against the shipped model's."""
    shipped = manifest()["models"][corpus]
    size = {"n_layers": 2, "d_model": 32, **shipped["settings"]["model"]}
    per_step = shipped["train_seconds"] / shipped["settings"]["train"]["steps"]
    scale = v["nLayers"] / size["n_layers"] * max(v["dModel"] / size["d_model"], 1.0)
    return per_step * v["steps"] * scale


def reference(corpus: str, v: dict, name: str) -> dict | None:
    """The loss per step that PyTorch gives ``corpus`` with the page's settings ``v`` when the
    book is built: {corpus, values, name, losses (4 decimals)}, drawn faint under a run of the
    same corpus; None where :func:`reference_estimate` is over :data:`REFERENCE_BUDGET_S`."""
    if reference_estimate(corpus, v) > REFERENCE_BUDGET_S:
        return None
    history = train_values(corpus, v)[2]
    return {"corpus": corpus, "values": v, "name": name,
            "losses": [round(float(x), 4) for x in history.loss]}
