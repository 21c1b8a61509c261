// The training widget's run bench (issue 33): every run of the page is kept, in memory for the page's life;
// their loss curves share one chart (step; loss in nats; a log-scale switch), each named by what differs from
// the recipe, with the label-smoothing floor dashed where it applies (params.floors, book/runs.py computes it
// from the package's entropy); a table of runs (settings, time, final loss, exact match, a download each) with
// remove and clear; and the runs read back in words. book/runs.py is its twin in a kernel.
import { h, s } from "./dom.js";

const COLORS = ["#4c319e", "#d95f02", "#1b9e77", "#e7298a", "#66a61e", "#a6761d", "#1f78b4", "#666666"];
const SAID = { corpus: "{}", steps: "{} steps", lr: "lr {}", warmup: "warm-up {}", schedule: "{}",
  labelSmoothing: "label smoothing {}", dModel: "d_model {}", nHeads: "{} heads", nLayers: "{} layers",
  seed: "seed {}" };
const [LEFT, RIGHT, TOP, BOTTOM] = [52, 12, 12, 38];  // the chart's margins, px

/** One setting as a run's name says it: "pre-LN", "lr 0.01", "label smoothing 0.1", "“it” objective". */
export function say(key, value) {
  if (key === "normFirst") return `${value}-LN`;
  if (key === "referentWeight") return value > 0 ? `“it” objective${value === 1 ? "" : ` x${value}`}`
    : "no “it” objective";
  return SAID[key].replace("{}", String(value));
}

/** What differs from the recipe (and the settings in `always`, e.g. the compared one), or "the recipe". */
export function runName(values, recipe, always) {
  const said = Object.keys(values).filter((k) => always.includes(k) || values[k] !== recipe[k]);
  return said.map((k) => say(k, values[k])).join(", ") || "the recipe";
}

/** Round steps for an axis from 0 to hi: about `count` of them. */
function ticks(hi, count) {
  const raw = hi / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((m) => raw <= m);
  return Array.from({ length: Math.floor(hi / step + 1e-9) + 1 }, (_, i) => +(i * step).toPrecision(6));
}

/** The y axis: [position of a loss, its ticks], linear from 0 or log over whole decades. */
function lossAxis(values, log, height) {
  const hi = Math.max(...values, 1e-6);
  if (!log) {
    const marks = ticks(hi, 4);
    const top = Math.max(hi, marks.at(-1));
    return [(v) => TOP + height * (1 - v / top), marks];
  }
  const [a, b] = [Math.floor(Math.log10(Math.max(Math.min(...values), 1e-6))), Math.ceil(Math.log10(hi))];
  const marks = Array.from({ length: b - a + 1 }, (_, i) => +(10 ** (a + i)).toPrecision(1));
  const span = Math.max(b - a, 1);
  return [(v) => TOP + height * (1 - (Math.log10(Math.max(v, 1e-6)) - a) / span), marks];
}

function chart(runs, log, w) {
  const height = w < 500 ? 170 : 200;
  const steps = Math.max(...runs.map((r) => r.steps));
  const [y, yMarks] = lossAxis(runs.flatMap((r) => [...r.losses, ...(r.floor ? [r.floor] : [])]), log, height);
  const x = (step) => LEFT + ((w - LEFT - RIGHT) * step) / steps;
  const text = (attrs, t) => s("text", { ...attrs, text: t });
  const grid = yMarks.map((v) => [s("line", { x1: LEFT, x2: w - RIGHT, y1: y(v), y2: y(v), stroke: "#e4e4e4" }),
    text({ x: LEFT - 6, y: y(v) + 4, "text-anchor": "end" }, String(v))]);
  const xMarks = ticks(steps, w < 500 ? 3 : 6).map((v) => text({ x: x(v), y: TOP + height + 16,
    "text-anchor": "middle" }, String(v)));
  const floors = runs.filter((r) => r.floor).map((r) => [s("line", { x1: LEFT, x2: w - RIGHT, y1: y(r.floor),
    y2: y(r.floor), stroke: r.color, "stroke-dasharray": "6 4", "data-role": "floor" }),
  text({ x: w - RIGHT, y: y(r.floor) - 4, "text-anchor": "end", fill: r.color },
    `floor ${r.floor.toFixed(3)} (${say("labelSmoothing", r.values.labelSmoothing)})`)]);
  const curves = runs.map((r) => s("polyline", { fill: "none", stroke: r.color, "stroke-width": 2,
    "data-role": "curve-line", "data-name": r.name, points: r.losses.map((l, i) => `${x(i + 1)},${y(l)}`).join(" ") },
  s("title", { text: r.name })));
  const last = runs.at(-1);
  return s("svg", { viewBox: `0 0 ${w} ${TOP + height + BOTTOM}`, width: "100%", role: "img", "data-role": "curve",
    "aria-label": `loss curves of ${runs.length} runs; the latest, ${last.name}: loss ` +
      `${last.losses.at(-1)?.toFixed(3)} after ${last.losses.length} of ${last.steps} steps` },
  grid.flat(), floors.flat(), curves, xMarks,
  s("line", { x1: LEFT, x2: LEFT, y1: TOP, y2: TOP + height, stroke: "#888" }),
  s("line", { x1: LEFT, x2: w - RIGHT, y1: TOP + height, y2: TOP + height, stroke: "#888" }),
  text({ x: (LEFT + w - RIGHT) / 2, y: TOP + height + 34, "text-anchor": "middle", "data-role": "x-label" }, "step"),
  text({ x: 14, y: TOP + height / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${TOP + height / 2})`,
    "data-role": "y-label" }, `loss (nats${log ? ", log scale" : ""})`));
}

const percent = (x) => `${(100 * x).toFixed(1)} %`;

/** One run read back: "your pre-LN run reached a loss of 0.125 nats and 73.0 % exact match in 48.2 s". */
const spoken = (r) => `your ${r.name} run reached a loss of ${r.losses.at(-1).toFixed(3)} nats` +
  (r.floor ? ` (its floor: ${r.floor.toFixed(3)})` : "") +
  ` and ${percent(r.exactMatch)} exact match${r.heldOut ? "" : " on its training pairs"} in ${r.seconds.toFixed(1)} s`;

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
  const row = (r) => h("tr", { "data-role": "run-row", "data-name": r.name },
    h("td", {}, h("span", { class: "il-swatch", style: `background: ${r.color}` }), r.name),
    h("td", { text: r.settings }), h("td", { text: `${r.seconds.toFixed(1)} s` }),
    h("td", { text: r.losses.at(-1).toFixed(3), "data-role": "final-loss" }),
    h("td", { text: percent(r.exactMatch), "data-role": "run-exact-match" }),
    h("td", {}, h("a", { href: r.url, download: r.file, "data-role": "run-download", text: r.file })),
    h("td", {}, remove(r)));
  const box = h("div", { class: "il-bench", "data-role": "bench", hidden: true }, plot, legend,
    h("div", { class: "il-controls" }, logSwitch, clear), readback,
    h("div", { class: "il-scroll" }, h("table", { class: "il-runs", "data-role": "runs" },
      h("thead", {}, h("tr", {}, ["run", "settings", "time", "final loss", "exact match", "model", ""]
        .map((t) => h("th", { text: t })))), table)));
  function draw() {
    const shown = runs.filter((r) => r.losses.length);
    box.hidden = !runs.length;
    plot.replaceChildren(shown.length ? chart(shown, log, Math.max(plot.clientWidth || box.parentNode?.clientWidth,
      280)) : "");
    legend.replaceChildren(...shown.map((r) => h("li", { "data-name": r.name },
      h("span", { class: "il-swatch", style: `background: ${r.color}` }), r.name)));
    const done = runs.filter((r) => r.done);
    table.replaceChildren(...done.map(row));
    const said = done.slice(-4).map(spoken).join("; ");
    readback.textContent = said ? `${said[0].toUpperCase()}${said.slice(1)}.` : "";
  }
  function start(values, name, floor, steps) {
    const taken = runs.filter((r) => r.name === name || r.name.startsWith(`${name} (`)).length;
    const run = { id: count + 1, values, name: taken ? `${name} (${taken + 1})` : name, floor, steps, losses: [],
      done: false, color: COLORS[count % COLORS.length],
      settings: Object.entries(values).map(([k, v]) => say(k, v)).join(", ") };
    count += 1;
    runs.push(run);
    return run;
  }
  function finish(run, out) {
    const url = URL.createObjectURL(new Blob([out.weights], { type: "application/octet-stream" }));
    Object.assign(run, { done: true, seconds: out.seconds, exactMatch: out.exactMatch, heldOut: out.heldOut, url,
      file: `${run.values.corpus}-${run.id}.safetensors`, losses: out.losses });
    draw();
  }
  const drop = (run) => runs.includes(run) && runs.splice(runs.indexOf(run), 1) && draw();
  return { element: box, start, draw, finish, drop, runs };
}
