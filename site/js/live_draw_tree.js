// The beam as a tree, in SVG: one column per step, one box per candidate the search scored (its
// last word and the summed log-probability of its prefix). Purple: kept in the beam; green: ended
// with <eos>; grey dashed: dropped; a thick border: a returned translation. As
// illustrated.plots.beam.plot_beam_tree draws it from beam_search(return_steps=True).
import { h, s } from "./live_dom.js";

const COL = 118, ROW = 42, W = 96, H = 32, PAD = 8;
const LOOK = {
  kept: { fill: "#e4dcf7", stroke: "#6a4fb3" },
  finished: { fill: "#d5f0d8", stroke: "#2e7d32" },
  dropped: { fill: "#f4f4f4", stroke: "#9a9a9a", dash: "4 3" },
  root: { fill: "#fff", stroke: "#444" },
};
const key = (tokens) => tokens.join("\u241f");

function statusOf(step, tokens) {
  const k = key(tokens);
  if (step.finished.some((t) => key(t) === k)) return "finished";
  return step.kept.some((t) => key(t) === k) ? "kept" : "dropped";
}

function node(x, y, label, score, status, returned, tokens) {
  const look = LOOK[status];
  return s("g", { "data-role": "node", "data-status": status, "data-tokens": tokens.join(" "),
    "data-log-prob": score === null ? null : String(score), "data-returned": returned ? "" : null },
  s("rect", { x, y, width: W, height: H, rx: 4, fill: look.fill, stroke: look.stroke,
    "stroke-width": returned ? 3 : 1.2, "stroke-dasharray": look.dash }),
  s("text", { x: x + W / 2, y: y + 13, "text-anchor": "middle", text: label }),
  score === null ? null : s("text", { x: x + W / 2, y: y + 26, "text-anchor": "middle",
    fill: "#555", text: score.toFixed(2) }));
}

/**
 * @param {Array<{step: number, candidates: Array<{tokens: string[], logProb: number}>,
 *   kept: string[][], finished: string[][]}>} steps translate(..., {returnSteps: true}).steps
 * @param {Array<{tokens: string[]}>} hypotheses the returned translations
 * @returns {HTMLElement} a scrolling box holding the <svg>
 */
export function beamTree(steps, hypotheses) {
  const returned = new Set(hypotheses.map((hyp) => key(hyp.tokens)));
  const rows = Math.max(1, ...steps.map((st) => st.candidates.length));
  const width = PAD * 2 + COL * steps.length + W, height = PAD * 2 + ROW * rows;
  const where = new Map([[key([]), [PAD, PAD]]]);
  const edges = [], nodes = [node(PAD, PAD, "<bos>", null, "root", false, [])];
  for (const st of steps) {
    st.candidates.forEach(({ tokens, logProb }, rank) => {
      const x = PAD + COL * st.step, y = PAD + ROW * rank;
      where.set(key(tokens), [x, y]);
      const parent = where.get(key(tokens.slice(0, -1)));
      const status = statusOf(st, tokens);
      if (parent) {
        edges.push(s("line", { x1: parent[0] + W, y1: parent[1] + H / 2, x2: x, y2: y + H / 2,
          stroke: status === "dropped" ? "#bbb" : "#6a4fb3", "stroke-width": 1.2 }));
      }
      nodes.push(node(x, y, tokens[tokens.length - 1], logProb, status, returned.has(key(tokens)), tokens));
    });
  }
  const svg = s("svg", { class: "il-tree", width, height, viewBox: `0 0 ${width} ${height}`,
    "data-role": "tree", role: "img", "aria-label": "the beam search tree" }, edges, nodes);
  return h("div", { class: "il-beam-scroll" }, svg);
}
