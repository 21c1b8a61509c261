// Where a training step of the page's engine goes (jax-js, WebAssembly, one thread, in Node):
// `node benchmarks/jax_profile.mjs MODELS_DIR CORPUS` (MODELS_DIR: illustrated.commands.web_export's
// folder) prints JSON: ms per step, kernels per step, their time, and the costliest kernels
// (jax.profiler's traces, grouped by kernel size and reduction), and jax-js's WebAssembly memory
// at steps 50 and 150. benchmarks/browser_training.py runs it.
import { readFileSync } from "node:fs";

// Every WebAssembly memory jax-js makes (its arrays live there): flat from step 50 on = no leak.
const memories = [], Memory = WebAssembly.Memory;
WebAssembly.Memory = function (descriptor) { const m = new Memory(descriptor); memories.push(m); return m; };
const wasmMB = () => +(memories.reduce((n, m) => n + m.buffer.byteLength, 0) / 1e6).toFixed(2);
const jax = await import("../site/node_modules/@jax-js/jax/dist/index.js");
import { trainer } from "../site/js/engine/engine.js";
import { ids } from "../site/js/engine/graphs.js";
import { initialWeights, uniform } from "../site/js/engine/init.js";
import { recipeFrom, trainOptions } from "../site/js/engine/recipe.js";

await jax.init("wasm");
const [dir, corpus] = process.argv.slice(2);
const index = JSON.parse(readFileSync(`${dir}/index.json`, "utf8"));  // files named with their sha256
const data = JSON.parse(readFileSync(`${dir}/${index.models[corpus].files.train}`, "utf8"));
const recipe = recipeFrom(JSON.parse(readFileSync(`${dir}/${index.recipe.file}`, "utf8")));  // recipe.json
const o = trainOptions({ corpus }, data, recipe);
const cfg = { ...data.config, d_ff: recipe.dFfPerDModel * o.dModel };
const random = uniform(0);
const t = trainer(jax, cfg, { smoothing: 0, clip: recipe.clip, betas: recipe.betas, eps: recipe.eps });
const p = Object.fromEntries(Object.entries(initialWeights(cfg, random)).map(([k, a]) => [k, jax.numpy.array(a.data).reshape(a.shape)]));
let state = { p, m: t.zeros(p), v: t.zeros(p) };
const widths = [0, 1].map((side) => Math.max(...data.train.map((pair) => pair[side].length)) + side);
const np = jax.numpy;
const batch = () => { const pairs = data.train.slice(0, o.batchSize);
  return { src: ids(np, pairs.map(([s]) => s), widths[0], 0), tgtIn: ids(np, pairs.map(([, x]) => [data.bos_id, ...x]), widths[1], 0),
    tgtOut: ids(np, pairs.map(([, x]) => [...x, data.eos_id]), widths[1], 0) }; };
const run = (n) => { for (let i = 0; i < n; i += 1) { const [l, a, s] = t.update(state, batch(), 1e-3); state = s; l.item(); a.dispose(); } };
run(3);
let t0 = performance.now(); run(20); const wall = (performance.now() - t0) / 20;
jax.profiler.startTrace(); t0 = performance.now(); run(20); const traced = (performance.now() - t0) / 20; jax.profiler.stopTrace();
const groups = new Map(); let kernels = 0, total = 0;
for (const e of performance.getEntriesByType("measure")) {
  const props = Object.fromEntries(e.detail?.devtools?.properties ?? []);
  const key = e.name + (props.reduction ? ` reduce ${props.reduction.split(":")[0]}` : props.inputShapes ? ` ${props.inputShapes}` : "");
  const g = groups.get(key) ?? { ms: 0, n: 0 }; g.ms += e.duration; g.n += 1; groups.set(key, g); kernels += 1; total += e.duration;
}
run(7);  // to step 50
const memory = { step_50: wasmMB() };
run(100);
memory.step_150 = wasmMB();
const top = [...groups].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8)
  .map(([kernel, g]) => ({ kernel, ms_per_step: +(g.ms / 20).toFixed(2), calls_per_step: g.n / 20 }));
console.log(JSON.stringify({ corpus, batch: o.batchSize, widths, d_model: cfg.d_model, layers: cfg.n_layers,
  wall_ms_per_step: +wall.toFixed(1), traced_ms_per_step: +traced.toFixed(1), kernels_per_step: kernels / 20,
  kernel_ms_per_step: +(total / 20).toFixed(1), wasm_memory_mb: memory, top }));
