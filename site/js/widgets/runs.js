// The training widget's runs in words (bench.js draws them): each named by what differs from the recipe (and by its
// corpus where the widget offers several), as recipe.json's fields say each setting; the label-smoothing floor
// (params.floors, book/runs.py computes it from the package's entropy); the status lines; a run read back, a
// stopped run said so. book/runs.py is its twin in a kernel.
import { h, s } from "./dom.js";
import { itLoss } from "./referent_switch.js";

/** say(key, value): one setting as a run's name says it, by the recipe's fields (recipe.json's x-page-fields:
 * "said", "said_at"): "pre-LN", "lr 0.01", "label smoothing 0.1", "1 layer", "“it” objective". */
export function sayer(fields) {
  const byName = Object.fromEntries(fields.map((f) => [f.name, f]));
  return (key, value) => byName[key].said_at[String(value)] ?? byName[key].said.replace("{}", String(value));
}

/** What differs from the recipe (and the settings in `always`, e.g. the compared one), or "the recipe". */
export function runName(values, recipe, always, say) {
  const said = Object.keys(values).filter((k) => always.includes(k) || values[k] !== recipe[k]);
  return said.map((k) => say(k, values[k])).join(", ") || "the recipe";
}

/** The label-smoothing floor of a corpus at `eps` where eps is on the floors' grid (book/runs.py's: equal steps
 * from 0 to the page's highest, `high`), else 0. */
export function floorAt(floors = [], eps, high) {
  const i = Math.round((eps * (floors.length - 1)) / high);
  return floors.length > 1 && Math.abs((i * high) / (floors.length - 1) - eps) < 1e-9 ? floors[i] ?? 0 : 0;
}

export const percent = (x) => `${(100 * x).toFixed(1)} %`;

/** One run read back: "your pre-LN run reached a loss of 0.125 nats and 73.0 % exact match in 48.2 s", or
 * "your copy run stopped at step 40 of 400: a loss of 3.064 nats and ...". */
export const spoken = (r) => `your ${r.name} run ${r.stopped ? `${stoppedAt(r)}: a` : "reached a"} loss of ` +
  `${r.losses.at(-1).toFixed(3)} nats${r.floor ? ` (its floor: ${r.floor.toFixed(3)})` : ""}${stalled(r)}` +
  `${r.itLosses.length ? `, an “it” loss of ${r.itLosses.at(-1).toFixed(3)}` : ""} and ` +
  `${percent(r.exactMatch)} exact match${r.heldOut ? "" : " on its training pairs"} in ${r.seconds.toFixed(1)} s`;
/** ", no lower than knowing only how often each token occurs (2.079)" for a run whose loss stayed near that. */
const stalled = (r) => (r.baseline && r.losses.at(-1) > 0.9 * r.baseline
  ? `, no lower than knowing only how often each token occurs (${r.baseline.toFixed(3)})` : "");
export const BASELINE = { color: "#78909c", dashes: "2 3" };  // loss_chart.js draws it so
export const floorSaid = (r) => `floor ${r.floor.toFixed(3)} (${r.said.labelSmoothing})`;
export const stoppedAt = (r) => `stopped at step ${r.losses.length} of ${r.steps}`;
/** The status line as a run goes: "fr-en, 60 steps: step 40 of 60 · loss 1.234 · 12 ms per step · about 1 s left",
 * after the last step "… · exact match…" (the test pairs are being translated), "… · stopping · exact match…"
 * once Stop is pressed (`stopping`). */
export const progressLine = (run, r, stopping) => `${run.name}: step ${r.step} of ${r.steps} · loss ` +
  `${r.loss.toFixed(3)}${itLoss(r)} · ${r.msPerStep.toFixed(0)} ms per step · ${stopping ? "stopping · exact match…"
    : r.step < r.steps ? `about ${Math.ceil((r.steps - r.step) * r.msPerStep / 1000)} s left` : "exact match…"}`;
/** Sample translations as list items: "je suis étudiant → i am a student (step 50)". */
export const sampleItems = (samples = [], step) => samples.map((x) => h("li",
  { text: `${x.source} → ${x.translation || "(empty: <eos> came first)"} (step ${step})` }));
/** The status line once a run has ended: "fr-en, 60 steps: step 60 of 60 · loss 0.123 · done" (or "stopped"). */
export const endLine = (run) => `${run.name}: step ${run.losses.length} of ${run.steps} · loss ` +
  `${run.losses.at(-1).toFixed(3)}${itLoss({ referentLoss: run.itLosses.at(-1) })} · ` +
  `${run.stopped ? "stopped" : "done"}`;
// A dashed swatch: a run's label-smoothing floor in the legend.
export const dashed = (color, dashes = "6 4") => s("svg", { width: 22, height: 8, class: "il-swatch-dashed",
  "aria-hidden": "true" }, s("line", { x1: 0, x2: 22, y1: 4, y2: 4, stroke: color, "stroke-width": 2,
  "stroke-dasharray": dashes, "stroke-linecap": "round" }));

// The widgets whose corpus menus offer "trained" (trainer.js adds it): those of the page but the trainers.
const OTHERS = "[data-il-widget]:not([data-il-widget=train]) select[data-control=corpus]";

/** What a run resolved (train.js): how it ended and how to load its model. */
export function trained(out, run) {
  const where = out.heldOut ? "on the test split" : "on its training pairs (this corpus has no held-out pairs: " +
    "its test pairs are its training pairs, so this measures memory, not translation)";
  const others = window.document.querySelector(OTHERS)
    ? ` The corpus "trained" of this page's other widgets is now your ${out.corpus} model.` : "";
  return [h("p", { "data-role": "exact-match", "data-exact-match": String(out.exactMatch),
    text: `${out.stopped ? "Stopped" : "Trained"} after ${out.steps} steps in ${out.seconds.toFixed(1)} s: ` +
      `exact match ${where} ${(100 * out.exactMatch).toFixed(1)} %.${others}` }),
  h("p", {}, h("a", { href: run.url, download: run.file, "data-role": "download", text: "Download your model" }),
    ` (${(out.weights.length / 1e3).toFixed(0)} kB), then in Python: `,
  h("code", { "data-role": "load-hint",
    text: `model, (src_vocab, tgt_vocab), cfg = il.load_checkpoint("${run.file}")` }),
  ", or in a terminal: ", h("code", { text: `python -m illustrated translate --model ${run.file} "…"` }))];
}
