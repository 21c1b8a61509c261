"""Chapter 10: the playground. Train a model in the page, translate, and train on your own pairs."""
from __future__ import annotations

import shlex
import tempfile
import subprocess
import sys
import textwrap
from dataclasses import asdict, replace
from pathlib import Path

import ipywidgets as widgets
from IPython.display import HTML, display
import matplotlib.pyplot as plt
from matplotlib.transforms import blended_transform_factory

from ..commands.web_export import page_schema
from ..config import TINY
from ..data import CORPORA, load_corpus, tokenize
from ..data.pairs_file import build_vocab, read_pairs, split_pairs
from ..modules import Transformer
from ..pretrained_models import SETTINGS, make_config, pretrained
from ..recipe import PAGE_MODEL_LIMITS, Recipe, page_fields, recipe_fields
from ..training.referent import labels
from ..inference.tracing import trace
from ..files.checkpoint import save_checkpoint
from ..inference.translate import exact_match, translate
from ..training.loop import set_seed, train
from . import interactive as ia
from . import runs
from .kit import (COLORS, DESKTOP_WIDTH_IN, DPI, MIN_FONT_PT, PHONE_TEXT_CHARS, colorbar, heatmap,
                  narrow, wrap)


def trained_lengths(corpus: str) -> tuple[int, int]:
    """Shortest and longest source sentence (in words) of a corpus's training split."""
    pairs, src_vocab, _ = load_corpus(corpus, "train")
    lengths = [len(src_vocab.encode(source)) for source, _ in pairs]
    return min(lengths), max(lengths)


def corpus_summary(corpus: str, width: int = PHONE_TEXT_CHARS) -> str:
    """A corpus's pairs, source lengths in words and first pair, in lines of at most ``width``."""
    pairs, _, _ = load_corpus(corpus, "train")
    shortest, longest = trained_lengths(corpus)
    lengths = f"{shortest}" if shortest == longest else f"{shortest}-{longest}"
    source, target = pairs[0]
    return "\n".join([f"{corpus}: {len(pairs)} pairs, {lengths} words",
                      textwrap.fill(source, width, initial_indent="  ", subsequent_indent="  "),
                      textwrap.fill(target, width, initial_indent="  → ", subsequent_indent="    ")])


def train_with_snapshots(corpus: str, sentences, *, at=(10, 20, 30, 40, 60, 100, 200, 400),
                         seed: int = 0, **overrides):
    """Train a corpus's default recipe, translating ``sentences`` before and at the steps ``at``."""
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    set_seed(seed)
    model = Transformer(make_config(corpus, src_vocab, tgt_vocab))
    snapshots = {0: translate(model, sentences, src_vocab, tgt_vocab)}

    def callback(step, history):
        if step in at:
            snapshots[step] = translate(model, sentences, src_vocab, tgt_vocab)

    history = train(model, pairs, src_vocab, tgt_vocab, **{**SETTINGS[corpus]["train"], **overrides},
                    seed=seed, callback=callback, progress=False)
    return model, history, snapshots


def draw_training(history, snapshots, sentences, step: int, *,
                  width: float = DESKTOP_WIDTH_IN):
    """The loss up to ``step`` (log scale) beside what the model translates at that step (below
    it in a phone's column)."""
    phone = narrow(width)
    if phone:
        fig, (left, right) = plt.subplots(2, 1, figsize=(width, 3.0 + 0.5 * len(sentences)),
                                          dpi=DPI, layout="constrained",
                                          height_ratios=[2.4, 0.5 * len(sentences)])
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3), dpi=DPI, layout="constrained",
                                          width_ratios=[1, 1.25])
    steps = range(1, len(history.loss) + 1)
    left.plot(steps, history.loss, color="#cfd8dc", lw=1)
    left.plot(steps[:step], history.loss[:step], color=COLORS["query"], lw=1.5)
    left.set(yscale="log", xlabel="training step", ylabel="loss (nats per word)")
    left.set_title(f"after {step} steps", fontsize=10)
    right.axis("off")
    right.set_title("its translations", fontsize=10)
    # on a phone from the column's left edge, each output cut to what the column holds
    at = blended_transform_factory(fig.transFigure, right.transAxes) if phone else right.transAxes
    for i, (source, output) in enumerate(zip(sentences, snapshots[step])):
        right.text(0.02 if phone else 0, 1 - (1 / len(sentences) if phone else 0.3) * i,
                   f"{source}\n→ {_cut(output, 40 if phone else 56)}", va="top", fontsize=9,
                   transform=at, in_layout=False)
    return fig


def _cut(output: str, chars: int) -> str:
    """``output``'s first words, as many as fit ``chars`` characters, then "…"; "(nothing)" if empty."""
    kept = []
    for word in output.split():
        if len(" ".join(kept + [word])) > chars - 2:
            return " ".join(kept) + " …"
        kept.append(word)
    return " ".join(kept) or "(nothing)"


def training_figure(history, snapshots, sentences):
    """The training run as one figure with a step slider and play."""
    return ia.interactive(lambda step, width: draw_training(history, snapshots, sentences, step,
                                                            width=width),
                          [ia.slider("step", sorted(snapshots), max(snapshots))],
                          alt="the training loss falling over the steps, and the model's "
                              "translations of three test sentences at each step", play=True)


def draw_cross_attention(model, sentence, src_vocab, tgt_vocab, *,
                         width: float = DESKTOP_WIDTH_IN):
    """Encoder-decoder attention of the last decoder layer, mean of its heads, for a translation."""
    t = trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
              max_len=model.cfg.max_len - 1)
    weights = t.cross_attention()[-1].mean(axis=0)  # (out_len, src_len)
    phone = narrow(width)
    cell = min(0.6, (width - 1.6) / weights.shape[1]) if phone else 0.6
    fig, ax = plt.subplots(figsize=(1.2 + cell * weights.shape[1] + 0.4 * (not phone),
                                    1 + 0.4 * weights.shape[0] + 0.6 * phone),
                           dpi=DPI, layout="constrained")
    image = heatmap(ax, weights, row_labels=t.target_tokens, col_labels=t.source_tokens,
                    annotate=weights.shape[1] <= 8 and cell >= 0.4, vmin=0, vmax=1,
                    col_rotation=30)
    title = f"encoder-decoder attention, layer {len(t.decoder_layers) - 1}, mean of heads"
    ax.set_title(wrap(title, 34) if phone else title, fontsize=MIN_FONT_PT + 1)
    colorbar(fig, image, ax, below=phone)
    return fig


def _kernel(corpus: str, sentence: str):
    """The playground in a kernel: pick a corpus and steps, Train, then translate a sentence."""
    choice = widgets.Dropdown(options=list(CORPORA), value=corpus, description="corpus")
    steps = widgets.IntSlider(value=Recipe(**SETTINGS[corpus]["train"]).steps, min=10,
                              max=train_limits()["steps"][1], step=10, description="steps")
    button = widgets.Button(description="Train")
    box = widgets.Text(value=sentence, description="sentence", continuous_update=False)
    state = {}

    def show(control):
        if control is button:
            print(f"training {choice.value} for {steps.value} steps...")
            button.disabled = True
            pairs, src_vocab, tgt_vocab = load_corpus(choice.value, "train")
            set_seed(0)
            state["model"] = Transformer(make_config(choice.value, src_vocab, tgt_vocab))
            state["vocabs"] = (src_vocab, tgt_vocab)
            train(state["model"], pairs, src_vocab, tgt_vocab,
                  **{**SETTINGS[choice.value]["train"], "steps": steps.value}, progress=False)
            if choice.value != corpus:
                box.value = load_corpus(choice.value, "test")[0][0][0]
            button.disabled = False
        if "model" in state:
            return draw_cross_attention(state["model"], box.value, *state["vocabs"])
        return None

    return ia.twin([[choice, steps, button], box], show, watch=[button, box])


def translate_widget(corpus: str = "fr-en", sentence: str = "nous avons la voiture rouge"):
    """The shipped models translate the reader's sentence in the page; in Colab, train your own."""
    examples = {c: sentence if c == corpus else load_corpus(c, "test")[0][0][0] for c in CORPORA}
    params = {"corpus": corpus, "sentence": sentence, "corpora": list(CORPORA), "topK": 5,
              "examples": examples}
    model, src_vocab, tgt_vocab = pretrained(corpus)
    return ia.live("translate", params, alt=f"the shipped {corpus} model's translation of "
                   f"'{sentence}' and its encoder-decoder attention",
                   kernel=lambda: _kernel(corpus, sentence),
                   default=lambda width: draw_cross_attention(model, sentence, src_vocab, tgt_vocab,
                                                              width=width))


def train_limits() -> dict:
    """The page's limits of the training widget's number controls, {page name: (low, high)}: the
    Recipe's page limits and :data:`illustrated.recipe.PAGE_SETTINGS`'."""
    page = {name: f.metadata["page"] for name, f in recipe_fields().items()}
    page.update(PAGE_MODEL_LIMITS)
    return {f["name"]: tuple(page[f["field"]]) for f in page_fields() if f["control"] == "number"}


def recipe(corpus: str) -> dict:
    """A corpus's presets.SETTINGS recipe with the Recipe's defaults, as the training widget
    reads it (page names, :func:`illustrated.recipe.page_fields`; ``normFirst`` "post" or
    "pre"); ``referentWeight`` only for a corpus with "it" labels (illustrated.training.referent)."""
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    cfg, t = make_config(corpus, src_vocab, tgt_vocab), Recipe(**SETTINGS[corpus]["train"])
    values = {**asdict(cfg), **asdict(t), "norm_first": "pre" if cfg.norm_first else "post"}
    out = {f["name"]: values[f["field"]] for f in page_fields() if f["field"] in values}
    if not any(labels([s for s, _ in pairs], [src_vocab.encode(s) for s, _ in pairs])):
        del out["referentWeight"]  # the "it" objective's switch only where labels exist
    return out


def train_widget(corpus: str = "fr-en", corpora=CORPORA, *, compare=None, own_pairs=None,
                 **changes):
    """Train a tiny Transformer in the page (site/js/widgets/train.js, jax-js in a Web Worker) with a
    corpus's recipe or the reader's changes (``changes``: the page's option names, e.g.
    ``labelSmoothing=0.1``); every run is kept on one chart and in a table (site/js/widgets/runs.js).
    ``compare``: (option, [value, value]) trained one after the other by one button, e.g.
    ``("normFirst", ["post", "pre"])``. ``own_pairs`` (default: where nothing is compared) also
    offers "your pairs", typed or pasted into a box or read from a .tsv file, as
    ``python -m illustrated train --pairs`` reads them. In Jupyter and Colab the same controls
    train with PyTorch."""
    settings = {c: {**recipe(c), **(changes if c == corpus else {})} for c in corpora}
    params = {"corpus": corpus, "corpora": list(corpora), "settings": settings,
              "floors": {c: runs.floors(c) for c in corpora},
              "baselines": {c: runs.frequency_loss(c) for c in corpora}}
    if compare:
        params["compare"] = {"option": compare[0], "values": list(compare[1])}
    params["references"] = references(corpus, settings, compare)
    if compare is None if own_pairs is None else own_pairs:
        params["ownPairs"] = True
    return ia.live("train", params, alt=f"a training run of the {corpus} corpus in the page: "
                   "its loss curve beside the earlier runs, translations every 50 steps and "
                   "exact match",
                   kernel=lambda: _train_kernel(corpus, list(corpora), settings, params))


def references(corpus: str, settings: dict, compare=None) -> list[dict]:
    """The runs PyTorch trains when the book is built (book/runs.py's reference), drawn faint
    under a run of the same corpus in the page: each corpus's recipe and, for ``compare``, each
    compared value on ``corpus``; named as the page names a run with those settings. A run
    too long to train at build time (runs.reference_estimate) is left out."""
    always = (["corpus"] if len(settings) > 1 else []) + ([compare[0]] if compare else [])
    wanted = [(c, v) for c, v in settings.items() if not (compare and c == corpus)]
    wanted += [(corpus, {**settings[corpus], compare[0]: x}) for x in compare[1]] if compare else []
    out = []
    for c, v in wanted:
        named = always + (["referentWeight"] if "referentWeight" in v else [])
        name = runs.run_name({"corpus": c, **v}, {**settings[c], "corpus": corpus}, named)
        out.append(runs.reference(c, {"referentWeight": 0.0, **v}, name))
    return [r for r in out if r]


def _train_controls(corpus: str, settings: dict) -> dict:
    """The training widget's settings in a kernel, set to ``corpus``'s: its controls as the page
    shows them (:func:`illustrated.recipe.page_fields`), a bounded number box per number."""
    style = {"description_width": "initial"}
    limits, controls, now = train_limits(), {}, settings[corpus]
    for f in page_fields():
        key = f["name"]
        if f["control"] == "number":
            box = widgets.BoundedIntText if isinstance(now[key], int) else widgets.BoundedFloatText
            lo, hi = limits[key]
            controls[key] = box(value=now[key], min=lo, max=hi, description=f["label"], style=style)
        elif f["control"] == "menu" and f["options"]:
            controls[key] = widgets.Dropdown(options=[(label, v) for v, label in f["options"]],
                                             value=now[key], description=f["label"], style=style)
        elif f["control"] == "switch":  # offered where the corpus has "it" labels
            controls[key] = widgets.Checkbox(value=bool(now.get(key)), style=style,
                                             description=f["label"], disabled=key not in now)
    return controls


def _train_printing(c: str, v: dict, out, button, own=None):
    """A model trained with PyTorch on corpus ``c`` with the settings ``v``, its progress and
    three test translations printed in ``out`` every 50 steps, ``button`` disabled meanwhile.
    ``own``: (train pairs, test pairs, src_vocab, tgt_vocab, config) of the reader's pairs.
    Returns the model, its config, the history, the vocabularies and the test pairs."""
    test = own[1] if own else load_corpus(c, "test")[0]

    def callback(step, history, model, vocabs):
        if step % 50 and step != v["steps"]:
            return
        with out:
            out.clear_output(wait=True)
            seconds = history.seconds[-1]
            print(f"step {step} of {v['steps']}, loss {history.loss[-1]:.3f}, "
                  f"{1000 * seconds / step:.0f} ms per step")
            for (source, _), output in zip(test, translate(model, [s for s, _ in test[:3]],
                                                           *vocabs)):
                print(f"  {source} -> {output}")
    button.disabled = True
    try:
        data = (own[0], *own[2:]) if own else None
        model, cfg, history, vocabs = runs.train_values(c, v, callback=callback, data=data)
    finally:
        button.disabled = False
    return model, cfg, history, vocabs, test


def pairs_settings() -> dict:
    """The settings of "your pairs" (page names): the ``tiny`` preset's sizes and recipe, as
    ``python -m illustrated train --pairs`` and the page (pairs_box.js) use them."""
    own = page_schema()["x-pairs"]
    c, t = own["config"], own["train_settings"]
    return {"steps": t["steps"], "lr": t["lr"], "warmup": t["warmup"],
            "labelSmoothing": t["label_smoothing"], "dModel": c["d_model"],
            "nHeads": c["n_heads"], "nLayers": c["n_layers"], "seed": Recipe().seed,
            "schedule": t["schedule"], "normFirst": "pre" if c["norm_first"] else "post"}


def read_own_pairs(text: str, seed: int):
    """The reader's pairs typed in a kernel's box, read as ``python -m illustrated train
    --pairs`` reads a file: (train pairs, test pairs, src_vocab, tgt_vocab, the tiny config
    sized for them). Raises ValueError naming the line, as read_pairs does."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "your-pairs.tsv"
        path.write_text(text, encoding="utf-8")
        try:
            pairs = read_pairs(path)
        except ValueError as error:  # named by its line, as the page names it
            raise ValueError(str(error).replace(f"{path}:", "line ")) from None
    train_pairs, test_pairs = split_pairs(pairs, seed=seed)
    src_vocab = build_vocab([s for s, _ in train_pairs])
    tgt_vocab = build_vocab([t for _, t in train_pairs])
    own = page_schema()["x-pairs"]["config"]
    longest = max(max(len(tokenize(s)), len(tokenize(t)) + 1) for s, t in pairs)
    cfg = replace(TINY, **{k: own[k] for k in ("d_model", "n_heads", "d_ff", "n_layers")},
                  max_len=max(own["max_len"], longest + 1), src_vocab_size=len(src_vocab),
                  tgt_vocab_size=len(tgt_vocab), pad_id=src_vocab.pad_id,
                  tgt_pad_id=tgt_vocab.pad_id)
    return train_pairs, test_pairs, src_vocab, tgt_vocab, cfg


def _unique_name(name: str, kept: list) -> str:
    """``name``, or ``name (2)``, ``name (3)``... where a kept run has it already."""
    taken = sum(r["name"] == name or r["name"].startswith(f"{name} (") for r in kept)
    return f"{name} ({taken + 1})" if taken else name


def _train_kernel(corpus: str, corpora: list, settings: dict, params: dict):
    """The training widget in a kernel: the same controls, trained with PyTorch (il.train), and
    every run of the session kept on one chart and in a table (book/runs.py)."""
    own = params.get("ownPairs")
    if own:  # the reader's pairs, typed or pasted into a box
        settings = {**settings, "pairs": pairs_settings()}
    controls = _train_controls(corpus, settings)
    choice = widgets.Dropdown(options=[(c, c) for c in corpora] + ([("your pairs", "pairs")] if own
                                                                   else []),
                              value=corpus, description="corpus")
    box = widgets.Textarea(placeholder="je suis étudiant\ti am a student\nmerci\tthanks",
                           description="your pairs", layout=widgets.Layout(
                               width="100%", height="8em", display="none"))
    button, out, bench = widgets.Button(description="Train"), widgets.Output(), widgets.Output()
    log = widgets.Checkbox(description="log scale")
    clear, remove = widgets.Button(description="Clear runs"), widgets.Button(description="Remove")
    pick = widgets.Dropdown(options=[], description="run")
    kept = []  # every run of this kernel session
    compare = params.get("compare")
    both = widgets.Button(description="Train " + ", then ".join(
        runs.say(compare["option"], v) for v in compare["values"])) if compare else None

    def fill(_=None):
        box.layout.display = "" if choice.value == "pairs" else "none"
        for key, control in controls.items():
            if key == "referentWeight":  # a switch, offered where the corpus has "it" labels
                weight = settings[choice.value].get(key)
                control.value, control.disabled = bool(weight), weight is None
            else:
                control.value = settings[choice.value][key]

    def show(_=None):
        pick.options = [r["name"] for r in kept]
        with bench:
            bench.clear_output(wait=True)
            if kept:
                display(runs.draw_runs(kept, log=log.value))
                plt.close("all")
                display(HTML(runs.table_html(kept)))

    def run(_=None):
        c, v = choice.value, {k: w.value for k, w in controls.items()}
        v["referentWeight"] = settings[c].get("referentWeight", 0.0) if v["referentWeight"] else 0.0
        try:
            mine = read_own_pairs(box.value, v["seed"]) if c == "pairs" else None
        except ValueError as error:  # the line and what was expected, as the command line says
            with out:
                out.clear_output()
                print(f"Not trained: {error}")
            return
        model, cfg, history, (src_vocab, tgt_vocab), test = _train_printing(c, v, out, button,
                                                                            mine)
        values = {"corpus": c, **v}
        if "referentWeight" not in settings[c]:  # no "it" labels: the switch is not a setting
            del values["referentWeight"]
        # As the page names a run: by its corpus where the widget offers several, by the compared
        # option, and by the "it" objective where it is offered (on or off).
        always = (["corpus"] if len(choice.options) > 1 else []) + (
            [compare["option"]] if compare else []) + [k for k in ("referentWeight",) if k in values]
        name = _unique_name(runs.run_name(values, {**settings[c], "corpus": corpus}, always), kept)
        file = f"run{len(kept) + 1}-{c}.pt"
        save_checkpoint(file, model, (src_vocab, tgt_vocab), cfg)
        kept.append({"name": name, "losses": history.loss, "seconds": history.seconds[-1],
                     "settings": ", ".join(runs.say(k, x) for k, x in values.items()),
                     "exact_match": exact_match(model, test, src_vocab, tgt_vocab), "file": file,
                     "floor": runs.floor_at(params["floors"].get(c, []), v["labelSmoothing"]),
                     "baseline": params.get("baselines", {}).get(c, 0)})
        show()

    def run_both(_=None):
        for value in compare["values"]:
            controls[compare["option"]].value = value
            run()

    choice.observe(fill, names="value")
    log.observe(show, names="value")
    button.on_click(run)
    clear.on_click(lambda _: (kept.clear(), show()))
    remove.on_click(lambda _: (kept.remove(next(r for r in kept if r["name"] == pick.value)), show())
                    if pick.value else None)
    if both:
        both.on_click(run_both)
    fill()
    return widgets.VBox([choice, widgets.HBox(list(controls.values()),
                                              layout=widgets.Layout(flex_flow="row wrap")),
                         widgets.HBox([w for w in (button, both, log) if w]), box, out, bench,
                         widgets.HBox([pick, remove, clear])])


def cli(*args, cwd=None, fails: bool = False) -> None:
    """Run ``python -m illustrated ARGS`` as a terminal would and print the command and output;
    raise unless it ended as expected (``fails``: with an error, exit code 2)."""
    print("$ python -m illustrated " + " ".join(shlex.quote(a) for a in args))
    result = subprocess.run([sys.executable, "-m", "illustrated", *args], cwd=cwd,
                            capture_output=True, text=True)
    print(result.stdout + result.stderr, end="")
    if result.returncode != (2 if fails else 0):
        raise RuntimeError(f"python -m illustrated {args[0]} exited with {result.returncode}")
