// The page's engine (site/js/engine/engine.js, jax-js) against PyTorch: the fixture that
// tests/site/js_fixture.py writes into $FIXTURE_DIR (tests/site/test_engine_parity.py runs both).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as jax from "../../site/node_modules/@jax-js/jax/dist/index.js";
import { learningRate, modelFrom, trainer, transformer } from "../../site/js/engine/engine.js";
import { encode } from "../../site/js/engine/graphs.js";
import { beamSearch } from "../../site/js/engine/search_beam.js";

const dir = process.env.FIXTURE_DIR;
const read = (name) => JSON.parse(readFileSync(join(dir, name), "utf8"));
const { numpy: np } = jax;
await jax.init("wasm");

const params = (flat, shapes) => Object.fromEntries(Object.entries(flat).map(
  ([k, v]) => [k, np.array(new Float32Array(v)).reshape(shapes[k])]));
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const ints = (rows, width, pad = 0) => np.array(new Int32Array(rows.flatMap(
  (r) => [...r, ...Array(width - r.length).fill(pad)])), { dtype: np.int32 }).reshape([rows.length, width]);

for (const c of read("training.json")) {
  const name = `${c.config.norm_first ? "pre" : "post"}-LN, label smoothing ${c.label_smoothing}`;
  test(`training: ${name}: losses, step-0 gradients, weights after 20 steps`, () => {
    const shapes = Object.fromEntries(Object.keys(c.initial).map((k) => [k, null]));
    const { d_model: d, d_ff: ff, src_vocab_size: sv, tgt_vocab_size: tv } = c.config;
    for (const k of Object.keys(shapes)) {  // from the sizes: the state_dict's shapes
      const n = c.initial[k].length;
      shapes[k] = n === d ? [d] : n === ff ? [ff] : n === tv ? [tv]
        : k.startsWith("src_embed") ? [sv, d] : k.startsWith("tgt_embed") || k.startsWith("generator") ? [tv, d]
          : k.includes("linear1.weight") ? [ff, d] : k.includes("linear2.weight") ? [d, ff] : [d, d];
    }
    // every batch padded to the longest of all: one compiled step, the same loss (padding ignored)
    const width = (key) => Math.max(...c.batches.map((b) => b[key][0].length)) + 2;
    const batch = (b) => ({ src: ints(b.src, width("src")), tgtIn: ints(b.tgt_in, width("tgt_in")),
      tgtOut: ints(b.tgt_out, width("tgt_out")) });
    const t = trainer(jax, c.config, { smoothing: c.label_smoothing, ...c.adam });
    const first = batch(c.batches[0]);
    const grads = jax.grad((p) => t.model.lossAndAccuracy(p, first.src, first.tgtIn, first.tgtOut,
      c.label_smoothing)[0])(params(c.initial, shapes));
    for (const [k, g] of Object.entries(grads)) {
      const ours = g.dataSync(), theirs = c.grads0[k];
      const scale = k.endsWith("w_k.bias") ? 1 : Math.max(...theirs.map(Math.abs));
      assert.ok(maxDiff(ours, theirs) <= 1e-4 * scale, `${name}: gradient of ${k} differs by ${maxDiff(ours, theirs)}`);
    }
    let state = { p: params(c.initial, shapes) };
    state = { ...state, m: t.zeros(state.p), v: t.zeros(state.p) };
    c.batches.forEach((b, i) => {
      const lr = learningRate(i + 1, c.lr, c.warmup, c.schedule, c.steps);
      const [loss, accuracy, next] = t.update(state, batch(b), lr);
      accuracy.dispose();
      state = next;
      const ours = loss.item();
      assert.ok(Math.abs(ours - c.losses[i]) <= 1e-4, `${name}: step ${i + 1} loss ${ours} vs ${c.losses[i]}`);
    });
    for (const [k, p] of Object.entries(state.p)) {
      // The key bias's true gradient is 0 (softmax ignores a shift of all of a query's scores):
      // Adam turns each side's rounding noise into steps of about lr, so both biases are noise,
      // and changing it changes nothing (the losses above agree after 20 steps).
      if (k.endsWith("w_k.bias")) { p.dispose(); continue; }
      const d = maxDiff(p.dataSync(), c.final[k]);
      assert.ok(d <= 1e-4, `${name}: ${k} after 20 steps differs by ${d}`);
    }
    jax.tree.dispose([state.m, state.v]);
    t.dispose();
  });
}

// Every step of the beam the same with and without the KV cache: tokens, ranks, scores to 1e-5 of
// their size (float32 sums in another order: 1.1e-5 at a score of -15 in copy).
function sameSearch(cached, plain, what) {
  assert.deepEqual(cached.best.map(([h]) => h), plain.best.map(([h]) => h), `${what}: best`);
  assert.equal(cached.steps.length, plain.steps.length, `${what}: steps`);
  cached.steps.forEach((step, i) => {
    const other = plain.steps[i];
    assert.deepEqual([step.candidates.map(([h]) => h), step.kept, step.finished],
      [other.candidates.map(([h]) => h), other.kept, other.finished], `${what}: step ${i + 1}`);
    step.candidates.forEach(([, score], j) => assert.ok(
      Math.abs(score - other.candidates[j][1]) <= 1e-5 * Math.max(1, Math.abs(score)),
      `${what}: step ${i + 1} candidate ${j}: ${score} vs ${other.candidates[j][1]}`));
  });
}

// The model's logits, and greedy and beam search with the cache (and without: the same steps) = PyTorch's.
async function translatesAsPytorch(c) {
  const buffer = readFileSync(join(dir, c.model));
  const model = modelFrom(jax, buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length), c.corpus);
  const settings = { beamSize: c.beam.beam_size, topBeams: c.beam.top_beams, alpha: c.beam.alpha, maxLen: c.max_len ?? 50 };
  for (const s of c.sentences) {
    const tgtIn = [c.bos_id, ...s.greedy.slice(0, -1)];
    const logits = model.net.forward(jax.tree.ref(model.params), ints([s.src], s.src.length),
      ints([tgtIn], tgtIn.length)).dataSync();
    // 1e-5 of the largest logit (they reach 17 in copy and reverse, where float32 rounding
    // in another order of sums comes to 1.9e-5; the others stay under 1e-5)
    const tolerance = 1e-5 * Math.max(1, ...s.logits.map(Math.abs));
    assert.ok(maxDiff(logits, s.logits) <= tolerance, `${c.corpus} "${s.src}": logits differ by ${maxDiff(logits, s.logits)}`);
    const { memory } = await encode(model, s.src);
    const greedySettings = { ...settings, beamSize: 1, topBeams: 1, alpha: 0 };
    const greedy = await beamSearch(model, memory, greedySettings);
    assert.deepEqual(greedy.best[0][0], s.greedy, `${c.corpus} ${s.src}: greedy`);
    sameSearch(greedy, await beamSearch(model, memory, { ...greedySettings, useCache: false }), `${c.corpus} ${s.src}: greedy`);
    const beam = await beamSearch(model, memory, settings);
    assert.deepEqual(beam.best.map(([h]) => h), s.beams.map(([h]) => h), `${c.corpus} ${s.src}: beam`);
    beam.best.forEach(([, score], i) => assert.ok(Math.abs(score - s.beams[i][1]) <= 1e-4));
    sameSearch(beam, await beamSearch(model, memory, { ...settings, useCache: false }), `${c.corpus} ${s.src}: beam`);
    memory.dispose();
  }
}

for (const c of read("inference.json")) {
  test(`inference: the shipped ${c.corpus} model: logits, greedy and beam tokens, with and without the cache`,
    () => translatesAsPytorch(c));
}

for (const c of read("layouts.json")) {
  test(`positions: ${c.corpus}: logits, greedy and beam tokens`, () => translatesAsPytorch(c));
}

test("a config the engine cannot run is refused, naming the field", () => {
  const [{ config }] = read("training.json");
  assert.throws(() => transformer(jax, { ...config, pe_layout: "spiral" }),
    /pe_layout: expected one of interleaved, concatenated, got "spiral"/);
  assert.throws(() => transformer(jax, { ...config, d_model: 18, n_heads: 4 }), /d_model: expected/);
});
