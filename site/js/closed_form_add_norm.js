// Live widget of chapter 06: add & norm, LayerNorm(x + z) for vectors the reader types.
// The same numbers as il.reference.layer_norm_steps / il.reference.layer_norm with gamma = 1,
// beta = 0 (paper §3.1; Ba et al. 2016): the biased variance (divide by d_model), eps inside
// the square root.
import { setup, textBox, live, table, bars, fixed } from "./closed_form_dom.js";

// {mean, variance, normalized} of one vector.
export function layerNorm(v, eps) {
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const variance = v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length;
  const normalized = v.map((x) => (x - mean) / Math.sqrt(variance + eps));
  return { mean, variance, normalized };
}

// "1, 2.5, -3" -> [1, 2.5, -3]; an Error naming the box for anything else.
function parse(name, text) {
  const parts = text.split(/[\s,;[\]]+/).filter((p) => p !== "");
  const numbers = parts.map(Number);
  if (parts.length < 2 || parts.length > 16 || numbers.some((n) => !Number.isFinite(n))) {
    throw new Error(`${name}: expected 2 to 16 numbers separated by commas, got "${text}"`);
  }
  return numbers;
}

export function mount(root) {
  const ui = setup(root);
  const { x, z, eps } = ui.params;
  const boxX = textBox(ui, "x", x.join(", "));
  const boxZ = textBox(ui, "z = Sublayer(x)", z.join(", "));
  const out = ui.el("div", root);
  live([boxX, boxZ], () => {
    out.replaceChildren();
    let xs, zs;
    try {
      [xs, zs] = [parse("x", boxX.value), parse("z", boxZ.value)];
      if (xs.length !== zs.length) {
        throw new Error(`z: expected ${xs.length} numbers (as many as x), got ${zs.length}`);
      }
    } catch (error) {
      ui.el("p", out, { class: "il-live-error" }, error.message);
      return;
    }
    const summed = xs.map((v, i) => v + zs[i]);
    const { mean, variance, normalized } = layerNorm(summed, eps);
    const columns = xs.map((_, i) => `[${i}]`);
    table(ui, out, [
      ["x", "x", xs.map((v) => fixed(v))],
      ["z", "z", zs.map((v) => fixed(v))],
      ["summed", "x + z", summed.map((v) => fixed(v))],
      ["normalized", "LayerNorm(x + z)", normalized.map((v) => fixed(v))],
    ], columns);
    ui.el("p", out, { "data-row": "stats" },
      `mean ${fixed(mean)}, variance ${fixed(variance)} (biased), ` +
      `√(variance + ε) = ${fixed(Math.sqrt(variance + eps))} with ε = ${eps}`);
    const top = Math.max(...summed.map(Math.abs), ...normalized.map(Math.abs), 1e-9);
    const labels = columns;
    // Two panels side by side, each titled: before and after the norm, on one scale.
    for (const [title, values, color] of [["x + z", summed, "#4c72b0"],
      ["after the norm", normalized, "#dd8452"]]) {
      const panel = ui.el("div", out, { style: "display: inline-block; margin-right: 24px" });
      ui.el("div", panel, {}, title);
      bars(ui, panel, values, labels, { lo: -top, hi: top, width: 260, height: 100, color });
    }
  });
}
