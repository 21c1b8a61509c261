// Live widget of chapter 05: the sinusoidal positional-encoding table, drawn on a canvas.
// The same numbers as il.reference.positional_encoding (paper §3.5): "interleaved" puts sin on
// even and cos on odd dimensions with frequency 1/10000^(2i/d_model); "concatenated"
// (tensor2tensor's get_timing_signal_1d, the post's figure) puts all sines, then all cosines,
// with timescales geometric from 1 to 10^4 over d_model/2 - 1 steps.
import { setup, slider, select, live, fixed } from "./closed_form_dom.js";

const LAYOUTS = ["concatenated", "interleaved"];

// Frequency of each sin/cos pair, and where its sine and cosine go in the row.
function columns(d_model, layout) {
  const half = d_model / 2;
  const step = Math.log(10000) / Math.max(half - 1, 1);
  return Array.from({ length: half }, (_, i) => layout === "interleaved"
    ? { w: 1 / 10000 ** (2 * i / d_model), sin: 2 * i, cos: 2 * i + 1 }
    : { w: Math.exp(-i * step), sin: i, cos: half + i });
}

// The table as rows of numbers: (n_positions, d_model).
export function positionalEncoding(n_positions, d_model, layout) {
  const pairs = columns(d_model, layout);
  return Array.from({ length: n_positions }, (_, pos) => {
    const row = new Array(d_model);
    for (const { w, sin, cos } of pairs) {
      row[sin] = Math.sin(pos * w);
      row[cos] = Math.cos(pos * w);
    }
    return row;
  });
}

// A diverging colour: -1 blue, 0 white, +1 red.
function colour(v) {
  const t = Math.min(Math.abs(v), 1);
  const fade = Math.round(255 * (1 - t));
  return v < 0 ? [fade, fade, 255 - Math.round(80 * t)] : [255 - Math.round(80 * t), fade, fade];
}

function paint(canvas, table) {
  const [rows, cols] = [table.length, table[0].length];
  canvas.width = cols;
  canvas.height = rows;
  const context = canvas.getContext("2d");
  const image = context.createImageData(cols, rows);
  table.forEach((row, r) => row.forEach((v, c) => {
    image.data.set([...colour(v), 255], 4 * (r * cols + c));
  }));
  context.putImageData(image, 0, 0);
}

export function mount(root) {
  const ui = setup(root);
  const { n_positions, d_model, layout } = ui.params;
  const positions = slider(ui, { name: "positions", min: 1, max: 200, step: 1,
    value: n_positions });
  const width = slider(ui, { name: "d_model", min: 2, max: 1024, step: 2, value: d_model });
  const layouts = select(ui, "layout", LAYOUTS, LAYOUTS.indexOf(layout));
  const title = ui.el("p", root, { class: "il-live-title" });
  const canvas = ui.el("canvas", root, { role: "img", "aria-label": "positional encoding",
    style: "width: 100%; height: 300px; image-rendering: pixelated; cursor: crosshair; " +
      "border: 1px solid #ccc" });
  const readout = ui.el("p", root, { class: "il-live-readout" });
  const pick = { pos: 1, dim: 0 };
  let table = [];
  const show = () => {
    const pos = Math.min(pick.pos, table.length - 1);
    const dim = Math.min(pick.dim, table[0].length - 1);
    const first = table[pos].slice(0, 8).map((v) => fixed(v)).join(", ");
    readout.textContent = "";
    ui.el("span", readout, { "data-row": "cell", "data-pos": pos, "data-dim": dim },
      `PE[position ${pos}, dimension ${dim}] = ${fixed(table[pos][dim])}`);
    ui.el("br", readout);
    ui.el("span", readout, { "data-row": "first", "data-pos": pos },
      `position ${pos}, dimensions 0-${Math.min(8, table[0].length) - 1}: [${first}]`);
  };
  live([positions, width, layouts], () => {
    const [n, d] = [Number(positions.value), Number(width.value)];
    const name = LAYOUTS[Number(layouts.value)];
    table = positionalEncoding(n, d, name);
    title.textContent = `${n} positions × ${d} dimensions, ${name} layout ` +
      "(rows: positions from the top; columns: dimensions; red +1, white 0, blue −1). " +
      "Click a cell to read it.";
    paint(canvas, table);
    show();
  });
  canvas.addEventListener("click", (event) => {
    const box = canvas.getBoundingClientRect();
    pick.pos = Math.floor((event.clientY - box.top) / box.height * table.length);
    pick.dim = Math.floor((event.clientX - box.left) / box.width * table[0].length);
    show();
  });
}
