// illustrated.train (docs/ARCHITECTURE.md, "In the browser"): this module, as a Web Worker paused while
// the tab is hidden, trains {corpus}.train.json as il.train does and posts each step's progress; in
// the window, train() starts it and makes the model it returns the corpus "trained" (models.js).
import { arrays, learningRate, trainer } from "./engine.js";
import { batches } from "./batches.js";
import { encode } from "./graphs.js";
import { MODELS_URL, loadIndex, loadRuntime, setTrained } from "./models.js";
import { initialWeights, uniform } from "./init.js";
import { loadRecipe, trainOptions } from "./recipe.js";
import { isReadout, readoutFor, withoutReadout } from "./referent.js";
import { writeModel } from "./safetensors.js";
import { checkedPairs, pairsData } from "./pairs.js";
import { beamSearch } from "./search_beam.js";
import { detokenize } from "./tokenizer.js";
import { SPECIALS, Vocab } from "./vocab.js";

/** Greedy translations (decoding.greedy_decode) of sentences given as source ids, each as its tokens. */
async function greedy(model, sources) {
  const out = [];
  for (const src of sources) {
    const { memory } = await encode(model, src);
    const settings = { beamSize: 1, topBeams: 1, alpha: 0, maxLen: model.config.maxLen };
    const { best } = await beamSearch(model, memory, settings);
    memory.dispose();
    out.push(model.tgtVocab.spell(best[0][0]).filter((w) => !SPECIALS.includes(w)));
  }
  return out;
}

// The training data: a shipped corpus's {corpus}.train.json, or the reader's pairs made into one (pairs.js).
async function dataOf({ pairs, corpus, seed }, recipe) {
  if (pairs) return pairsData(checkedPairs(pairs, recipe.pairs), seed ?? recipe.defaults.seed, recipe.pairs);
  const { files } = (await loadIndex()).models[corpus];  // named with their sha256
  return (await fetch(new URL(files.train, MODELS_URL))).json();
}

// The corpus's data, the options checked, the model, Adam's state and the batches.
async function setup({ pairs, ...options }) {
  const recipe = await loadRecipe();
  const data = await dataOf({ pairs, ...options }, recipe);
  const o = trainOptions(options, data, recipe);
  const jax = await loadRuntime();
  const cfg = { ...data.config, d_model: o.dModel, n_heads: o.nHeads, d_ff: recipe.dFfPerDModel * o.dModel,
    n_layers: o.nLayers, norm_first: o.normFirst === "pre", dropout: 0 };
  const readout = readoutFor(o, data, cfg);  // {} when the "it" objective is off
  const random = uniform(o.seed);
  const t = trainer(jax, cfg, { smoothing: o.labelSmoothing, clip: recipe.clip, betas: recipe.betas, eps: recipe.eps,
    referentWeight: o.referentWeight });
  const p = arrays(jax, { ...initialWeights(cfg, random), ...readout });
  // (a loop, not Math.max(...): a spread of 200,000 pairs overflows the stack)
  const widths = [0, 1].map((side) => data.train.reduce((m, pair) => Math.max(m, pair[side].length), 0) + side);
  // The sizes of the model being trained (cfg) too: the decoding loops' KV cache reads them.
  const config = { ...data, ...cfg, src_pad_id: cfg.pad_id, tgt_pad_id: cfg.tgt_pad_id,
    maxLen: Math.min(cfg.max_len - 1, widths[1] + 2) };
  const model = { jax, net: t.model, tgtVocab: new Vocab(data.tgt_tokens), config };
  const next = batches(jax.numpy, data, cfg, o.batchSize, random, widths, o.referentWeight > 0);
  return { data, o, jax, cfg, t, model, next, state: { p, m: t.zeros(p), v: t.zeros(p) } };
}

let control = { stop: false, paused: false, resume: null };
// One step's arrays as numbers (item() frees each): the loss, the accuracy, and the "it" loss when it is on.
const numbers = (arrays) => arrays.filter(Boolean).map((a) => a.item());

// Trains as il.train does, posting the progress; returns what train() resolves to.
async function run(options) {
  const { data, o, jax, cfg, t, model, next, ...run } = await setup(options);
  const evaluate = (sources) => greedy(Object.assign(model, { params: withoutReadout(run.state.p) }), sources);
  const sampled = async () => (await evaluate(data.test.slice(0, 3).map(([src]) => src)))
    .map((tokens, i) => ({ source: data.test[i][2], translation: detokenize(tokens) }));
  const [losses, referentLosses] = [[], []];  // the translation loss (il.train's History.loss); the "it" loss
  const start = performance.now();
  let [step, afterFirst, paused] = [0, 0, 0];  // paused: ms spent hidden, left out of the times
  while (step < (o.measure ? 3 : o.steps) && !control.stop) {
    const hiddenAt = performance.now();
    if (control.paused) paused += await new Promise((resolve) => {
      control.resume = () => resolve(performance.now() - hiddenAt);
    });
    step += 1;
    const rate = learningRate(step, o.lr, o.warmup, o.schedule, o.steps);
    const [loss, accuracy, state, extra] = t.update(run.state, next(), rate);
    run.state = state;
    const [lossNow, accuracyNow, ...it] = numbers([loss, accuracy, extra]);
    losses.push(lossNow);
    referentLosses.push(...it);
    if (step === 1) afterFirst = performance.now();  // the first step compiles
    if (!Number.isFinite(losses.at(-1))) {
      throw new Error(`lr: the loss became ${losses.at(-1)} at step ${step} with lr=${o.lr}; try a smaller lr`);
    }
    const samples = o.measure || step % 50 ? undefined : await sampled();  // every 50 steps
    self.postMessage({ type: "progress", step, steps: o.steps, loss: lossNow, accuracy: accuracyNow,
      referentLoss: referentLosses.at(-1),
      msPerStep: (performance.now() - start - paused) / step, samples });
    await new Promise((resolve) => setTimeout(resolve));  // let "stop" and "pause" in
  }
  const seconds = (performance.now() - start - paused) / 1000;
  const predictions = o.measure ? [] : await evaluate(data.test.map(([src]) => src));
  const exactMatch = predictions.filter((tokens, i) => tokens.join(" ") === data.test[i][1]).length /
    data.test.length;
  const tensors = Object.fromEntries(Object.entries(withoutReadout(run.state.p)).map(
    ([k, a]) => [k, { shape: a.shape, data: a.dataSync() }]));  // the read-out is dropped, as il.train drops it
  jax.tree.dispose([run.state.m, run.state.v, Object.keys(run.state.p).filter(isReadout).map((k) => run.state.p[k])]);
  Object.values(model.jitted ?? {}).forEach((f) => f.dispose());
  t.dispose();
  if (o.measure) return { measure: true, msPerStep: (performance.now() - afterFirst) / 2 };
  const lengths = data.train.map(([s]) => s.length);
  const seen = new Set(data.train.map(([src]) => src.join(" ")));
  const heldOut = data.test.some(([src]) => !seen.has(src.join(" ")));  // post: its test pairs are its training's
  const samples = predictions.slice(0, 3)  // the three sample sentences as the model ended
    .map((tokens, i) => ({ source: data.test[i][2], translation: detokenize(tokens) }));
  return { corpus: o.corpus, options: o, losses, referentLosses, exactMatch, heldOut, steps: step, samples,
    stopped: step < o.steps,
    msPerStep: (seconds * 1000) / step, seconds,
    weights: await writeModel(tensors, cfg, data.src_tokens, data.tgt_tokens),
    trainSrcLen: [lengths.reduce((a, b) => Math.min(a, b)), lengths.reduce((a, b) => Math.max(a, b))] };
}

if (typeof window === "undefined") self.onmessage = async ({ data: message }) => {
  control.stop ||= message.type === "stop";
  control.paused = message.type === "pause" ? message.paused : control.paused && message.type !== "stop";
  if (!control.paused) control.resume?.();
  if (message.type !== "train") return;
  control = { stop: false, paused: false, resume: null };
  try {
    const result = await run(message.options);
    self.postMessage({ type: "done", result }, result.weights ? [result.weights.buffer] : []);
  } catch (error) {
    self.postMessage({ type: "error", message: error.message });
  }
};

// The corpus "trained" (data-from: the corpus it learned) offered by every corpus menu of the page but the
// trainers' (they train corpora); a menu on "trained" chooses it again, so its widget takes the new model's example.
function offerTrained(corpus) {
  for (const menu of window.document.querySelectorAll(
    "[data-il-widget]:not([data-il-widget=train]) select[data-control=corpus]")) {
    const option = menu.querySelector("option[value=trained]") ?? menu.appendChild(new window.Option("", "trained"));
    Object.assign(option, { text: `trained (your ${corpus} model)` }).dataset.from = corpus;
    if (menu.value === "trained") menu.dispatchEvent(new window.Event("change"));
  }
}

let worker = null;
let runs = Promise.resolve();

/** illustrated.train: options as docs/ARCHITECTURE.md says (`pairs`: the reader's [[source, target], ...] instead
 * of a corpus), run in the one worker, one at a time. */
export function train(options = {}, onProgress = () => {}) {
  worker ??= new window.Worker(import.meta.url, { type: "module" });
  const pause = () => worker.postMessage({ type: "pause", paused: window.document.hidden });
  const stop = () => worker.postMessage({ type: "stop" });
  const start = () => new Promise((resolve, reject) => {
    const { signal, ...rest } = options;
    const listening = new AbortController();  // aborted when the run ends: removes both listeners
    signal?.addEventListener("abort", stop, { signal: listening.signal });
    window.document.addEventListener("visibilitychange", pause, { signal: listening.signal });
    worker.onmessage = async ({ data }) => {
      if (data.type === "progress") onProgress(data);
      if (data.type === "error" || data.type === "done") listening.abort();
      if (data.type === "error") reject(new Error(data.message));
      if (data.type !== "done") return;
      if (!data.result.measure) {
        await setTrained(data.result.weights, data.result.trainSrcLen);
        offerTrained(data.result.corpus);
      }
      resolve(data.result);
    };
    worker.postMessage({ type: "train", options: { corpus: rest.pairs ? "pairs" : "post", ...rest } });
    pause();
  });
  const result = runs.then(start);
  runs = result.catch(() => {});
  return result;
}
