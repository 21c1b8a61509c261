// The run bench's loss chart (runs.js): every run's loss curve on one SVG drawn `w` px wide, for the
// width it is shown at (runs.js redraws it when that changes, so its text stays 12 px: .il-bench text);
// step on x, loss in nats on y (linear from 0 or log over whole decades), each run's label-smoothing floor
// dashed in its colour (named in the legend, where no curve passes), a run's "it" loss dotted in its colour,
// every tick label inside the drawing.
import { measure, s } from "./dom.js";

const [LEFT, TOP, BOTTOM, FONT] = [52, 12, 38, 12];  // margins, px; the text's size (.il-bench text)
const Y_TITLE = 14;  // the centre of the rotated y-axis title, px from the left

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

/** The chart of `runs` ({name, color, losses, itLosses?, steps, floor, baseline, reference?: {name, losses}}) `w` px
 * wide, log scale if `log`; the latest run's reference (the book's run of its recipe) faint and wide under it. */
export function lossChart(runs, log, w) {
  const height = w < 500 ? 170 : 200;
  const reference = runs.filter((r) => r.reference).at(-1);
  const steps = Math.max(...runs.map((r) => r.steps), reference?.reference.losses.length ?? 0);
  const [y, yMarks] = lossAxis(runs.flatMap((r) => [...r.losses, ...(r.itLosses ?? []),
    ...(r === reference ? r.reference.losses : []),
    ...(r.floor ? [r.floor] : []), ...(r.baseline ? [r.baseline] : [])]), log, height);
  const xMarks = ticks(steps, w < 500 ? 3 : 6);
  // wide enough for the widest y tick label ("0.0001" on the log scale) beside the axis title
  const left = Math.max(LEFT, Y_TITLE + FONT / 2 + 10 + Math.max(...yMarks.map((v) => measure(String(v), FONT))));
  const right = Math.max(12, measure(String(xMarks.at(-1)), FONT) / 2 + 2);  // the last tick label inside
  const x = (step) => left + ((w - left - right) * step) / steps;
  const text = (attrs, t) => s("text", { ...attrs, text: t });
  const across = (at, attrs) => s("line", { x1: left, x2: w - right, y1: at, y2: at, ...attrs });
  const grid = yMarks.map((v) => [across(y(v), { stroke: "#e4e4e4" }),
    text({ x: left - 6, y: y(v) + 4, "text-anchor": "end" }, String(v))]);
  const floors = runs.filter((r) => r.floor).map((r) => across(y(r.floor), { stroke: r.color,
    "stroke-dasharray": "6 4", "data-role": "floor" }));
  // the loss of knowing only how often each token occurs, once for each corpus on the chart
  const baselines = [...new Set(runs.map((r) => r.baseline).filter(Boolean))].map((b) => across(y(b),
    { stroke: "#78909c", "stroke-dasharray": "2 3", "data-role": "baseline" }));
  const faint = reference ? [s("polyline", { fill: "none", stroke: reference.color, "stroke-width": 5,
    "stroke-opacity": 0.25, "stroke-linejoin": "round", "data-role": "reference-curve", "data-name":
      reference.reference.name, points: reference.reference.losses.map((l, i) => `${x(i + 1)},${y(l)}`).join(" ") },
  s("title", { text: `the book's run: ${reference.reference.name}` }))] : [];
  const curves = runs.map((r) => s("polyline", { fill: "none", stroke: r.color, "stroke-width": 2,
    "data-role": "curve-line", "data-name": r.name, points: r.losses.map((l, i) => `${x(i + 1)},${y(l)}`).join(" ") },
  s("title", { text: r.name })));
  // a run's "it" loss (the auxiliary objective's, chapter 03), dotted in its colour
  const dotted = runs.filter((r) => r.itLosses?.length).map((r) => s("polyline", { fill: "none", stroke: r.color,
    "stroke-width": 2.5, "stroke-dasharray": "0.5 4", "stroke-linecap": "round", "data-role": "it-curve",
    "data-name": r.name, points: r.itLosses.map((l, i) => `${x(i + 1)},${y(l)}`).join(" ") },
  s("title", { text: `${r.name}: the “it” loss` })));
  const last = runs.at(-1);
  return s("svg", { viewBox: `0 0 ${w} ${TOP + height + BOTTOM}`, width: "100%", role: "img", "data-role": "curve",
    "data-width": w, "aria-label": `loss curves of ${runs.length} runs; the latest, ${last.name}: loss ` +
      `${last.losses.at(-1)?.toFixed(3)} after ${last.losses.length} of ${last.steps} steps` },
  grid.flat(), baselines, floors, faint, curves, dotted,
  xMarks.map((v) => text({ x: x(v), y: TOP + height + 16, "text-anchor": "middle" }, String(v))),
  s("line", { x1: left, x2: left, y1: TOP, y2: TOP + height, stroke: "#888" }),
  across(TOP + height, { stroke: "#888" }),
  text({ x: (left + w - right) / 2, y: TOP + height + 34, "text-anchor": "middle", "data-role": "x-label" }, "step"),
  text({ x: Y_TITLE, y: TOP + height / 2, "text-anchor": "middle",
    transform: `rotate(-90 ${Y_TITLE} ${TOP + height / 2})`,
    "data-role": "y-label" }, `loss (nats${log ? ", log scale" : ""})`));
}
