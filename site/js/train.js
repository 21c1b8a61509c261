// The training widget (params {corpus, corpora, settings: {corpus: presets.SETTINGS's recipe}}):
// illustrated.train with a loss curve, progress, test sentences every 50 steps, the exact match,
// the model downloaded for il.load_checkpoint. data-state: ready, training, done, error.
import { h, s, select } from "./dom.js";

const TALL = "min-height: 44px; min-width: 44px";  // touch targets
const FIELDS = [  // [option, label, input attributes]
  ["steps", "steps", { min: 1, max: 3000, step: 1 }], ["lr", "learning rate", { min: 0.00001, max: 0.05, step: "any" }],
  ["warmup", "warm-up", { min: 0, max: 1000, step: 1 }], ["labelSmoothing", "label smoothing", { min: 0, max: 0.5, step: 0.05 }],
  ["dModel", "d_model", { min: 8, max: 128, step: 8 }], ["nHeads", "n_heads", { min: 1, max: 8, step: 1 }],
  ["nLayers", "n_layers", { min: 1, max: 4, step: 1 }], ["seed", "seed", { min: 0, max: 4294967295, step: 1 }]];

function curve(losses, steps, w) {  // w: the column's width, so that the labels stay 12 px
  const top = Math.max(...losses, 1e-9), points = losses.map((l, i) => `${(w * (i + 1)) / steps},${150 - (140 * l) / top}`);
  return s("svg", { viewBox: `0 0 ${w} 160`, width: "100%", role: "img", "data-role": "curve",
    "aria-label": `loss ${losses.at(-1)?.toFixed(3)} after ${losses.length} of ${steps} steps` },
  s("polyline", { points: points.join(" "), fill: "none", stroke: "#4c319e", "stroke-width": 2 }),
  s("text", { x: 4, y: 12, "font-size": 12, text: `loss ${top.toFixed(2)}` }),
  s("text", { x: w - 4, y: 158, "font-size": 12, "text-anchor": "end", text: `step ${steps}` }));
}

export function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const inputs = {}, state = { corpus: p.corpus, controller: null, measured: null };
  const [status, warning, chart, samples, result] = [["p", "il-status", "status"], ["p", "il-notes", "warning"],
    ["div", "", "chart"], ["ul", "", "samples"], ["div", "il-result", "result"]].map(([tag, cls, role]) =>
    h(tag, { class: cls || null, "data-role": role, "aria-live": role === "status" || role === "result" ? "polite" : null }));
  const limits = h("p", { class: "il-about", text: "Limits: 1-3,000 steps, learning rate up to 0.05, " +
    "d_model 8-128 (a multiple of n_heads), 1-8 heads, 1-4 layers a side; d_ff is 2 x d_model." });
  const fill = (corpus) => {
    const r = p.settings[corpus];
    for (const [key, control] of Object.entries(inputs)) control.value = String(r[key]);
    warn();
  };
  const options = () => ({ corpus: state.corpus, schedule: inputs.schedule.value, normFirst: inputs.normFirst.value === "pre",
    ...Object.fromEntries(FIELDS.map(([key]) => [key, Number(inputs[key].value)])) });
  for (const [key, , attrs] of FIELDS) inputs[key] = h("input", { type: "number", "data-control": key, style: TALL, onchange: warn, ...attrs });
  const corpus = select("corpus", p.corpora.map((c) => [c, c]), p.corpus, (c) => { state.corpus = c; fill(c); }, "corpus");
  const schedule = select("schedule", [["constant", "constant"], ["noam", "noam"], ["cosine", "cosine"]], "cosine", warn, "schedule");
  const norm = select("norm", [["post", "post-LN"], ["pre", "pre-LN"]], "post", warn, "normFirst");
  [inputs.schedule, inputs.normFirst] = [schedule, norm].map((l) => Object.assign(l.querySelector("select"), { style: TALL }));
  corpus.querySelector("select").style = TALL;
  const button = (text, onclick) => h("button", { type: "button", class: "il-button", style: TALL, text, onclick });
  const train = button("Train", run), stop = Object.assign(button("Stop", () => state.controller?.abort()), { disabled: true });
  const reset = button("Reset", () => { fill(state.corpus); [chart, samples, result, status].forEach((e) => e.replaceChildren()); });

  // Said before Train: WebAssembly is needed; a phone is slower; a big model's time, from a
  // measured step (a 3-step run in the worker, no model kept).
  function warn() {
    const o = options(), phone = window.matchMedia?.("(pointer: coarse)").matches;
    train.disabled = typeof WebAssembly !== "object";
    warning.textContent = train.disabled ? "Training needs WebAssembly, which this browser lacks: open the chapter in Colab." : phone
      ? "On a phone, training runs slower and uses the battery; it pauses when you leave the tab." : "";
    if (train.disabled || !(o.dModel > 64 || o.nLayers > 2)) return;
    const key = JSON.stringify(o);
    state.measured = key;
    api.train({ ...o, measure: true }).then(({ msPerStep }) => {
      if (state.measured !== key) return;
      warning.textContent += ` d_model ${o.dModel} with ${o.nLayers} layers: about ${msPerStep.toFixed(0)} ms per step ` +
        `on this device (measured), so ${o.steps} steps take about ${(o.steps * msPerStep / 1000).toFixed(0)} s.`;
    }, () => {});
  }

  async function run() {
    state.controller = new AbortController();
    [train.disabled, stop.disabled, element.dataset.state] = [true, false, "training"];
    result.replaceChildren();
    const o = options(), losses = [];
    status.textContent = "loading the runtime and compiling the model…";
    try {
      const out = await api.train({ ...o, signal: state.controller.signal }, (r) => {
        losses.push(r.loss);
        chart.replaceChildren(curve(losses, r.steps, Math.max(element.clientWidth, 200)));
        status.textContent = `step ${r.step} of ${r.steps} · loss ${r.loss.toFixed(3)} · ${r.msPerStep.toFixed(0)} ms per step · ` +
          `about ${Math.ceil((r.steps - r.step) * r.msPerStep / 1000)} s left`;
        if (r.samples) samples.replaceChildren(...r.samples.map((x) => h("li", { text: `${x.source} → ${x.translation} (step ${r.step})` })));
      });
      const url = URL.createObjectURL(new Blob([out.weights], { type: "application/octet-stream" }));
      result.replaceChildren(h("p", { "data-role": "exact-match", "data-exact-match": String(out.exactMatch),
        text: `${out.stopped ? "Stopped" : "Trained"} after ${out.steps} steps in ${out.seconds.toFixed(1)} s: ` +
          `exact match on the test split ${(100 * out.exactMatch).toFixed(1)} %. The corpus "trained" of this page's ` +
          "other widgets is now your model." }),
      h("p", {}, h("a", { href: url, download: `${o.corpus}.safetensors`, "data-role": "download", text: "Download your model" }),
        ` (${(out.weights.length / 1e3).toFixed(0)} kB), then in Python: il.load_checkpoint("${o.corpus}.safetensors") ` +
        `or python -m illustrated translate --model ${o.corpus}.safetensors "…"`));
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
    limits, warning, h("div", { class: "il-controls" }, train, stop, reset), status, chart, samples, result));
  fill(p.corpus);
  element.dataset.state = "ready";
}
