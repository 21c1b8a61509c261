// Attention weights as an HTML table: one row per output step, one column per source word, each
// cell shaded by its weight and showing it; data-weight keeps the full value (the tests read it).
import { h } from "./live_dom.js";

/** Mean over heads of [head][step][source] -> [step][source]. */
export function meanOverHeads(heads) {
  return heads[0].map((row, i) => row.map((_, j) =>
    heads.reduce((sum, head) => sum + head[i][j], 0) / heads.length));
}

/**
 * @param {number[][]} weights [step][source], rows summing to 1
 * @param {string[]} sourceTokens columns @param {string[]} outputTokens rows (the word each
 *   step produced) @param {string} caption
 * @returns {HTMLTableElement}
 */
export function heatmap(weights, sourceTokens, outputTokens, caption) {
  const head = h("tr", {}, h("th", { text: "output \\ source" }),
    sourceTokens.map((t) => h("th", { text: t, "data-role": "source" })));
  const rows = weights.map((row, i) => h("tr", {},
    h("th", { class: "il-out", text: outputTokens[i], "data-role": "output" }),
    row.map((w) => h("td", {
      text: w.toFixed(2), "data-weight": String(w), title: String(w),
      style: `background: rgba(76, 49, 158, ${w.toFixed(3)}); color: ${w > 0.5 ? "#fff" : "#222"}`,
    }))));
  return h("table", { class: "il-heatmap", "data-role": "attention" },
    h("caption", { text: caption }), h("thead", {}, head), h("tbody", {}, rows));
}
