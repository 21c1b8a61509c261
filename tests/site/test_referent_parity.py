"""The page's "it" objective (site/js/engine/referent.js in engine.js's trainer, jax-js) against the package's
(illustrated.training.referent inside il.train), with Node: for the same initial weights (the read-out's among them)
and batch of coreference pairs (one pair unlabelled), the translation loss, the weighted "it" loss and every
gradient at step 0, then three training steps of il.train itself (each batch all the pairs: il.train shuffles
them, which changes no loss), the losses and the weights after, in float32 to the engine's tolerance
(tests/site/engine.test.mjs: 1e-4)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from node_runner import requires_node, run_node

pytestmark = requires_node

import illustrated as il
from illustrated.training import loop, referent
from illustrated.training.objective import IGNORE
from illustrated.training.objective import objective as objective_of
from illustrated.data import collate, load_corpus
from illustrated.modules import Transformer
from illustrated.pretrained_models import make_config

RECIPE = {"steps": 3, "lr": 1e-2, "warmup": 1, "schedule": "cosine", "label_smoothing": 0.1,
          "referent_weight": 0.7, "seed": 0}
UNLABELLED = 1  # this pair's label is taken away: it must add nothing

PARITY = """
import { readFileSync } from "node:fs";
import * as jax from "./node_modules/@jax-js/jax/dist/index.js";
import { arrays, learningRate, objectiveOf, trainer } from "./js/engine/engine.js";
import { labelArrays } from "./js/engine/referent.js";

const c = JSON.parse(readFileSync(0, "utf8"));
await jax.init("wasm");
const np = jax.numpy;
const ints = (rows) => np.array(new Int32Array(rows.flat()), { dtype: np.int32 }).reshape([rows.length, rows[0].length]);
const batch = () => ({ src: ints(c.src), tgtIn: ints(c.tgt_in), tgtOut: ints(c.tgt_out), labels: labelArrays(np, c.labels) });
const list = (a) => Array.from(a.dataSync());
const t = trainer(jax, c.config, { smoothing: c.smoothing, ...c.adam, referentWeight: c.weight });
const b = batch();
const lossAndGrads = jax.valueAndGrad(objectiveOf(jax, t.model, c.smoothing, c.weight), { hasAux: true });
const [[value, [accuracy, loss, extra]], grads] = lossAndGrads(arrays(jax, c.initial), b.src, b.tgtIn, b.tgtOut, b.labels);
const first = { value: value.item(), loss: loss.item(), extra: extra.item(), accuracy: accuracy.item(),
  grads: Object.fromEntries(Object.entries(grads).map(([k, g]) => [k, list(g)])) };
let state = { p: arrays(jax, c.initial) };
state = { ...state, m: t.zeros(state.p), v: t.zeros(state.p) };
const [losses, extras] = [[], []];
for (let step = 1; step <= c.steps; step += 1) {
  const [l, a, next, e] = t.update(state, batch(), learningRate(step, c.lr, c.warmup, c.schedule, c.steps));
  [state] = [next, a.dispose()];
  losses.push(l.item());
  extras.push(e.item());
}
const final = Object.fromEntries(Object.entries(state.p).map(([k, p]) => [k, list(p)]));
console.log(JSON.stringify({ first, losses, extras, final }));
"""


def _fixture(monkeypatch):
    """Initial weights, the batch, and what the package computes: step 0 by hand (the loss of
    il.train's step), then il.train for RECIPE's steps with its read-out watched."""
    pairs, src_vocab, tgt_vocab = load_corpus("coreference", "train")
    pairs = pairs[:6]
    cfg = make_config("coreference", src_vocab, tgt_vocab, d_model=16, n_heads=2, d_ff=32,
                      n_layers=2, dropout=0.0)
    il.set_seed(RECIPE["seed"])
    model = Transformer(cfg)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    seen = {}

    class Watched(referent.ReferentObjective):  # the objective il.train makes, recorded
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.labels[UNLABELLED] = None
            seen.update(objective=self, readout={k: v.clone() for k, v in
                                                 self.readout.state_dict().items()}, extras=[])

    def recorded(*args, **kwargs):  # il.train's objective, its "it" term kept at every step
        terms = objective_of(*args, **kwargs)
        seen["extras"].append(terms.it.item())
        return terms

    monkeypatch.setattr(loop, "ReferentObjective", Watched)
    monkeypatch.setattr(loop, "objective", recorded)
    history = il.train(model, pairs, src_vocab, tgt_vocab, batch_size=len(pairs), progress=False,
                       compile=False, **RECIPE)
    labels = referent.labels([s for s, _ in pairs], [src_vocab.encode(s) for s, _ in pairs])
    labels[UNLABELLED] = None
    batch = collate([(src_vocab.encode(s), tgt_vocab.encode(t)) for s, t in pairs], src_vocab,
                    tgt_vocab)
    start = Transformer(cfg)
    start.load_state_dict(initial)
    objective = seen["objective"]
    final = {**model.state_dict(),
             **{"referent." + k: v.clone() for k, v in objective.readout.state_dict().items()}}
    objective.readout.load_state_dict(seen["readout"])
    objective.readout.zero_grad(set_to_none=True)  # il.train's last step left its gradients
    it, noun = objective.targets(range(len(pairs)))
    logits, memory = start(batch.src, batch.tgt_in, return_memory=True)
    loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                           ignore_index=tgt_vocab.pad_id,
                           label_smoothing=RECIPE["label_smoothing"])
    scores = objective.scores(memory, it)  # (batch, src_vocab_size)
    extra = RECIPE["referent_weight"] * F.cross_entropy(scores, noun, ignore_index=IGNORE,
                                                        reduction="sum") / (noun != IGNORE).sum()
    (loss + extra).backward()
    named = [*start.named_parameters(),
             *(("referent." + k, p) for k, p in objective.readout.named_parameters())]
    both = {**initial, **{"referent." + k: v for k, v in seen["readout"].items()}}
    recipe = il.Recipe()
    fixture = {"config": {**cfg.__dict__, "dropout": 0.0}, "weight": RECIPE["referent_weight"],
               "smoothing": RECIPE["label_smoothing"], "steps": RECIPE["steps"],
               "lr": RECIPE["lr"], "warmup": RECIPE["warmup"], "schedule": RECIPE["schedule"],
               "adam": {"betas": list(recipe.adam_betas), "eps": recipe.adam_eps,
                        "clip": recipe.clip_grad},
               "initial": {k: {"shape": list(v.shape), "data": v.flatten().tolist()}
                           for k, v in both.items()},
               "src": batch.src.tolist(), "tgt_in": batch.tgt_in.tolist(),
               "tgt_out": batch.tgt_out.tolist(), "labels": labels}
    expected = {"loss": loss.item(), "extra": extra.item(),
                "grads": {k: p.grad.flatten() for k, p in named},
                "losses": history.loss, "extras": seen["extras"][:RECIPE["steps"]],
                "final": {k: v.flatten() for k, v in final.items()}}
    return fixture, expected


def test_the_pages_it_objective_equals_the_packages(monkeypatch):
    fixture, expected = _fixture(monkeypatch)
    assert None in fixture["labels"] and expected["extra"] > 0
    out = run_node(PARITY, fixture)
    first = out["first"]
    assert abs(first["loss"] - expected["loss"]) <= 1e-4
    assert abs(first["extra"] - expected["extra"]) <= 1e-4
    assert abs(first["value"] - (expected["loss"] + expected["extra"])) <= 1e-4
    assert set(first["grads"]) == set(expected["grads"])
    for name, theirs in expected["grads"].items():
        ours = torch.tensor(first["grads"][name], dtype=theirs.dtype)
        scale = 1.0 if name.endswith("w_k.bias") else max(theirs.abs().max().item(), 1e-6)
        assert (ours - theirs).abs().max() <= 1e-4 * scale, name
    assert all(abs(a - b) <= 1e-4 for a, b in zip(out["losses"], expected["losses"], strict=True))
    assert all(abs(a - b) <= 1e-4 for a, b in zip(out["extras"], expected["extras"], strict=True))
    for name, theirs in expected["final"].items():
        if name.endswith("w_k.bias"):  # its true gradient is 0: both sides' noise (engine.test.mjs)
            continue
        ours = torch.tensor(out["final"][name], dtype=theirs.dtype)
        assert (ours - theirs).abs().max() <= 1e-4, name
    assert out["extras"][-1] < out["extras"][0]  # the read-out learns
