// Small DOM helpers shared by the book's live widgets (closed_form_*.js): controls with a
// readout, a table of numbers, SVG bars. The containers come from
// src/illustrated/widgets/closed_form_live.py: <div class="il-live" data-params="{json}">.

const SVG = "http://www.w3.org/2000/svg";
const STYLE = "il-live-style";
const CSS = `
.il-live { margin: 0.5em 0 1em; font-size: 0.9em; overflow-x: auto; }
.il-live-controls { display: flex; flex-wrap: wrap; gap: 0.4em 1.4em; margin-bottom: 0.5em; }
.il-live-controls label { display: inline-flex; align-items: center; gap: 0.4em; }
.il-live-controls input[type=range] { width: 11em; }
.il-live-controls input[type=text] { width: 16em; font-family: monospace; }
.il-live-table { border-collapse: collapse; font-family: monospace; margin: 0.3em 0; }
.il-live-table td, .il-live-table th { padding: 0.1em 0.7em; text-align: right; border: none;
  white-space: nowrap; }
.il-live-table th { text-align: left; font-weight: normal; color: #555; }
.il-live code { background: none; border: none; padding: 0; color: inherit; }
.il-live-error { color: #b00020; }
.il-live-panel { max-width: 100%; }
`;

// Parses the container's parameters, drops the fallback line, adds the shared style once.
export function setup(root) {
  const doc = root.ownerDocument;
  if (!doc.getElementById(STYLE)) {
    const style = doc.createElement("style");
    style.id = STYLE;
    style.textContent = CSS;
    doc.head.appendChild(style);
  }
  root.querySelector(".il-live-fallback")?.remove();
  const el = (tag, parent, attrs = {}, text = "") => {
    const node = doc.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    if (text !== "") node.textContent = text;
    parent.appendChild(node);
    return node;
  };
  const svg = (tag, parent, attrs = {}, text = "") => {
    const node = doc.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (text !== "") node.textContent = text;
    parent.appendChild(node);
    return node;
  };
  const controls = el("div", root, { class: "il-live-controls" });
  return { doc, el, svg, controls, params: JSON.parse(root.dataset.params) };
}

// <label><code>name</code></label>: control names are the package's argument names.
function named(ui, name) {
  const label = ui.el("label", ui.controls);
  ui.el("code", label, {}, name);
  return label;
}

// <label>name <input type=range> <output>value</output></label>; show(value) formats the readout.
export function slider(ui, { name, min, max, step, value, show = String }) {
  const label = named(ui, name);
  const input = ui.el("input", label, {
    type: "range", min, max, step, value, "aria-label": name, "data-name": name,
  });
  input.value = String(value);
  const readout = ui.el("output", label, {}, show(Number(input.value)));
  input.addEventListener("input", () => { readout.textContent = show(Number(input.value)); });
  return input;
}

// <label>name <select> with the given option labels; the value is the option's index.
export function select(ui, name, labels, index = 0) {
  const label = named(ui, name);
  const input = ui.el("select", label, { "aria-label": name, "data-name": name });
  labels.forEach((text, i) => ui.el("option", input, { value: String(i) }, text));
  input.value = String(index);
  return input;
}

// <label>name <input type=text></label>.
export function textBox(ui, name, value) {
  const label = named(ui, name);
  const input = ui.el("input", label, { type: "text", "aria-label": name, "data-name": name });
  input.value = value;
  return input;
}

// Calls update() now and whenever one of the inputs changes.
export function live(inputs, update) {
  for (const input of inputs) {
    input.addEventListener("input", update);
    input.addEventListener("change", update);
  }
  update();
}

export const fixed = (x, digits = 4) => (Object.is(x, -0) ? 0 : x).toFixed(digits);

// A table: one row per [header, cells]; each row has data-row=key, each cell its number.
export function table(ui, parent, rows, columns = null) {
  const node = ui.el("table", parent, { class: "il-live-table" });
  if (columns) {
    const head = ui.el("tr", node);
    ui.el("th", head);
    columns.forEach((c) => ui.el("th", head, {}, c));
  }
  for (const [key, header, cells] of rows) {
    const tr = ui.el("tr", node, { "data-row": key });
    ui.el("code", ui.el("th", tr), {}, header);
    cells.forEach((c) => ui.el("td", tr, {}, c));
  }
  return node;
}

// Vertical bars in SVG: values in [lo, hi] over labels; highlight: indices drawn darker.
export function bars(ui, parent, values, labels, { lo = 0, hi = 1, highlight = [], width = 560,
  height = 150, color = "#4c72b0" } = {}) {
  const plot = ui.svg("svg", parent, { width, height: height + 34, role: "img",
    viewBox: `0 0 ${width} ${height + 34}` });
  const step = width / values.length;
  const y = (v) => height * (hi - Math.min(Math.max(v, lo), hi)) / (hi - lo);
  ui.svg("line", plot, { x1: 0, x2: width, y1: y(0), y2: y(0), stroke: "#999" });
  values.forEach((v, i) => {
    const top = Math.min(y(v), y(0));
    ui.svg("rect", plot, { x: i * step + step * 0.15, width: step * 0.7, y: top,
      height: Math.max(Math.abs(y(v) - y(0)), 0.5),
      fill: highlight.includes(i) ? "#1f3d6d" : color });
    if (values.length <= 16) {
      ui.svg("text", plot, { x: (i + 0.5) * step, y: height + 14, "text-anchor": "middle",
        "font-size": 11 }, labels[i]);
    }
  });
  return plot;
}
