// illustrated.train({corpus, steps, lr, warmup, schedule, labelSmoothing, dModel, nHeads, nLayers,
// normFirst, batchSize, seed, signal}, onProgress) -> Promise of {losses, exactMatch, steps,
// msPerStep, seconds, stopped, weights (the model file's bytes)}: this module, as a Web Worker
// paused while the tab is hidden, trains {corpus}.train.json as il.train does; onProgress({step,
// steps, loss, accuracy, msPerStep, samples every 50 steps}); the model becomes "trained".
import { learningRate, trainer } from "./engine.js";
import { loadIndex, MODELS_URL, setTrained } from "./models.js";
import { initialWeights, trainOptions, uniform } from "./recipe.js";
import { loadRuntime } from "./runtime.js";
import { writeModel } from "./safetensors.js";
import { SPECIALS, Vocab } from "./vocab.js";
import { encode, ids as ints } from "./graphs.js";
import { beamSearch } from "./search_beam.js";

/** Greedy translations (decoding.greedy_decode) of sentences given as source ids, as words. */
async function greedy(model, sources) {
  const out = [];
  for (const src of sources) {
    const { memory } = await encode(model, src);
    const { best } = await beamSearch(model, memory, { beamSize: 1, topBeams: 1, alpha: 0, maxLen: model.config.maxLen });
    memory.dispose();
    out.push(model.tgtVocab.spell(best[0][0]).filter((w) => !SPECIALS.includes(w)).join(" "));
  }
  return out;
}

/** The next batch_size pairs of shuffled epochs (Fisher-Yates), padded to the corpus's longest. */
function nextBatch(np, data, o, random, widths, order, cfg) {
  if (order.length < o.batchSize) {
    const epoch = data.train.map((_, i) => i);
    epoch.forEach((_, k) => { const i = epoch.length - 1 - k, j = Math.floor(random() * (i + 1)); [epoch[i], epoch[j]] = [epoch[j], epoch[i]]; });
    order.push(...epoch);
  }
  const pairs = order.splice(0, o.batchSize).map((i) => data.train[i]);
  return { src: ints(np, pairs.map(([s]) => s), widths[0], cfg.pad_id),
    tgtIn: ints(np, pairs.map(([, t]) => [data.bos_id, ...t]), widths[1], cfg.tgt_pad_id),
    tgtOut: ints(np, pairs.map(([, t]) => [...t, data.eos_id]), widths[1], cfg.tgt_pad_id) };
}

let control = { stop: false, paused: false, resume: null };

async function setup(options) {
  const { files } = (await loadIndex()).models[options.corpus];  // named with their sha256
  const data = await (await fetch(new URL(files.train, MODELS_URL))).json();
  const o = trainOptions(options, data);
  const jax = await loadRuntime();
  const cfg = { ...data.config, d_model: o.dModel, n_heads: o.nHeads, d_ff: 2 * o.dModel,
    n_layers: o.nLayers, norm_first: o.normFirst, dropout: 0 };
  const random = uniform(o.seed);
  const t = trainer(jax, cfg, { smoothing: o.labelSmoothing });
  const p = Object.fromEntries(Object.entries(initialWeights(cfg, random)).map(([k, a]) => [k, jax.numpy.array(a.data).reshape(a.shape)]));
  const widths = [0, 1].map((side) => Math.max(...data.train.map((pair) => pair[side].length)) + side);
  const model = { jax, net: t.model, tgtVocab: new Vocab(data.tgt_tokens), config: { ...data, src_pad_id: cfg.pad_id,
    tgt_pad_id: cfg.tgt_pad_id, max_len: cfg.max_len, maxLen: Math.min(cfg.max_len - 1, widths[1] + 2) } };
  return { data, o, jax, cfg, random, t, widths, model, state: { p, m: t.zeros(p), v: t.zeros(p) } };
}

async function run(options) {
  const { data, o, jax, cfg, random, t, widths, model, ...run } = await setup(options);
  const evaluate = (sources) => greedy(Object.assign(model, { params: run.state.p }), sources);
  const samples = async (step) => (o.measure || step % 50 ? undefined  // every 50 steps
    : (await evaluate(data.test.slice(0, 3).map(([ids]) => ids))).map((translation, i) => ({ source: data.test[i][2], translation })));
  const losses = [], order = [], start = performance.now();
  let step = 0, afterFirst = 0;
  while (step < (o.measure ? 3 : o.steps) && !control.stop) {
    if (control.paused) await new Promise((resolve) => { control.resume = resolve; });
    step += 1;
    const rate = learningRate(step, o.lr, o.warmup, o.schedule, o.steps);
    const [loss, accuracy, next] = t.update(run.state, nextBatch(jax.numpy, data, o, random, widths, order, cfg), rate);
    run.state = next;
    losses.push(loss.item());
    if (step === 1) afterFirst = performance.now();  // the first step compiles
    if (!Number.isFinite(losses.at(-1))) throw new Error(`lr: the loss became ${losses.at(-1)} at step ${step} with lr=${o.lr}; try a smaller lr`);
    self.postMessage({ type: "progress", step, steps: o.steps, loss: losses.at(-1), accuracy: accuracy.item(),
      msPerStep: (performance.now() - start) / step, samples: await samples(step) });
    await new Promise((resolve) => setTimeout(resolve));  // let "stop" and "pause" in
  }
  const seconds = (performance.now() - start) / 1000;
  const predictions = o.measure ? [] : await evaluate(data.test.map(([ids]) => ids));
  const exactMatch = predictions.filter((words, i) => words === data.test[i][1]).length / data.test.length;
  const tensors = Object.fromEntries(Object.entries(run.state.p).map(([k, a]) => [k, { shape: a.shape, data: a.dataSync() }]));
  jax.tree.dispose([run.state.m, run.state.v]);
  Object.values(model.jitted ?? {}).forEach((f) => f.dispose());
  t.dispose();
  if (o.measure) return { measure: true, msPerStep: (performance.now() - afterFirst) / 2 };
  const lengths = data.train.map(([s]) => s.length);
  return { corpus: o.corpus, options: o, losses, exactMatch, steps: step, stopped: step < o.steps,
    msPerStep: (seconds * 1000) / step, seconds, weights: writeModel(tensors, cfg, data.src_tokens, data.tgt_tokens),
    trainSrcLen: [Math.min(...lengths), Math.max(...lengths)] };
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

let worker = null, runs = Promise.resolve();
export function train(options = {}, onProgress = () => {}) {
  worker ??= new window.Worker(import.meta.url, { type: "module" });
  const pause = () => worker.postMessage({ type: "pause", paused: window.document.hidden });
  const start = () => new Promise((resolve, reject) => {
    const { signal, ...rest } = options;
    const stop = () => worker.postMessage({ type: "stop" });
    signal?.addEventListener("abort", stop);
    window.document.addEventListener("visibilitychange", pause);
    const end = () => { signal?.removeEventListener("abort", stop); window.document.removeEventListener("visibilitychange", pause); };
    worker.onmessage = async ({ data }) => {
      if (data.type === "progress") onProgress(data);
      if (data.type === "error") { end(); reject(new Error(data.message)); }
      if (data.type !== "done") return;
      end();
      if (!data.result.measure) {
        await setTrained(data.result.weights, data.result.trainSrcLen);
        for (const choice of window.document.querySelectorAll("[data-il-widget] select[data-control=corpus]")) {
          if (!choice.querySelector("option[value=trained]")) choice.append(new window.Option("trained (your model)", "trained"));
        }
      }
      resolve(data.result);
    };
    worker.postMessage({ type: "train", options: { corpus: "post", ...rest } });
    pause();
  });
  const result = runs.then(start);  // one run at a time in the one worker
  runs = result.catch(() => {});
  return result;
}
