// The training widget's run bench (issue 33): every run of the page is kept, in memory for the page's life;
// their loss curves share one chart (loss_chart.js, redrawn for the width it is shown at; a log-scale switch), each
// named by what differs from the recipe (and by its corpus where the widget offers several), an "it" objective's
// loss dotted beside its run's, with the label-smoothing floor dashed where it applies (params.floors,
// book/runs.py computes it from the package's entropy) and named in the legend, and the loss of knowing
// only how often each token occurs dashed grey (params.baselines, book/runs.py's frequency_loss); a table of
// runs (settings, time, final loss, exact match, a download each) with remove and clear; and the runs read back
// in words, a stopped run said so in both. book/runs.py is its twin in a kernel.
import { h, s } from "./dom.js";
import { lossChart } from "./loss_chart.js";
import { itLoss } from "./referent_switch.js";

const COLORS = ["#4c319e", "#d95f02", "#1b9e77", "#e7298a", "#66a61e", "#a6761d", "#1f78b4", "#666666"];
const SAID = { corpus: "{}", steps: "{} steps", lr: "lr {}", warmup: "warm-up {}", schedule: "{}",
  labelSmoothing: "label smoothing {}", dModel: "d_model {}", nHeads: "{} heads", nLayers: "{} layers",
  seed: "seed {}" };

/** One setting as a run's name says it: "pre-LN", "lr 0.01", "label smoothing 0.1", "“it” objective". */
export function say(key, value) {
  if (key === "normFirst") return `${value}-LN`;
  const one = value === 1 && ["nLayers", "nHeads", "steps"].includes(key);  // "1 layer", not "1 layers"
  if (one) return SAID[key].slice(0, -1).replace("{}", "1");
  if (key === "referentWeight") return value > 0 ? `“it” objective${value === 1 ? "" : ` x${value}`}`
    : "no “it” objective";
  return SAID[key].replace("{}", String(value));
}

/** What differs from the recipe (and the settings in `always`, e.g. the compared one), or "the recipe". */
export function runName(values, recipe, always) {
  const said = Object.keys(values).filter((k) => always.includes(k) || values[k] !== recipe[k]);
  return said.map((k) => say(k, values[k])).join(", ") || "the recipe";
}

const percent = (x) => `${(100 * x).toFixed(1)} %`;

/** One run read back: "your pre-LN run reached a loss of 0.125 nats and 73.0 % exact match in 48.2 s", or
 * "your copy run stopped at step 40 of 400: a loss of 3.064 nats and ...". */
const spoken = (r) => `your ${r.name} run ${r.stopped ? `${stoppedAt(r)}: a` : "reached a"} loss of ` +
  `${r.losses.at(-1).toFixed(3)} nats${r.floor ? ` (its floor: ${r.floor.toFixed(3)})` : ""}${stalled(r)}` +
  `${r.itLosses.length ? `, an “it” loss of ${r.itLosses.at(-1).toFixed(3)}` : ""} and ` +
  `${percent(r.exactMatch)} exact match${r.heldOut ? "" : " on its training pairs"} in ${r.seconds.toFixed(1)} s`;
/** ", no lower than knowing only how often each token occurs (2.079)" for a run whose loss stayed near that. */
const stalled = (r) => (r.baseline && r.losses.at(-1) > 0.9 * r.baseline
  ? `, no lower than knowing only how often each token occurs (${r.baseline.toFixed(3)})` : "");
const BASELINE = { color: "#78909c", dashes: "2 3" };  // loss_chart.js draws it so
const floorSaid = (r) => `floor ${r.floor.toFixed(3)} (${say("labelSmoothing", r.values.labelSmoothing)})`;
const stoppedAt = (r) => `stopped at step ${r.losses.length} of ${r.steps}`;
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
const dashed = (color, dashes = "6 4") => s("svg", { width: 22, height: 8, class: "il-swatch-dashed",
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
    ` (${(out.weights.length / 1e3).toFixed(0)} kB), then in Python: il.load_checkpoint("${run.file}") ` +
    `or python -m illustrated translate --model ${run.file} "…"`)];
}

/** The bench: {element, start(values, name, floor, steps), draw(), finish(run, out), drop(run), runs}. */
export function bench() {
  const runs = [];
  let [count, log] = [0, false];
  const plot = h("div", { "data-role": "chart" });
  const legend = h("ul", { class: "il-legend", "data-role": "legend" });
  const readback = h("p", { "data-role": "readback", "aria-live": "polite" });
  const table = h("tbody");
  const clear = h("button", { type: "button", class: "il-button", "data-role": "clear-runs", text: "Clear runs",
    onclick: () => runs.splice(0).forEach((r) => URL.revokeObjectURL(r.url)) || draw() });
  const logSwitch = h("label", {}, h("input", { type: "checkbox", "data-control": "logScale",
    onchange: (e) => {
      log = e.target.checked;
      draw();
    } }), "log scale");
  const remove = (r) => h("button", { type: "button", class: "il-button", "data-role": "remove", text: "remove",
    "aria-label": `remove the run ${r.name}`, onclick: () => {
      runs.splice(runs.indexOf(r), 1);
      URL.revokeObjectURL(r.url);
      draw();
    } });
  // data-label: a cell's heading, which a phone's column writes before it (the table is a list of runs there)
  const row = (r) => h("tr", { "data-role": "run-row", "data-name": r.name },
    h("td", {}, h("span", { class: "il-swatch", style: `background: ${r.color}` }), r.name),
    h("td", { text: r.settings, "data-label": "settings" }),
    h("td", { text: `${r.seconds.toFixed(1)} s${r.stopped ? `, ${stoppedAt(r)}` : ""}`, "data-role": "run-time",
      "data-label": "time" }),
    h("td", { "data-label": "final loss" }, h("span", { text: r.losses.at(-1).toFixed(3), "data-role": "final-loss" }),
      r.itLosses.length ? ` (“it” ${r.itLosses.at(-1).toFixed(3)})` : ""),
    h("td", { text: percent(r.exactMatch), "data-role": "run-exact-match", "data-label": "exact match" }),
    h("td", { "data-label": "model" }, h("a", { href: r.url, download: r.file, "data-role": "run-download" },
      r.file.replace(/\.safetensors$/, ""), h("wbr"), ".safetensors")),  // a narrow column breaks it there
    h("td", {}, remove(r)));
  const box = h("div", { class: "il-bench", "data-role": "bench", hidden: true }, plot, legend,
    h("div", { class: "il-controls" }, logSwitch, clear), readback,
    h("div", { class: "il-scroll" }, h("table", { class: "il-runs", "data-role": "runs" },
      h("thead", {}, h("tr", {}, ["run", "settings", "time", "final loss", "exact match", "model", ""]
        .map((t) => h("th", { text: t })))), table)));
  let drawn = 0;  // the width the chart was drawn for
  function draw() {
    const shown = runs.filter((r) => r.losses.length);
    box.hidden = !runs.length;
    drawn = Math.max(plot.clientWidth || box.parentNode?.clientWidth, 280);
    plot.replaceChildren(shown.length ? lossChart(shown, log, drawn) : "");
    legend.replaceChildren(...shown.map((r) => h("li", { "data-name": r.name },
      h("span", { class: "il-swatch", style: `background: ${r.color}` }), r.name)),
    ...[...new Set(shown.filter((r) => r.floor).map(floorSaid))].map((said) => h("li", { "data-role": "floor-label" },
      dashed(shown.find((r) => r.floor && floorSaid(r) === said).color), said)),  // a floor once, however many runs
    ...[...new Set(shown.map((r) => r.baseline).filter(Boolean))].map((b) => h("li", { "data-role": "baseline-label" },
      dashed(BASELINE.color, BASELINE.dashes), `knows only how often each token occurs: ${b.toFixed(3)}`)),
    ...shown.filter((r) => r.itLosses.length).slice(-1).map((r) => h("li", { "data-role": "it-label" },
      dashed(r.color, "0.5 4"), "dotted: the “it” loss (which noun “it” means)")));
    const done = runs.filter((r) => r.done);
    table.replaceChildren(...done.map(row));
    const said = done.slice(-4).map(spoken).join("; ");
    // where to look for the "it" head, when the model trained last (the other widgets' "trained") has "it" labels
    readback.textContent = said ? `${said[0].toUpperCase()}${said.slice(1)}.${"referentWeight" in done.at(-1).values
      ? " Choose “trained” in the self-attention view below to see where each encoder head sends “it”." : ""}` : "";
  }
  // A new column width (a window resized, a phone turned): the chart drawn again for it.
  const resized = () => plot.clientWidth && plot.clientWidth !== drawn && draw();
  new window.ResizeObserver(resized).observe(plot);
  function start(values, name, floor, steps, baseline = 0) {
    const taken = runs.filter((r) => r.name === name || r.name.startsWith(`${name} (`)).length;
    const run = { id: count + 1, values, name: taken ? `${name} (${taken + 1})` : name, floor, baseline, steps,
      losses: [],
      itLosses: [],  // the "it" objective's loss a step, when it is on
      done: false, color: COLORS[count % COLORS.length],
      settings: Object.entries(values).map(([k, v]) => say(k, v)).join(", ") };
    count += 1;
    runs.push(run);
    return run;
  }
  function finish(run, out) {
    const url = URL.createObjectURL(new Blob([out.weights], { type: "application/octet-stream" }));
    Object.assign(run, { done: true, stopped: out.stopped, seconds: out.seconds, exactMatch: out.exactMatch,
      heldOut: out.heldOut, url, file: `${run.values.corpus}-${run.id}.safetensors`, losses: out.losses,
      itLosses: out.referentLosses ?? run.itLosses });
    draw();
  }
  const drop = (run) => runs.includes(run) && runs.splice(runs.indexOf(run), 1) && draw();
  return { element: box, start, draw, finish, drop, runs };
}
