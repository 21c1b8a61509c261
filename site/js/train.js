// The training widget (params {corpus, corpora, settings: {corpus: presets.SETTINGS's recipe}}):
// illustrated.train with a loss curve, progress, test sentences every 50 steps, the exact match,
// the model downloaded for il.load_checkpoint. data-state: ready, training, done, error.
import { h, s, select } from "./dom.js";
import { limitsText, loadRecipe } from "./recipe.js";

const TALL = "min-height: 44px; min-width: 44px";  // touch targets
const code = (text) => h("code", { text });
const FIELDS = [["steps", "steps", 1], ["lr", "learning rate", "any"], ["warmup", "warm-up", 1],
  ["labelSmoothing", "label smoothing", 0.05], ["dModel", "d_model", 8], ["nHeads", "n_heads", 1],
  ["nLayers", "n_layers", 1], ["seed", "seed", 1]];  // [option, label, the input's step]

/** The loss curve; w: the column's width, so that the labels stay 12 px. */
function curve(losses, steps, w) {
  const top = Math.max(...losses, 1e-9);
  const points = losses.map((l, i) => `${(w * (i + 1)) / steps},${150 - (140 * l) / top}`);
  return s("svg", { viewBox: `0 0 ${w} 160`, width: "100%", role: "img", "data-role": "curve",
    "aria-label": `loss ${losses.at(-1)?.toFixed(3)} after ${losses.length} of ${steps} steps` },
  s("polyline", { points: points.join(" "), fill: "none", stroke: "#4c319e", "stroke-width": 2 }),
  s("text", { x: 4, y: 12, "font-size": 12, text: `loss ${top.toFixed(2)}` }),
  s("text", { x: w - 4, y: 158, "font-size": 12, "text-anchor": "end", text: `step ${steps}` }));
}

/** What train() resolved: the exact match, and the model to download with how to load it. */
function trained(out, corpus) {
  const url = URL.createObjectURL(new Blob([out.weights], { type: "application/octet-stream" }));
  const file = `${corpus}.safetensors`;
  return [h("p", { "data-role": "exact-match", "data-exact-match": String(out.exactMatch),
    text: `${out.stopped ? "Stopped" : "Trained"} after ${out.steps} steps in ${out.seconds.toFixed(1)} s: ` +
      `exact match on the test split ${(100 * out.exactMatch).toFixed(1)} %. The corpus "trained" of this ` +
      "page's other widgets is now your model." }),
  h("p", {}, h("a", { href: url, download: file, "data-role": "download", text: "Download your model" }),
    ` (${(out.weights.length / 1e3).toFixed(0)} kB), then in Python: il.load_checkpoint("${file}") ` +
    `or python -m illustrated translate --model ${file} "…"`)];
}

export async function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const recipe = await loadRecipe();  // limits, schedules: recipe.json
  const state = { controller: null, measured: null };
  const status = h("p", { class: "il-status", "data-role": "status", "aria-live": "polite" });
  const warning = h("p", { class: "il-notes", "data-role": "warning" });
  const chart = h("div", { "data-role": "chart" });
  const samples = h("ul", { "data-role": "samples" });
  const result = h("div", { class: "il-result", "data-role": "result", "aria-live": "polite" });
  const inputs = {};
  for (const [key, , step] of FIELDS) {
    const [min, max] = recipe.limits[key];
    inputs[key] = h("input", { type: "number", "data-control": key, min, max, step, onchange: warn });
  }
  const fill = (corpus) => {
    const recipe = p.settings[corpus];
    for (const [key, control] of Object.entries(inputs)) control.value = String(recipe[key]);
    [scheduleMenu.value, normMenu.value] = [recipe.schedule, recipe.normFirst];
    warn();
  };
  const corpus = select("corpus", p.corpora.map((c) => [c, c]), p.corpus, fill, "corpus");
  const schedule = select("schedule", recipe.schedules.map((c) => [c, c]), "cosine", warn, "schedule");
  const norm = select("norm", [["post", "post-LN"], ["pre", "pre-LN"]], "post", warn, "normFirst");
  const [corpusMenu, scheduleMenu, normMenu] = [corpus, schedule, norm].map((l) => l.querySelector("select"));
  const options = () => ({ corpus: corpusMenu.value, schedule: scheduleMenu.value,
    normFirst: normMenu.value === "pre",
    ...Object.fromEntries(FIELDS.map(([key]) => [key, Number(inputs[key].value)])) });
  const button = (text, onclick) => h("button", { type: "button", class: "il-button", text, onclick });
  const train = button("Train", run);
  const stop = Object.assign(button("Stop", () => state.controller?.abort()), { disabled: true });
  const reset = button("Reset", () => {
    fill(corpusMenu.value);
    [chart, samples, result, status].forEach((e) => e.replaceChildren());
  });
  // Said before Train: WebAssembly is needed; a phone is slower; a big model's time, from a
  // measured step (a 3-step run in the worker, no model kept).
  function warn() {
    const o = options();
    train.disabled = typeof WebAssembly !== "object";
    warning.textContent = train.disabled
      ? "Training needs WebAssembly, which this browser lacks: open the chapter in Colab."
      : window.matchMedia?.("(pointer: coarse)").matches
        ? "On a phone, training runs slower and uses the battery; it pauses when you leave the tab." : "";
    if (train.disabled || !(o.dModel > 64 || o.nLayers > 2)) return;
    const key = JSON.stringify(o);
    state.measured = key;
    api.train({ ...o, measure: true }).then(({ msPerStep }) => {
      if (state.measured !== key) return;
      warning.textContent += ` d_model ${o.dModel} with ${o.nLayers} layers: about ${msPerStep.toFixed(0)} ms per ` +
        `step on this device (measured), so ${o.steps} steps take about ${(o.steps * msPerStep / 1000).toFixed(0)} s.`;
    }, () => {});
  }
  async function run() {
    state.controller = new AbortController();
    [train.disabled, stop.disabled, element.dataset.state] = [true, false, "training"];
    result.replaceChildren();
    const o = options();
    const losses = [];
    status.textContent = "loading the runtime and compiling the model…";
    try {
      const out = await api.train({ ...o, signal: state.controller.signal }, (r) => {
        losses.push(r.loss);
        chart.replaceChildren(curve(losses, r.steps, Math.max(element.clientWidth, 200)));
        const left = Math.ceil((r.steps - r.step) * r.msPerStep / 1000);
        status.textContent = `step ${r.step} of ${r.steps} · loss ${r.loss.toFixed(3)} · ` +
          `${r.msPerStep.toFixed(0)} ms per step · about ${left} s left`;
        const said = (x) => h("li", { text: `${x.source} → ${x.translation} (step ${r.step})` });
        if (r.samples) samples.replaceChildren(...r.samples.map(said));
      });
      result.replaceChildren(...trained(out, o.corpus));
      element.dataset.state = "done";
    } catch (error) {
      result.replaceChildren(h("p", { class: "il-error", role: "alert", text: error.message }));
      element.dataset.state = "error";
    }
    [train.disabled, stop.disabled] = [false, true];
  }
  element.querySelector("img.il-live-default")?.remove();
  element.append(h("div", { class: "il-live" },
    h("div", { class: "il-controls" }, p.corpora.length > 1 ? corpus : null,
      FIELDS.map(([key, label]) => h("label", {}, label, inputs[key])), schedule, norm),
    h("p", { class: "il-about" }, limitsText(recipe).map((x) => (x.code ? code(x.code) : x))),
    warning, h("div", { class: "il-controls" }, train, stop, reset), status, chart, samples, result));
  for (const control of element.querySelectorAll("input, select, button")) control.style = TALL;
  fill(p.corpus);
  element.dataset.state = "ready";
}
