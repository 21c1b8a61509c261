// Live widget of chapter 03: the two scores of "Thinking" divided by √d_k, then softmaxed.
// The same numbers as il.explain.attention.scaled_softmax / il.reference.softmax (paper §3.2.1).
import { setup, slider, live, table, bars, fixed } from "./closed_form_dom.js";

// Softmax of a list of numbers, shifted by the largest one so that exp never overflows.
export function softmax(scores) {
  const top = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

export function mount(root) {
  const ui = setup(root);
  const { score_1, score_2, d_k } = ui.params;
  const s1 = slider(ui, { name: "q1·k1", min: 0, max: 200, step: 1, value: score_1,
    show: (v) => fixed(v, 2) });
  const s2 = slider(ui, { name: "q1·k2", min: 0, max: 200, step: 1, value: score_2,
    show: (v) => fixed(v, 2) });
  const dk = slider(ui, { name: "d_k", min: 1, max: 1024, step: 1, value: d_k });
  const out = ui.el("div", root);
  live([s1, s2, dk], () => {
    const scores = [Number(s1.value), Number(s2.value)];
    const root_d_k = Math.sqrt(Number(dk.value));
    const scaled = scores.map((s) => s / root_d_k);
    const weights = softmax(scaled);
    out.replaceChildren();
    table(ui, out, [
      ["scores", "score q1·k", scores.map((s) => fixed(s, 2))],
      ["scaled", `÷ √d_k = ÷ ${fixed(root_d_k)}`, scaled.map((s) => fixed(s))],
      ["weights", "softmax", weights.map((w) => fixed(w))],
    ], ["Thinking", "Machines"]);
    const plot = bars(ui, out, weights, ["softmax(q1·k1)", "softmax(q1·k2)"],
      { width: 320, height: 120 });
    weights.forEach((w, i) => ui.svg("text", plot, { x: 80 + 160 * i, y: 118 - 120 * w,
      "text-anchor": "middle", "font-size": 12 }, fixed(w, 2)));
  });
}
