"""Does some encoder head of layer >= 2 route "it" to its referent? A search over recipes.

Issue 13: the post's figure 10 shows a head of a large model pointing "it" at "The animal". This
script trains the coreference corpus (``il.data.load_corpus("coreference")``) under several model
sizes and training recipes, seeds 0-4, and measures whether any encoder head of layer 2 or
higher looks from "it" to the noun it refers to.

Score (per trained model, per encoder layer >= 2 counted from 1, per head), on the corpus's test
split. Every test sentence reads "the ANIMAL didn't VERB the PLACE because it was too ADJECTIVE";
the adjective decides the referent (an animal is tired, a place is wide; see
:mod:`illustrated.data.coreference_grammar`), the other noun is the distractor. With ``w`` the
head's encoder self-attention row of "it" (eval mode, no dropout):

* ``margin = w[referent noun] - w[distractor noun]``, in [-1, 1];
* the head's **score** = mean margin over the test sentences (a head that always looks at the
  animal, or always at the place, scores about 0 because the referents are balanced; one that
  looks at the referent only scores 1);
* the head's **preferred share** = share of test sentences with ``margin > 0``.

The **best head** of a model is the (layer, head) of layer >= 2 with the largest score. Because it
is chosen on the test split, the same head's score on 400 training sentences is reported beside
it (``train_score``) as a check on the selection. Also reported per run: the model's pronoun
accuracy on the test split (the corpus's target, ``il.evaluate``), exact match, training seconds.

For comparison, the same margin is measured in the decoder's encoder-decoder attention at the step
that writes il/elle (reference translation fed, teacher forcing), any layer: ``cross_best_*``.
Where the shipped model really resolves "it": its French prefix already holds both nouns with
their articles (``l'animal ... la rue``), so the decoder can read the genders from its own
self-attention and the adjective from the source; neither the encoder nor the cross-attention
has to route "it" to the noun. The configs whose name starts with ``pronoun_first`` train on a
variant built in memory (``data/`` is untouched, :func:`pronoun_first`): the French clause with
the pronoun comes first, so the gender must come from the source.

A config "routes" when its best head has score > 0.3 and preferred share > 0.8 in at least 4 of
the 5 seeds.

    nice python benchmarks/coreference_heads.py [--configs baseline l3 ...] [--seeds 0 1 2 3 4]
                                                [--threads 2] [--fresh] [--list]

Issue 33 (the auxiliary objective of :mod:`illustrated.training.referent`, on and off, seeds 0-9):

    OMP_NUM_THREADS=1 nice python benchmarks/coreference_heads.py --issue33

Per run it also records the encoder head that best resolves "it" as the post's figure shows
(``it_*``: weight on "the animal" / "the street" in the post's sentence, share of test sentences
with more weight on the referent's phrase, mean weight on it; every layer, from 0), and per config
the seeds whose head passes the lead's bar (>= 0.5, >= 0.5, >= 90 %).

Results are merged, run by run, into benchmarks/results/coreference_heads.json (keyed by config
and seed; ``--fresh`` starts the file anew), and a Markdown table is printed at the end.

References: post "Self-Attention at a High Level" (figure 10, "it" -> "The animal") and "The
Beast With Many Heads"; paper §3.2.2.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

import illustrated as il
from illustrated.modules import Attention, recording_attention
from illustrated.data.coreference_grammar import ADJECTIVES

RESULTS = Path(__file__).parent / "results" / "coreference_heads.json"
CORPUS = "coreference"
SEEDS = (0, 1, 2, 3, 4)
#: The bar of issue 13: best-head score and preferred share, in how many of the 5 seeds.
SCORE_BAR, SHARE_BAR, SEEDS_BAR = 0.3, 0.8, 4

_BASE_MODEL = il.SETTINGS[CORPUS]["model"]
#: The search's recipes train on translation alone, as the shipped recipe did before issue 33.
_BASE_TRAIN = {**il.SETTINGS[CORPUS]["train"], "referent_weight": 0.0}


def _config(model: dict | None = None, train: dict | None = None, corpus: str = "shipped"
            ) -> dict:
    """A recipe: the corpus's shipped settings with some model fields and train keywords changed.

    ``corpus`` is "shipped" (the corpus as it is) or "pronoun-first" (:func:`load_variant`).
    """
    return {"model": {**_BASE_MODEL, **(model or {})}, "train": {**_BASE_TRAIN, **(train or {})},
            "corpus": corpus}


#: The recipes searched; "baseline" is the shipped one (il.SETTINGS["coreference"] on TINY).
CONFIGS: dict[str, dict] = {
    "baseline": _config(),
    "h8": _config({"n_heads": 8}),
    "l3": _config({"n_layers": 3}),
    "l4": _config({"n_layers": 4}),
    "l3_h8": _config({"n_layers": 3, "n_heads": 8}),
    "l4_h8": _config({"n_layers": 4, "n_heads": 8}),
    "l2_h2": _config({"n_heads": 2}),
    "l3_h2": _config({"n_layers": 3, "n_heads": 2}),
    "d128": _config({"d_model": 128, "d_ff": 256}),
    "steps1000": _config(train={"steps": 1000}),
    "ls0.1": _config(train={"label_smoothing": 0.1}),
    "dropout0.1": _config({"dropout": 0.1}),
    "dropout0.2": _config({"dropout": 0.2}),
    "dropout0.3": _config({"dropout": 0.3}),
    # Corpus-side option (measured here, data/ untouched): the French clause with the pronoun first.
    "pronoun_first": _config(corpus="pronoun-first"),
    "pronoun_first_l3": _config({"n_layers": 3}, corpus="pronoun-first"),
    "l3_dropout0.1_ls0.1": _config({"n_layers": 3, "dropout": 0.1}, {"label_smoothing": 0.1}),
    "l4_dropout0.1_steps1000": _config({"n_layers": 4, "dropout": 0.1}, {"steps": 1000}),
    # Issue 33: the auxiliary objective of illustrated.training.referent (the encoder's output at "it" must
    # name its noun), on and off at the shipped recipe's length, and on at 400 steps.
    "referent0": _config(),
    "referent1": _config(train={"referent_weight": 1.0}),
    "referent1_steps400": _config(train={"steps": 400, "referent_weight": 1.0}),
}
#: The configs of issue 33's measurement, and its seeds.
REFERENT_CONFIGS = ("referent0", "referent1", "referent1_steps400")
REFERENT_SEEDS = tuple(range(10))
#: The post's sentence, and the bar of /work/shared/hooks/it_head.py: "it" puts >= 0.5 of its
#: weight on "the animal" (... too tired) and on "the street" (... too wide), and more on the
#: referent's phrase than on the other one in >= 90 % of the test sentences.
POST = "the animal didn't cross the street because it was too {}"
PHRASE_BAR, RIGHT_BAR = 0.5, 0.9


def pronoun_first(target: str) -> str:
    """Move the French "parce qu'il/elle ..." clause to the front of the target sentence.

    "l'animal n'a pas traversé la rue parce qu'il était trop fatigué" becomes
    "parce qu'il était trop fatigué l'animal n'a pas traversé la rue": the decoder must then
    choose il/elle before it has written either noun with its article, so the gender must come
    from the source, not from its own prefix.
    """
    main, sep, clause = target.partition(" parce ")
    if not sep:
        raise ValueError(f"target: expected a sentence with ' parce ', got {target!r}")
    return f"parce {clause} {main}"


def load_variant(variant: str) -> tuple[list, list, il.data.Vocab, il.data.Vocab]:
    """(train pairs, test pairs, src_vocab, tgt_vocab) of the corpus, "shipped" or "pronoun-first"."""
    pairs, src_vocab, tgt_vocab = il.data.load_corpus(CORPUS, "train")
    test_pairs, _, _ = il.data.load_corpus(CORPUS, "test")
    if variant == "shipped":
        return pairs, test_pairs, src_vocab, tgt_vocab
    if variant != "pronoun-first":
        raise ValueError(f"variant: expected 'shipped' or 'pronoun-first', got {variant!r}")
    pairs = [(s, pronoun_first(t)) for s, t in pairs]
    test_pairs = [(s, pronoun_first(t)) for s, t in test_pairs]
    tgt_vocab = il.data.Vocab.build(t for _, t in pairs + test_pairs)
    return pairs, test_pairs, src_vocab, tgt_vocab


def roles(sentence: str, tokens: list[str]) -> tuple[int, int, int]:
    """Positions of "it", of its referent noun and of the distractor noun in one test sentence.

    ``tokens`` are the encoded words (as the encoder sees them). Raises ValueError for a
    sentence that does not follow the corpus's pattern.
    """
    refers_to = {a.en: a.refers_to for a in ADJECTIVES}
    if len(tokens) != 11 or tokens[0] != "the" or tokens[7] != "it" or tokens[-1] not in refers_to:
        raise ValueError(f"sentence: expected 'the ANIMAL didn't VERB the PLACE because it was too "
                         f"ADJECTIVE', got {sentence!r}")
    animal, place = 1, 5
    if refers_to[tokens[-1]] == "animal":
        return 7, animal, place
    return 7, place, animal


def head_margins(model: il.modules.Transformer, src_vocab, sentences: list[str]) -> np.ndarray:
    """Margin (weight on referent - weight on distractor) of "it", every layer, head and sentence.

    Returns an array of shape (n_layers, n_heads, n_sentences), layers counted from 0.
    """
    ids = [src_vocab.encode(s) for s in sentences]
    places = np.array([roles(s, [src_vocab.tokens[i] for i in x]) for s, x in zip(sentences, ids)])
    src = torch.tensor(ids)  # (batch, 11): every sentence has 11 words, no padding
    model.eval()
    with torch.no_grad(), recording_attention(model) as record:
        model.encode(src.to(next(model.parameters()).device))
    weights = torch.stack(Attention.of(record).encoder).double().cpu().numpy()  # (layers, b, heads, s, s)
    rows = np.arange(len(sentences))
    it_rows = weights[:, rows, :, places[:, 0], :]  # (batch, n_layers, n_heads, seq)
    referent = it_rows[rows, :, :, places[:, 1]]  # (batch, n_layers, n_heads)
    distractor = it_rows[rows, :, :, places[:, 2]]  # (batch, n_layers, n_heads)
    return np.moveaxis(referent - distractor, 0, -1)  # (n_layers, n_heads, batch)


def phrase_weights(model: il.modules.Transformer, src_vocab, sentences: list[str]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Weight of "it" on its referent's noun phrase ("the" + noun) and on the other one.

    Returns two arrays of shape (n_layers, n_heads, n_sentences), every encoder layer (from 0).
    """
    ids = [src_vocab.encode(s) for s in sentences]
    places = np.array([roles(s, [src_vocab.tokens[i] for i in x]) for s, x in zip(sentences, ids)])
    model.eval()
    with torch.no_grad(), recording_attention(model) as record:
        model.encode(torch.tensor(ids))
    weights = torch.stack(Attention.of(record).encoder).double().numpy()  # (layers, b, heads, s, s)
    rows = np.arange(len(sentences))
    it_rows = weights[:, rows, :, places[:, 0], :]  # (batch, n_layers, n_heads, seq)
    referent = it_rows[rows, :, :, places[:, 1]] + it_rows[rows, :, :, places[:, 1] - 1]
    other = it_rows[rows, :, :, places[:, 2]] + it_rows[rows, :, :, places[:, 2] - 1]
    return np.moveaxis(referent, 0, -1), np.moveaxis(other, 0, -1)


def it_head(model: il.modules.Transformer, src_vocab, test_sentences: list[str]) -> dict:
    """The encoder head that best resolves "it" as the post's figure shows, and whether it passes.

    Per (layer, head): the weight on "the animal" (post sentence, "too tired"), on "the street"
    ("too wide"), the share of test sentences with more weight on the referent's phrase than on
    the other's, and the mean weight on the referent's phrase. The best head maximises
    (min of the two post weights, share), as the lead's check does.
    """
    tired, _ = phrase_weights(model, src_vocab, [POST.format("tired")])
    wide, _ = phrase_weights(model, src_vocab, [POST.format("wide")])
    referent, other = phrase_weights(model, src_vocab, test_sentences)
    right, mean = (referent > other).mean(-1), referent.mean(-1)  # (n_layers, n_heads)
    post = np.minimum(tired[..., 0], wide[..., 0])
    layer, head = max(np.ndindex(post.shape), key=lambda lh: (post[lh], right[lh]))
    passes = bool(tired[layer, head, 0] >= PHRASE_BAR and wide[layer, head, 0] >= PHRASE_BAR
                  and right[layer, head] >= RIGHT_BAR)
    return {"it_layer": int(layer), "it_head": int(head), "it_passes": passes,
            "it_tired_animal": round(float(tired[layer, head, 0]), 4),
            "it_wide_street": round(float(wide[layer, head, 0]), 4),
            "it_right": round(float(right[layer, head]), 4),
            "it_mean_referent_weight": round(float(mean[layer, head]), 4),
            "it_post_min": np.round(post, 4).tolist()}  # (n_layers, n_heads), layers from 0


def cross_margins(model: il.modules.Transformer, src_vocab, tgt_vocab,
                  test_pairs: list[tuple[str, str]]) -> np.ndarray:
    """Margin (referent - distractor) of the decoder's encoder-decoder attention at the il/elle step.

    The reference translation is fed (teacher forcing, ``<bos>`` first); the decoder position
    that predicts the pronoun reads ``<bos>`` + the words before it. Returns an array of shape
    (n_layers, n_heads, n_sentences).
    """
    src = [src_vocab.encode(s) for s, _ in test_pairs]
    tgt = [tgt_vocab.encode(t) for _, t in test_pairs]
    words = [[tgt_vocab.tokens[i] for i in t] for t in tgt]
    step = np.array([next(k for k, w in enumerate(ws) if w in ("il", "elle")) for ws in words])
    places = np.array([roles(s, [src_vocab.tokens[i] for i in x])
                       for (s, _), x in zip(test_pairs, src)])
    length = max(map(len, tgt))
    tgt_in = torch.tensor([[tgt_vocab.bos_id, *t] + [tgt_vocab.pad_id] * (length - len(t))
                           for t in tgt])  # (batch, 1 + length); padding after the pronoun only
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad(), recording_attention(model) as record:
        model(torch.tensor(src).to(device), tgt_in.to(device))
    cross = torch.stack(Attention.of(record).decoder_cross).double().cpu().numpy()  # (layers, b, heads, t, s)
    rows = np.arange(len(test_pairs))
    at_step = cross[:, rows, :, step, :]  # (batch, n_layers, n_heads, src_len)
    margin = at_step[rows, :, :, places[:, 1]] - at_step[rows, :, :, places[:, 2]]  # (b, l, h)
    return np.moveaxis(margin, 0, -1)  # (n_layers, n_heads, batch)


def run(name: str, seed: int, device: str) -> dict:
    """Train config ``name`` with ``seed``; return its head scores and pronoun accuracy."""
    recipe = CONFIGS[name]
    pairs, test_pairs, src_vocab, tgt_vocab = load_variant(recipe["corpus"])
    cfg = il.pretrained_models.make_config(CORPUS, src_vocab, tgt_vocab, **recipe["model"])
    il.set_seed(seed)
    model = il.modules.Transformer(cfg)
    start, cpu_start = time.perf_counter(), time.process_time()
    history = il.train(model, pairs, src_vocab, tgt_vocab, device=device, seed=seed,
                       progress=False, **recipe["train"])
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    predictions = il.translate(model, [s for s, _ in test_pairs], src_vocab, tgt_vocab)
    pronoun_accuracy = statistics.fmean(il.data.pronoun_correct(p, t)
                                        for p, (_, t) in zip(predictions, test_pairs))
    exact = statistics.fmean(p == t for p, (_, t) in zip(predictions, test_pairs))
    cross = cross_margins(model, src_vocab, tgt_vocab, test_pairs)  # (n_layers, n_heads, n)
    cross_scores = cross.mean(-1)  # (n_layers, n_heads), every layer
    c_layer, c_head = np.unravel_index(int(np.argmax(cross_scores)), cross_scores.shape)
    test = head_margins(model, src_vocab, [s for s, _ in test_pairs])  # (n_layers, n_heads, n)
    train_check = head_margins(model, src_vocab, [s for s, _ in pairs[:400]])
    scores, shares = test.mean(-1), (test > 0).mean(-1)  # (n_layers, n_heads)
    layer, head = np.unravel_index(int(np.argmax(scores[1:])), scores[1:].shape)
    layer += 1  # the search skipped layer index 0
    return {
        "config": name, "seed": seed, "recipe": recipe, "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_seconds, 2), "steps": history.steps,
        "final_loss": round(history.loss[-1], 4),
        "pronoun_accuracy": round(pronoun_accuracy, 4), "exact_match": round(exact, 4),
        "best_layer": int(layer) + 1, "best_head": int(head),  # layer 1-based, head 0-based
        "best_score": round(float(scores[layer, head]), 4),
        "best_share": round(float(shares[layer, head]), 4),
        "best_train_score": round(float(train_check[layer, head].mean()), 4),
        "scores": np.round(scores, 4).tolist(),  # (n_layers, n_heads), layer 1 included
        "shares": np.round(shares, 4).tolist(),
        "n_test_sentences": int(test.shape[-1]),
        # The decoder's encoder-decoder attention at the il/elle step, any layer (1-based).
        "cross_best_layer": int(c_layer) + 1, "cross_best_head": int(c_head),
        "cross_best_score": round(float(cross_scores[c_layer, c_head]), 4),
        "cross_best_share": round(float((cross[c_layer, c_head] > 0).mean()), 4),
        "cross_scores": np.round(cross_scores, 4).tolist(),
        **it_head(model, src_vocab, [s for s, _ in test_pairs]),
    }


def summarize(runs: list[dict]) -> dict[str, dict]:
    """Per config: seeds run, mean best score/share, how many seeds pass the bar."""
    out: dict[str, dict] = {}
    for name in dict.fromkeys(r["config"] for r in runs):
        rows = [r for r in runs if r["config"] == name]
        passing = [r["seed"] for r in rows
                   if r["best_score"] > SCORE_BAR and r["best_share"] > SHARE_BAR]
        cross = [r["cross_best_score"] for r in rows if "cross_best_score" in r]
        grew = [r for r in rows if r.get("it_passes")]
        out[name] = {
            # issue 33: seeds whose encoder grew the post's "it" head (layers and heads from 0)
            "it_seeds_passing": [r["seed"] for r in grew],
            "it_heads": [f"layer {r['it_layer']} head {r['it_head']}" for r in grew],
            "it_mean_referent_weight": (round(statistics.fmean(
                r["it_mean_referent_weight"] for r in grew), 4) if grew else None),
            "it_best_post_min_without": (max((min(r["it_tired_animal"], r["it_wide_street"])
                                              for r in rows if "it_passes" in r
                                              and not r["it_passes"]),
                                             default=None)),
            "mean_exact_match": round(statistics.fmean(r["exact_match"] for r in rows), 4),
            "seeds": [r["seed"] for r in rows],
            "mean_best_score": round(statistics.fmean(r["best_score"] for r in rows), 4),
            "max_best_score": max(r["best_score"] for r in rows),
            "mean_best_share": round(statistics.fmean(r["best_share"] for r in rows), 4),
            "mean_pronoun_accuracy": round(statistics.fmean(r["pronoun_accuracy"] for r in rows), 4),
            "mean_seconds": round(statistics.fmean(r["seconds"] for r in rows), 2),
            "mean_cpu_seconds": round(statistics.fmean(r["cpu_seconds"] for r in rows), 2),
            "mean_cross_best_score": (round(statistics.fmean(cross), 4) if cross else None),
            "seeds_passing": passing,
            "routes": len(passing) >= SEEDS_BAR and len(rows) >= len(SEEDS),
        }
    return out


def _ordered(runs: dict) -> list[dict]:
    """Runs in the order of CONFIGS, then by seed."""
    return sorted(runs.values(), key=lambda r: (list(CONFIGS).index(r["config"]), r["seed"]))


def _write(path: Path, data: dict) -> None:
    """Write JSON atomically (temporary file + os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--fresh", action="store_true", help="discard earlier runs in --out")
    parser.add_argument("--list", action="store_true", help="print the configs and exit")
    parser.add_argument("--issue33", action="store_true",
                        help="the referent objective on and off, seeds 0-9 (REFERENT_CONFIGS)")
    parser.add_argument("--merge", nargs="+", type=Path, default=[],
                        help="also take the runs of these result files (e.g. of parallel jobs)")
    args = parser.parse_args()
    if args.list:
        for name, recipe in CONFIGS.items():
            print(name, json.dumps(recipe))
        return
    torch.set_num_threads(args.threads)
    first_optimizer_s = round(il.training.loop.preload_optimizer(), 2)
    old = {} if args.fresh or not args.out.exists() else json.loads(args.out.read_text())
    runs = {(r["config"], r["seed"]): r for r in old.get("runs", [])}
    for path in args.merge:
        runs.update({(r["config"], r["seed"]): r for r in json.loads(path.read_text())["runs"]})
    for r in runs.values():  # runs recorded before recipes named their corpus used the shipped one
        r["recipe"].setdefault("corpus", "shipped")
    meta = {"device": args.device, "threads": args.threads, "torch": torch.__version__,
            "first_optimizer_seconds": first_optimizer_s, "score_bar": SCORE_BAR,
            "share_bar": SHARE_BAR, "seeds_bar": SEEDS_BAR,
            "score": "mean over test sentences of w(it->referent) - w(it->distractor), "
                     "encoder layers >= 2 (1-based), best head per model",
            "note": "runs without cross_* fields were recorded before the decoder's "
                    "cross-attention score was added (first screening, seeds 0-1)"}
    if args.issue33:
        args.configs, args.seeds = list(REFERENT_CONFIGS), list(REFERENT_SEEDS)
    todo = [(c, s) for c in args.configs for s in args.seeds]
    if args.merge:  # merging only: no training
        todo = []
        _write(args.out, {"meta": meta, "summary": summarize(_ordered(runs)), "runs": _ordered(runs)})
    for name, seed in tqdm(todo, desc="configs x seeds"):
        result = run(name, seed, args.device)
        runs[(name, seed)] = result
        tqdm.write(f"{name} seed {seed}: best L{result['best_layer']}H{result['best_head']} "
                   f"score {result['best_score']:+.3f} share {result['best_share']:.2f} "
                   f"(train {result['best_train_score']:+.3f}) pronoun "
                   f"{result['pronoun_accuracy']:.0%} {result['seconds']} s; it head "
                   f"L{result['it_layer']}H{result['it_head']} tired {result['it_tired_animal']:.2f} "
                   f"wide {result['it_wide_street']:.2f} right {result['it_right']:.0%}"
                   f"{' PASS' if result['it_passes'] else ''}")
        _write(args.out, {"meta": meta, "summary": summarize(_ordered(runs)), "runs": _ordered(runs)})
    data = json.loads(args.out.read_text())
    print("\n| config | seed | best head (layer, head) | score | referent preferred | "
          "train-split score | cross-attn best | pronoun acc. | train s (CPU s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in data["runs"]:
        cross = (f"L{r['cross_best_layer']} H{r['cross_best_head']} "
                 f"{r['cross_best_score']:+.3f} ({r['cross_best_share']:.0%})"
                 if "cross_best_score" in r else "-")
        print(f"| {r['config']} | {r['seed']} | L{r['best_layer']} H{r['best_head']} | "
              f"{r['best_score']:+.3f} | {r['best_share']:.0%} | {r['best_train_score']:+.3f} | "
              f"{cross} | {r['pronoun_accuracy']:.0%} | {r['seconds']} ({r['cpu_seconds']}) |")
    print("\n| config | seeds | seeds growing the 'it' head | at (layer, head from 0) | "
          "mean weight on the referent's phrase | best post min. without | exact match | "
          "il/elle |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s in data["summary"].items():
        if any("it_passes" in r for r in data["runs"] if r["config"] == name):
            print(f"| {name} | {len(s['seeds'])} | {len(s['it_seeds_passing'])} "
                  f"{s['it_seeds_passing']} | {', '.join(s['it_heads'])} | "
                  f"{s['it_mean_referent_weight']} | {s['it_best_post_min_without']} | "
                  f"{s['mean_exact_match']:.0%} | {s['mean_pronoun_accuracy']:.0%} |")
    print("\n| config | seeds | mean best score | mean share | mean cross-attn best | pronoun acc. | "
          "seeds passing | routes |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s in data["summary"].items():
        cross = "-" if s["mean_cross_best_score"] is None else f"{s['mean_cross_best_score']:+.3f}"
        print(f"| {name} | {len(s['seeds'])} | {s['mean_best_score']:+.3f} | "
              f"{s['mean_best_share']:.0%} | {cross} | {s['mean_pronoun_accuracy']:.0%} | "
              f"{s['seeds_passing']} | {s['routes']} |")


if __name__ == "__main__":
    main()
