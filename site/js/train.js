// The training widget (params {corpus, corpora, settings: {corpus: its recipe}, floors: {corpus: the
// label-smoothing floor at ε = 0, 0.01, ..., 0.5}, compare?: {option, values}}): illustrated.train with every
// run kept on one chart and in a table (runs.js), progress, test sentences every 50 steps, the exact match, the
// model downloaded for il.load_checkpoint. data-state: ready, training, done, error. Nothing above the buttons
// changes when a field loses the focus (its check runs as it is typed), so a click on Train is never lost.
import { h, select } from "./dom.js";
import { fields, problems, refusal } from "./fields.js";
import { limitsText, loadRecipe } from "./recipe.js";
import { referentSwitch } from "./referent_switch.js";
import { bench, endLine, progressLine, runName, sampleItems, say, trained } from "./runs.js";

const TALL = "min-height: 44px; min-width: 44px";  // touch targets
const code = (text) => h("code", { text });
export async function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const baselines = p.baselines ?? {};  // the loss of knowing only each token's frequency, by corpus
  const recipe = await loadRecipe();  // limits, schedules, defaults: recipe.json
  // engaged: the reader's pointer, focus or an edit reached the widget; only then is a step measured (the
  // worker and its modules load on first use, not with the page). Capture: a change need not bubble.
  const state = { controller: null, measured: null, stopped: false, engaged: false };
  const engage = () => {
    if (state.engaged) return;
    state.engaged = true;
    warn();
  };
  ["pointerover", "focusin", "input", "change"].forEach((type) => element.addEventListener(type, engage, true));
  const status = h("p", { class: "il-status", "data-role": "status", "aria-live": "polite" });
  const warning = h("p", { class: "il-notes", "data-role": "warning" });
  const samples = h("ul", { "data-role": "samples" });
  const result = h("div", { class: "il-result", "data-role": "result", "aria-live": "polite" });
  const runs = bench();
  const { FIELDS, inputs, errors, read, show } = fields(recipe, check, warn);
  const referent = referentSwitch(warn);  // the "it" objective, for a corpus with "it" labels
  const fill = (corpus) => {
    const recipe = p.settings[corpus];
    for (const [key, control] of Object.entries(inputs)) control.value = String(recipe[key]);
    [menus.schedule.value, menus.normFirst.value] = [recipe.schedule, recipe.normFirst];
    referent.fill(recipe);
    status.textContent = "";
    warn();
  };
  const corpus = select("corpus", p.corpora.map((c) => [c, c]), p.corpus, fill, "corpus");
  const schedule = select("schedule", recipe.schedules.map((c) => [c, c]), recipe.schedules[0], warn, "schedule");
  const norm = select("norm", [["post", "post-LN"], ["pre", "pre-LN"]], "post", warn, "normFirst");
  const menus = Object.fromEntries([corpus, schedule, norm].map((l) => l.querySelector("select"))
    .map((m) => [m.dataset.control, m]));
  // The widget's settings as the recipe writes them (normFirst "post" or "pre"; referentWeight only where it is
  // offered), and as train() takes them.
  const values = () => ({ corpus: menus.corpus.value,
    ...read(),
    schedule: menus.schedule.value, normFirst: menus.normFirst.value, ...referent.setting() });
  const options = () => ({ referentWeight: 0, ...values(), normFirst: menus.normFirst.value === "pre" });
  const button = (text, onclick) => h("button", { type: "button", class: "il-button", text, onclick });
  const train = button("Train", () => run());
  const compare = p.compare && button(`Train ${p.compare.values.map((v) => say(p.compare.option, v)).join(", then ")}`,
    async () => {
      state.stopped = false;
      for (const value of p.compare.values) {
        (inputs[p.compare.option] ?? menus[p.compare.option]).value = String(value);
        if (state.stopped || !(await run())) return;
      }
    });
  const stop = Object.assign(button("Stop", () => {
    state.stopped = true;
    state.controller?.abort();
    const current = runs.runs.at(-1);  // said at once, until the exact match is in
    if (current?.last && !current.done) status.textContent = progressLine(current, current.last, true);
  }), { disabled: true });
  const reset = button("Reset", () => {
    fill(menus.corpus.value);
    [samples, result, status].forEach((e) => e.replaceChildren());
  });
  // Each field's problem beside it, all at once, as it is typed; Train waits until there is none.
  function check() {
    const bad = problems(options(), recipe);
    show(bad);
    return bad;
  }
  // Said before Train: WebAssembly is needed; a phone is slower; a big model's time, from a measured step.
  function warn() {
    const o = options();
    const lacking = typeof WebAssembly !== "object";
    [train, compare].forEach((b) => b && (b.disabled = lacking));
    warning.textContent = lacking
      ? "Training needs WebAssembly, which this browser lacks: open the chapter in Colab."
      : window.matchMedia?.("(pointer: coarse)").matches
        ? "On a phone, training runs slower and uses the battery; it pauses when you leave the tab." : "";
    if (!state.engaged || Object.keys(check()).length || lacking || !(o.dModel > 64 || o.nLayers > 2)) return;
    const key = JSON.stringify(o);
    state.measured = key;
    api.train({ ...o, measure: true }).then(({ msPerStep }) => {
      if (state.measured !== key) return;
      warning.textContent += ` d_model ${o.dModel} with ${o.nLayers} layers: about ${msPerStep.toFixed(0)} ms per ` +
        `step on this device (measured), so ${o.steps} steps take about ${(o.steps * msPerStep / 1000).toFixed(0)} s.`;
    }, () => {});
  }
  // A run's progress report: its curve, the status line and, every 50 steps, the sample translations.
  const progress = (current) => (r) => {
    current.losses.push(r.loss);
    if (r.referentLoss !== undefined) current.itLosses.push(r.referentLoss);
    current.last = r;
    runs.draw();
    status.textContent = progressLine(current, r, state.controller.signal.aborted);
    if (r.samples) samples.replaceChildren(...sampleItems(r.samples, r.step));
  };
  // One run: true once it has trained (or was stopped), false when refused or failed.
  async function run() {
    const bad = Object.values(check()).map((message) => message.split(":")[0]);  // by the fields' labels
    if (bad.length) {
      status.textContent = refusal(bad);
      element.dataset.state = "error";
      return false;
    }
    state.controller = new AbortController();
    [train.disabled, stop.disabled, element.dataset.state] = [true, false, "training"];
    if (compare) compare.disabled = true;
    [result, samples].forEach((e) => e.replaceChildren());
    const [o, v] = [options(), values()];
    const eps = Math.round(100 * o.labelSmoothing);  // the floors' grid: 0, 0.01, ..., 0.5
    const floor = Math.abs(eps - 100 * o.labelSmoothing) < 1e-9 ? p.floors?.[o.corpus]?.[eps] ?? 0 : 0;
    // A run is named by its corpus where the widget offers several (their curves share the chart).
    const always = [...(p.corpora.length > 1 ? ["corpus"] : []), ...(p.compare ? [p.compare.option] : []),
      ...("referentWeight" in v ? ["referentWeight"] : [])];
    const name = runName(v, { ...p.settings[v.corpus], corpus: p.corpus }, always);
    const current = runs.start(v, name, floor, o.steps, baselines[o.corpus]);
    status.textContent = "loading the runtime and compiling the model…";
    try {
      const out = await api.train({ ...o, signal: state.controller.signal }, progress(current));
      runs.finish(current, out);
      samples.replaceChildren(...sampleItems(out.samples, out.steps));  // the model as it ended
      status.textContent = endLine(current);
      result.replaceChildren(...trained(out, current));
      element.dataset.state = "done";
    } catch (error) {
      runs.drop(current);
      status.textContent = `Not trained: ${error.message}`;
      element.dataset.state = "error";
    }
    [train.disabled, stop.disabled] = [false, true];
    if (compare) compare.disabled = false;
    return element.dataset.state === "done";
  }
  element.querySelector("img.il-live-default")?.remove();
  element.append(h("div", { class: "il-live" },
    h("div", { class: "il-controls" }, p.corpora.length > 1 ? corpus : null,
      FIELDS.map(([key, label]) => h("div", { class: "il-field" }, h("label", {}, label, inputs[key]), errors[key])),
      schedule, norm, referent.element),
    h("p", { class: "il-about" }, ...limitsText(recipe).map((x) => (x.code ? code(x.code) : x)),
      " Every run stays on the chart and in the table below until you leave the page."),
    h("div", { class: "il-controls il-buttons" }, train, compare, stop, reset),
    h("div", { class: "il-train-lines" }, warning, status), runs.element, samples, result));
  // a checkbox keeps its size: its label is the target (44 px high on a phone, illustrated.css)
  for (const control of element.querySelectorAll("input:not([type=checkbox]), select, button")) control.style = TALL;
  fill(p.corpus);
  element.dataset.state = "ready";
}
