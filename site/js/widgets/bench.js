// The training widget's run bench (issue 33): every run of the page is kept, in memory for the page's life; their
// loss curves share one chart (loss_chart.js, redrawn for the width it is shown at; a log-scale switch), an "it"
// objective's loss dotted beside its run's, with the label-smoothing floor dashed where it applies and named in the
// legend, and the loss of knowing only how often each token occurs dashed grey (params.baselines, book/runs.py's
// frequency_loss); a table of runs (settings, time, final loss, exact match, a download each) with remove and clear;
// and the runs read back in words (runs.js).
import { h } from "./dom.js";
import { lossChart } from "./loss_chart.js";
import { BASELINE, dashed, floorSaid, percent, spoken, stoppedAt } from "./runs.js";

const COLORS = ["#4c319e", "#d95f02", "#1b9e77", "#e7298a", "#66a61e", "#a6761d", "#1f78b4", "#666666"];
const button = (role, text, onclick, label) => h("button", { type: "button", class: "il-button", "data-role": role,
  text, onclick, "aria-label": label });

// One row of the table; data-label: a cell's heading, which a phone's column writes before it.
const row = (r, remove) => h("tr", { "data-role": "run-row", "data-name": r.name },
  h("td", {}, h("span", { class: "il-swatch", style: `background: ${r.color}` }), r.name),
  h("td", { text: r.settings, "data-label": "settings" }),
  h("td", { text: `${r.seconds.toFixed(1)} s${r.stopped ? `, ${stoppedAt(r)}` : ""}`, "data-role": "run-time",
    "data-label": "time" }),
  h("td", { "data-label": "final loss" }, h("span", { text: r.losses.at(-1).toFixed(3), "data-role": "final-loss" }),
    r.itLosses.length ? ` (“it” ${r.itLosses.at(-1).toFixed(3)})` : ""),
  h("td", { text: percent(r.exactMatch), "data-role": "run-exact-match", "data-label": "exact match" }),
  h("td", { "data-label": "model" }, h("a", { href: r.url, download: r.file, "data-role": "run-download" },
    r.file.replace(/\.safetensors$/, ""), h("wbr"), ".safetensors")),  // a narrow column breaks it there
  h("td", {}, button("remove", "remove", () => remove(r), `remove the run ${r.name}`)));

// The legend: each run, each floor once however many runs share it, each baseline, the "it" loss's dots.
const legendItems = (shown) => [...shown.map((r) => h("li", { "data-name": r.name },
  h("span", { class: "il-swatch", style: `background: ${r.color}` }), r.name)),
...[...new Set(shown.filter((r) => r.floor).map(floorSaid))].map((said) => h("li", { "data-role": "floor-label" },
  dashed(shown.find((r) => r.floor && floorSaid(r) === said).color), said)),
...[...new Set(shown.map((r) => r.baseline).filter(Boolean))].map((b) => h("li", { "data-role": "baseline-label" },
  dashed(BASELINE.color, BASELINE.dashes), `knows only how often each token occurs: ${b.toFixed(3)}`)),
...shown.filter((r) => r.reference).slice(-1).map((r) => h("li", { "data-role": "reference-label" },
  h("span", { class: "il-swatch il-swatch-faint", style: `background: ${r.color}` }),
  `faint: the book's run “${r.reference.name}” (PyTorch, when the book was built): ` +
  `${r.reference.losses.at(-1).toFixed(3)} after ${r.reference.losses.length} steps`)),
...shown.filter((r) => r.itLosses.length).slice(-1).map((r) => h("li", { "data-role": "it-label" },
  dashed(r.color, "0.5 4"), "dotted: the “it” loss (which noun “it” means)"))];

// The runs read back, and where to look for the "it" head when the last model has "it" labels.
function readBack(done) {
  const said = done.slice(-4).map(spoken).join("; ");
  return said ? `${said[0].toUpperCase()}${said.slice(1)}.${"referentWeight" in done.at(-1).values
    ? " Choose “trained” in the self-attention view below to see where each encoder head sends “it”." : ""}` : "";
}

// The bench's elements: chart, legend, switches, read-back and table.
function parts(onLog, onClear) {
  const p = { plot: h("div", { "data-role": "chart" }), legend: h("ul", { class: "il-legend", "data-role": "legend" }),
    readback: h("p", { "data-role": "readback", "aria-live": "polite" }), table: h("tbody") };
  const logSwitch = h("label", {}, h("input", { type: "checkbox", "data-control": "logScale",
    onchange: (e) => onLog(e.target.checked) }), "log scale");
  p.box = h("div", { class: "il-bench", "data-role": "bench", hidden: true }, p.plot, p.legend,
    h("div", { class: "il-controls" }, logSwitch, button("clear-runs", "Clear runs", onClear)), p.readback,
    h("div", { class: "il-scroll" }, h("table", { class: "il-runs", "data-role": "runs" },
      h("thead", {}, h("tr", {}, ["run", "settings", "time", "final loss", "exact match", "model", ""]
        .map((t) => h("th", { text: t })))), p.table)));
  return p;
}

/** The bench: {element, start(values, name, floor, steps, baseline, reference), draw(), finish(run, out), drop(run),
 * runs}; reference: the book's run ({name, losses}) drawn faint under the latest run that has one;
 * `say`: runs.js's sayer. */
export function bench(say) {
  const runs = [];
  const state = { count: 0, log: false, drawn: 0 };  // drawn: the width the chart was drawn for
  const forget = (gone) => gone.forEach((r) => URL.revokeObjectURL(r.url));
  const drop = (run) => runs.includes(run) && (forget(runs.splice(runs.indexOf(run), 1)), draw());
  const p = parts((log) => draw(Object.assign(state, { log })), () => draw(forget(runs.splice(0))));
  function draw() {
    const shown = runs.filter((r) => r.losses.length);
    p.box.hidden = !runs.length;
    state.drawn = Math.max(p.plot.clientWidth || p.box.parentNode?.clientWidth, 280);
    p.plot.replaceChildren(shown.length ? lossChart(shown, state.log, state.drawn) : "");
    p.legend.replaceChildren(...legendItems(shown));
    const done = runs.filter((r) => r.done);
    p.table.replaceChildren(...done.map((r) => row(r, drop)));
    p.readback.textContent = readBack(done);
  }
  // A new column width (a window resized, a phone turned): the chart drawn again for it.
  new window.ResizeObserver(() => p.plot.clientWidth && p.plot.clientWidth !== state.drawn && draw()).observe(p.plot);
  function start(values, name, floor, steps, baseline = 0, reference = null) {
    const taken = runs.filter((r) => r.name === name || r.name.startsWith(`${name} (`)).length;
    const said = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, say(k, v)]));
    const run = { id: state.count + 1, values, name: taken ? `${name} (${taken + 1})` : name, floor, baseline, steps,
      reference,
      losses: [], itLosses: [],  // the "it" objective's loss a step, when it is on
      done: false, color: COLORS[state.count % COLORS.length], settings: Object.values(said).join(", "), said };
    state.count += 1;
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
  return { element: p.box, start, draw, finish, drop, runs };
}
