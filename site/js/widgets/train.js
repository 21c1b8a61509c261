// The training widget (params {corpus, corpora, settings: {corpus: its recipe}, floors: {corpus: the
// label-smoothing floor on book/runs.py's grid}, baselines, compare?: {option, values}}): illustrated.train with
// every run kept on one chart and in a table (bench.js), progress, test sentences every 50 steps, the exact match,
// the model downloaded for il.load_checkpoint. data-state: ready, training, done, error. Nothing above the buttons
// changes when a field loses the focus (its check runs as it is typed), so a click on Train is never lost.
import { h } from "./dom.js";
import { bench } from "./bench.js";
import { limitsText, refusal } from "./fields.js";
import { changed, follow, linkBox } from "./link.js";
import { loadRecipe } from "../engine/recipe.js";
import { endLine, floorAt, progressLine, runName, sampleItems, sayer, trained } from "./runs.js";
import { pairsBox, pairsSettings } from "./pairs_box.js";
import { trainForm } from "./train_form.js";
import { itPair } from "./it_pair.js";
import { check, inView, warn } from "./train_notes.js";

/** The event a run's end dispatches from the widget (it bubbles): detail {runName, corpus, values, losses,
 * itLosses, accuracy (exact match), heldOut, stopped, seconds}; quiz.js reads a prediction's runs back from it. */
export const RUN_END = "illustrated:run-end";

const TALL = "min-height: 44px; min-width: 44px";  // touch targets
const code = (text) => h("code", { text });

// A run's progress report: its curve, the status line and, every 50 steps, the sample translations.
const progress = (w, current) => (r) => {
  current.losses.push(r.loss);
  if (r.referentLoss !== undefined) current.itLosses.push(r.referentLoss);
  current.last = r;
  w.runs.draw();
  w.status.textContent = progressLine(current, r, w.state.controller.signal.aborted);
  if (r.samples) w.samples.replaceChildren(...sampleItems(r.samples, r.step));
};

// The run on the bench, named by what differs from the corpus's recipe (by its corpus where the widget offers
// several, by the compared option, by the "it" objective where it is offered), with its floor and baseline.
function startRun(w, o, v) {
  const always = [...(w.p.corpora.length > 1 ? ["corpus"] : []), ...(w.p.compare ? [w.p.compare.option] : []),
    ...("referentWeight" in v ? ["referentWeight"] : [])];
  const name = runName(v, { ...w.p.settings[v.corpus], corpus: w.p.corpus }, always, w.say);
  const floor = floorAt(w.p.floors?.[o.corpus], o.labelSmoothing, w.recipe.limits.labelSmoothing[1]);
  return w.runs.start(v, name, floor, o.steps, w.p.baselines?.[o.corpus] ?? 0, referenceFor(w.p.references, v));
}

/** The book's run (params.references: PyTorch's, when the book was built) of the run's corpus that shares the most
 * settings with it, or null. */
export function referenceFor(references = [], v) {
  const same = (r) => Object.keys(v).filter((k) => String(r.values[k] ?? "") === String(v[k])).length;
  return references.filter((r) => r.corpus === v.corpus).sort((a, b) => same(b) - same(a))[0] ?? null;
}

// One run: true once it has trained (or was stopped), false when refused or failed.
async function run(w) {
  const bad = Object.values(check(w)).map((message) => message.split(":")[0]);  // by the fields' labels
  const own = w.form.values().corpus === "pairs" ? w.pairs.read() : null;  // the reader's pairs, when chosen
  if (bad.length || own?.problems.length) {
    w.status.textContent = bad.length ? refusal(bad) : "Not trained: fix your pairs (each line's problem is " +
      "listed under the box).";
    w.element.dataset.state = "error";
    return false;
  }
  w.state.controller = new AbortController();
  [w.stop.disabled, w.element.dataset.state] = [false, "training"];
  w.buttons.forEach((b) => (b.disabled = true));
  [w.result, w.samples].forEach((e) => e.replaceChildren());
  w.notes.textContent = "";
  const current = startRun(w, w.form.options(), w.form.values());
  w.link.write(w.form.values(), !w.owner);  // the link reproduces this run
  w.status.setAttribute("aria-live", "off");  // not every step to a screen reader: the end is announced
  w.status.textContent = "loading the runtime and compiling the model…";
  inView(w.watch);
  try {
    const options = { ...w.form.options(), ...(own ? { pairs: own.pairs } : {}), signal: w.state.controller.signal };
    const out = await w.api.train(options, progress(w, current));
    w.runs.finish(current, out);
    w.samples.replaceChildren(...sampleItems(out.samples, out.steps));  // the model as it ended
    w.status.textContent = endLine(current);
    w.result.replaceChildren(...trained(out, current));
    if ("referentWeight" in current.values) w.result.append(await itPair(w.api, current.name).catch(() => ""));
    w.element.dataset.state = "done";
    w.element.dispatchEvent(new window.CustomEvent(RUN_END, { bubbles: true, detail: { runName: current.name,
      corpus: out.corpus, values: current.values, losses: out.losses, itLosses: out.referentLosses ?? [],
      accuracy: out.exactMatch, heldOut: out.heldOut, stopped: out.stopped, seconds: out.seconds } }));
  } catch (error) {
    w.runs.drop(current);
    w.status.textContent = `Not trained: ${error.message}`;
    w.element.dataset.state = "error";
  }
  w.stop.disabled = true;
  w.buttons.forEach((b) => (b.disabled = false));
  w.status.setAttribute("aria-live", "polite");
  return w.element.dataset.state === "done";
}

// Train, Compare (each compared value in turn), Stop and Reset.
function buttons(w) {
  const button = (text, onclick) => h("button", { type: "button", class: "il-button", text, onclick });
  const option = w.p.compare?.option;
  const compare = w.p.compare && button(`Train ${w.p.compare.values.map((v) => w.say(option, v))
    .join(", then ")}`, async () => {
    w.state.stopped = false;
    const before = w.form.values()[option];  // the menu returns to it after the runs
    for (const value of w.p.compare.values) {
      w.form.set({ [option]: value });
      if (w.state.stopped || !(await run(w))) break;
    }
    w.form.set({ [option]: before });
    w.link.write(w.form.values(), !w.owner);
    w.notes.textContent = `The ${w.recipe.fields.find((f) => f.name === option).label} menu is back on ` +
      `${w.say(option, before)}, as before the runs; each run's setting is in its name.`;
  });
  w.stop = Object.assign(button("Stop", () => {
    w.state.stopped = true;
    w.state.controller?.abort();
    const current = w.runs.runs.at(-1);  // said at once, until the exact match is in
    if (current?.last && !current.done) w.status.textContent = progressLine(current, current.last, true);
  }), { disabled: true });
  const reset = button("Reset", () => {
    w.form.fill(w.form.menus.corpus.value);
    w.link.write(w.form.values(), !w.owner);
    [w.samples, w.result, w.status].forEach((e) => e.replaceChildren());
    warn(w);
  });
  w.buttons = [button("Train", () => run(w)), compare].filter(Boolean);
  return [...w.buttons, w.stop, reset];
}

// engaged: the reader's pointer, focus or an edit reached the widget; only then is a step measured (the worker and
// its modules load on first use, not with the page). Capture: a change need not bubble.
function engage(w) {
  const engaged = () => {
    if (w.state.engaged) return;
    w.state.engaged = true;
    warn(w);
  };
  ["pointerover", "focusin", "input", "change"].forEach((type) => w.element.addEventListener(type, engaged, true));
}

export async function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const recipe = await loadRecipe();  // limits, fields, schedules, defaults: recipe.json
  if (p.ownPairs) Object.assign(p, { corpora: [...p.corpora, "pairs"], settings: { ...p.settings,
    pairs: pairsSettings(recipe) } });
  const w = { element, api, p, recipe, say: sayer(recipe.fields), runs: bench(sayer(recipe.fields)),
    state: { controller: null, measured: null, stopped: false, engaged: false },
    status: h("p", { class: "il-status", "data-role": "status", "aria-live": "polite" }),
    warning: h("p", { class: "il-notes", "data-role": "warning" }), samples: h("ul", { "data-role": "samples" }),
    notes: h("p", { class: "il-notes", "data-role": "compare-note", "aria-live": "polite" }),
    result: h("div", { class: "il-result", "data-role": "result", "aria-live": "polite" }) };
  w.link = linkBox();
  w.pairs = pairsBox(recipe, () => warn(w));
  w.form = trainForm(recipe, p, { onInput: changed(w, () => check(w)), onChange: changed(w, () => warn(w)),
    onCorpus: changed(w, () => {
      w.pairs.show(w.form.values().corpus === "pairs");
      w.status.textContent = "";
      warn(w);
    }) });
  engage(w);
  const controls = buttons(w);
  element.querySelector("img.il-live-default")?.remove();
  element.append(h("div", { class: "il-live" }, w.form.element, w.pairs.element,
    h("p", { class: "il-about" }, ...limitsText(recipe).map((x) => (x.code ? code(x.code) : x)),
      " Every run stays on the chart and in the table below until you leave the page."),
    h("div", { class: "il-controls il-buttons" }, controls), w.link.element,
    w.watch = h("div", { class: "il-train-watch" }, h("div", { class: "il-train-lines" }, w.warning, w.status,
      w.notes), w.runs.element), w.samples, w.result));
  // a checkbox keeps its size: its label is the target (44 px high on a phone, illustrated.css)
  for (const control of element.querySelectorAll("input:not([type=checkbox]), select, button")) control.style = TALL;
  w.form.fill(p.corpus);
  follow(w);
  warn(w);
  element.dataset.state = "ready";
}
