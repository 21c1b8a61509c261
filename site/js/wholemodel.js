// The whole model in motion for the reader's own sentence (chapter 07; params {corpus, sentence}):
// the frames of src/illustrated/book/whole_model.py show until the sentence changes, then the same
// picture in SVG: the encoder stack once, the memory as K and V into every decoder layer, one
// frame per word written, the shapes on the arrows.
import { h, s, slider } from "./dom.js";
import { player, steadyReadout } from "./frames.js";
import { liveWidget } from "./sentence.js";

// Boxes COL wide, LH high, GAP apart; the encoder at x = ENC, the decoder at DEC, the memory's bus at
// BUS, far enough left of the decoder for "K, V" (10 units high, about 24 wide) between them.
const [COL, ENC, DEC, LH, GAP, TOP, BUS, GREY] = [148, 4, 208, 26, 34, 120, 166, "#eceff1"];
const MID = COL / 2;
const dims = (...d) => `(${d.join(", ")})`;
const text = (x, y, t, attrs) => s("text", { x, y, "text-anchor": "middle", ...attrs, text: t });
const bold = (x, y, t) => text(x, y, t, { "font-weight": "bold" });
const note = (x, y, t) => text(x, y, t, { fill: "#607d8b", "font-size": 10, "text-anchor": "start" });
const line = (x1, y1, x2, y2, stroke = "#263238") =>
  s("line", { x1, y1, x2, y2, stroke, "stroke-width": 1.5, "marker-end": "url(#il-arrow)" });
const box = (x, y, t, fill, height = LH) =>
  [s("rect", { x, y, width: COL, height, rx: 6, fill, stroke: "#263238" }), bold(x + MID, y + height / 2 + 4, t)];
const arrowHead = () => s("defs", {}, s("marker", { id: "il-arrow", markerWidth: 6, markerHeight: 6, refX: 5, refY: 3,
  orient: "auto" }, s("path", { d: "M0,0 L6,3 L0,6 z" })));

/** The source words under the encoder (9.5 to 11 units high: at least 9 px on a phone), each over
 * a bar as dark as the last decoder layer's mean attention to it at `step` (none at -1). */
function sources(r, step, y) {
  const chars = r.sourceTokens.join(" ").length + 1;
  const size = Math.max(9.5, Math.min(11, COL / chars / 0.62));
  const unit = Math.max(COL, chars * 0.62 * size) / chars;  // one character's width
  const cross = r.crossAttention.at(-1);
  let at = 0.5;  // where the word starts, in characters
  return r.sourceTokens.flatMap((word, j) => {
    const [x, width] = [ENC + unit * at, unit * word.length];
    at += word.length + 1;
    const weight = step < 0 ? 0 : cross.reduce((sum, head) => sum + head[step][j], 0) / cross.length;
    return [text(x + width / 2, y, word, { "font-weight": "bold", "font-size": size }),
      s("rect", { x, y: y + 6, width, height: 5, fill: "#6aa7d8", "fill-opacity": weight })];
  });
}

/** Frame `step` (-1: the encoder reads the sentence; t: the decoder writes word t). */
function picture(r, c, step) {
  const on = step >= 0;
  const [src, out, x] = [r.sourceTokens.length, r.hypotheses[0].tokens, DEC + MID];
  const read = ["<bos>", ...out.slice(0, Math.max(step, 0))];
  const kv = on ? "#6aa7d8" : "#7cb342";
  const y = (l) => TOP + (c.n_layers - 1 - l) * (LH + GAP);
  const base = y(0) + LH + 34;
  const title = on ? `step ${step}: reads ${read.join(" ")}, writes "${out[step]}"`
    : "the encoder reads the whole sentence once";
  const memory = [[ENC + MID, TOP], [ENC + MID, TOP - 14], [BUS, TOP - 14], [BUS, y(0) + LH / 2]];
  const items = [arrowHead(),
    s("polyline", { points: memory.join(" "), fill: "none", stroke: kv, "stroke-width": 1.5 }),
    note(ENC, TOP - 20, `memory ${dims(src, c.d_model)}, computed once`), text(x, base + 30, read.join(" ")),
    line(x, TOP, x, TOP - 18), ...box(DEC, TOP - 44, "Linear + softmax", on ? "#b0bec5" : GREY, 24),
    line(x, TOP - 44, x, TOP - 58),
    text(x - 4, TOP - 48, `${c.tgt_tokens.length} probabilities`,
      { fill: "#607d8b", "font-size": 10, "text-anchor": "end" }),
    text(4, 14, title, { "font-weight": "bold", "text-anchor": "start" }), ...sources(r, step, base + 12)];
  if (on) {
    // the word written and its probability, worded as the frames (book/whole_model.py) word it
    items.push(text(x, TOP - 64, `${out[step]}   p = ${r.topK[step][0].prob.toFixed(2)}`,
      { "font-weight": "bold", style: "white-space: pre" }),
      note(BUS + 3, y(0) + LH + 14, `each ${dims(c.n_heads, src, c.d_model / c.n_heads)}`));
  }
  for (let l = 0; l < c.n_layers; l += 1) {
    const [middle, below] = [y(l) + LH / 2, y(l) + LH];
    items.push(...box(ENC, y(l), `encoder ${l}`, on ? GREY : "#9ccc65"),
      ...box(DEC, y(l), `decoder ${l}`, on ? "#f48fb1" : GREY),
      line(BUS, middle, DEC, middle, kv), on ? note(BUS + 3, middle - 4, "K, V") : null,
      line(ENC + MID, below + GAP, ENC + MID, below), note(ENC + MID + 4, below + 20, dims(src, c.d_model)),
      line(x, below + GAP, x, below), note(x + 4, below + 20, on ? dims(read.length, c.d_model) : ""));
  }
  return s("svg", { viewBox: `0 0 360 ${base + 36}`, "font-size": 11, role: "img", "data-role": "whole-model",
    "data-step": step, style: "width: 100%; max-width: 540px; height: auto",
    "aria-label": `the whole model, ${on ? `step ${step}` : "encoding"}` }, items);
}

export function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const frames = element.querySelector("[data-il-widget=frames]");
  const seen = {};
  liveWidget(element, api, p, {
    lazy: true,
    configured: (config) => Object.assign(seen, { config }),
    compute: (corpus, sentence) => api.translate(corpus, sentence, { topK: 1 }),
    draw(result) {
      frames.hidden = true;
      const holder = h("div", {}, picture(result, seen.config, -1));
      const labels = ["encode", ...result.hypotheses[0].tokens.map((t, i) => `${i}: ${t}`)];
      const show = (i) => holder.replaceChildren(picture(result, seen.config, i - 1));
      const steps = steadyReadout(slider("step", labels, 0, show, "step"), labels);
      return [h("div", { class: "il-controls" }, player({ name: "step", labels }, steps.querySelector("input")), steps),
        holder];
    },
  });
  element.prepend(element.querySelector(".il-live"));
}
