// The whole model in motion for the reader's own sentence (chapter 07; params {corpus, sentence}):
// the frames of src/illustrated/book/whole_model.py show until the sentence changes, then the same
// picture in SVG: the encoder stack once, the memory as K and V into every decoder layer, one
// frame per word written, the shapes on the arrows.
import { h, s, slider } from "./dom.js";
import { player } from "./frames.js";
import { liveWidget } from "./sentence.js";
import { confidence } from "./translate.js";
const COL = 160, ENC = 4, DEC = 196, LH = 26, GAP = 34, TOP = 120, BUS = 182, MID = COL / 2, GREY = "#eceff1";
const dims = (...d) => `(${d.join(", ")})`;
const text = (x, y, t, a = {}) => s("text", { x, y, "text-anchor": "middle", ...a, text: t });
const note = (x, y, t) => text(x, y, t, { fill: "#607d8b", "font-size": 10, "text-anchor": "start" });
const line = (x1, y1, x2, y2, stroke = "#263238") => s("line", { x1, y1, x2, y2, stroke, "stroke-width": 1.5, "marker-end": "url(#il-arrow)" });
const box = (x, y, t, fill, height = LH) => [s("rect", { x, y, width: COL, height, rx: 6, fill, stroke: "#263238" }),
  text(x + MID, y + height / 2 + 4, t, { "font-weight": "bold" })];
// The source words (9.5 to 11 units high: at least 9 px on a phone), over bars as dark as step `step`'s attention.
const sources = (r, step, y, n = r.sourceTokens.join(" ").length + 1, at = (j) => r.sourceTokens.slice(0, j).join(" ").length + (j > 0),
  fs = Math.max(9.5, Math.min(11, COL / n / 0.62)), w = Math.max(COL, n * 0.62 * fs)) => r.sourceTokens.flatMap((t, j) => [
  text(ENC + w * (at(j) + t.length / 2 + 0.5) / n, y, t, { "font-weight": "bold", "font-size": fs }), s("rect", {
    x: ENC + w * (at(j) + 0.5) / n, y: y + 6, width: w * t.length / n, height: 5, fill: "#6aa7d8", "fill-opacity":
    step < 0 ? 0 : r.crossAttention.at(-1).reduce((sum, head) => sum + head[step][j], 0) / r.crossAttention[0].length })]);
/** Frame `step` (-1: the encoder reads the sentence; t: the decoder writes word t). */
function picture(r, c, step) {
  const n = c.n_layers, src = r.sourceTokens.length, out = r.hypotheses[0].tokens, on = step >= 0;
  const read = ["<bos>", ...out.slice(0, Math.max(step, 0))], kv = on ? "#6aa7d8" : "#7cb342";
  const y = (l) => TOP + (n - 1 - l) * (LH + GAP), base = y(0) + LH + 34;
  const items = [s("defs", {}, s("marker", { id: "il-arrow", markerWidth: 6, markerHeight: 6, refX: 5, refY: 3,
    orient: "auto" }, s("path", { d: "M0,0 L6,3 L0,6 z" }))), s("polyline", { points: `${ENC + MID},${TOP} ${ENC + MID},${TOP - 14} ` +
    `${BUS},${TOP - 14} ${BUS},${y(0) + LH / 2}`, fill: "none", stroke: kv, "stroke-width": 1.5 }),
  note(ENC, TOP - 20, `memory ${dims(src, c.d_model)}, computed once`), text(DEC + MID, base + 30, read.join(" ")),
  line(DEC + MID, TOP, DEC + MID, TOP - 18), ...box(DEC, TOP - 44, "Linear + softmax", on ? "#b0bec5" : GREY, 24),
  line(DEC + MID, TOP - 44, DEC + MID, TOP - 58), note(DEC + MID + 4, TOP - 48, `${c.tgt_tokens.length} probabilities`),
  text(4, 14, on ? `step ${step}: reads ${read.join(" ")}, writes "${out[step]}"` : "the encoder reads the whole sentence once",
    { "font-weight": "bold", "text-anchor": "start" }), ...sources(r, step, base + 12),
  on ? text(DEC + MID, TOP - 64, `${out[step]} (${confidence(r.topK[step][0].prob)} sure)`, { "font-weight": "bold" }) : null,
  on ? note(BUS + 3, y(0) + LH + 14, `each ${dims(c.n_heads, src, c.d_model / c.n_heads)}`) : null];
  for (let l = 0; l < n; l += 1) {
    items.push(...box(ENC, y(l), `encoder ${l}`, on ? GREY : "#9ccc65"), ...box(DEC, y(l), `decoder ${l}`, on ? "#f48fb1" : GREY),
      line(BUS, y(l) + LH / 2, DEC, y(l) + LH / 2, kv), on ? note(BUS + 2, y(l) + LH / 2 - 4, "K,V") : null,
      line(ENC + MID, y(l) + LH + GAP, ENC + MID, y(l) + LH), note(ENC + MID + 4, y(l) + LH + 20, dims(src, c.d_model)),
      line(DEC + MID, y(l) + LH + GAP, DEC + MID, y(l) + LH), note(DEC + MID + 4, y(l) + LH + 20, on ? dims(read.length, c.d_model) : ""));
  }
  return s("svg", { viewBox: `0 0 360 ${base + 36}`, "font-size": 11, role: "img", "data-role": "whole-model", "data-step": step,
    style: "width: 100%; max-width: 540px; height: auto", "aria-label": `the whole model, ${on ? `step ${step}` : "encoding"}` }, items);
}
export function mount(element, api) {
  const p = JSON.parse(element.dataset.params), frames = element.querySelector("[data-il-widget=frames]"), seen = {};
  liveWidget(element, api, p, { lazy: true, configured: (c) => { seen.config = c; },
    compute: (corpus, sentence) => api.translate(corpus, sentence, { topK: 1 }),
    draw(result) {
      frames.hidden = true;
      const config = seen.config, holder = h("div", {}, picture(result, config, -1));
      const labels = ["encode", ...result.hypotheses[0].tokens.map((t, i) => `${i}: ${t}`)];
      const steps = slider("step", labels, 0, (i) => holder.replaceChildren(picture(result, config, i - 1)), "step");
      return [h("div", { class: "il-controls" }, player({ name: "step", labels }, steps.querySelector("input")), steps), holder];
    } });
  element.prepend(element.querySelector(".il-live"));
}
