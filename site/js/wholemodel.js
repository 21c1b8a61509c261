// The whole model in motion for the reader's own sentence (chapter 07; params {corpus, sentence}):
// the frames of src/illustrated/book/whole_model.py show until the sentence changes, then the same
// picture in SVG: the encoder stack once, the memory as K and V into every decoder layer, one
// frame per word written, the shapes on the arrows.
import { h, s, slider } from "./dom.js";
import { player, steadyReadout } from "./frames.js";
import { liveWidget } from "./sentence.js";

// Boxes COL wide, LH high, GAP apart; the encoder at x = ENC, the decoder at DEC, the memory's bus at
// BUS, far enough left of the decoder for "K, V" (10 units high, about 24 wide) between them; the
// drawing WIDTH units wide. A phone's column (PHONE, book/interactive.py's PHONE_MEDIA) gets a
// narrower drawing, so that the same units are larger there (11-unit text at 12.5 px in 342 px),
// its long lines (title, memory, the decoder's input) broken or anchored inside it.
const DESKTOP = { WIDTH: 360, COL: 148, ENC: 4, DEC: 208, BUS: 166, WORD: 9.5, phone: false };
const NARROW = { WIDTH: 300, COL: 124, ENC: 4, DEC: 172, BUS: 140, WORD: 10, phone: true };
const PHONE = "(max-width: 680px)";
const [LH, GAP, TOP, GREY] = [26, 34, 120, "#eceff1"];
const dims = (...d) => `(${d.join(", ")})`;
const text = (x, y, t, attrs) => s("text", { x, y, "text-anchor": "middle", ...attrs, text: t });
const bold = (x, y, t) => text(x, y, t, { "font-weight": "bold" });
const note = (x, y, t) => text(x, y, t, { fill: "#607d8b", "font-size": 10, "text-anchor": "start" });
const line = (x1, y1, x2, y2, stroke = "#263238") =>
  s("line", { x1, y1, x2, y2, stroke, "stroke-width": 1.5, "marker-end": "url(#il-arrow)" });
const box = (g, x, y, t, fill, height = LH) => [
  s("rect", { x, y, width: g.COL, height, rx: 6, fill, stroke: "#263238" }),
  bold(x + g.COL / 2, y + height / 2 + 4, t)];
const arrowHead = () => s("defs", {}, s("marker", { id: "il-arrow", markerWidth: 6, markerHeight: 6, refX: 5, refY: 3,
  orient: "auto" }, s("path", { d: "M0,0 L6,3 L0,6 z" })));

/** The source words under the encoder (g.WORD to 11 units high: at least 11 px on a phone), each over
 * a bar as dark as the last decoder layer's mean attention to it at `step` (none at -1). */
function sources(g, r, step, y) {
  const chars = r.sourceTokens.join(" ").length + 1;
  const size = Math.max(g.WORD, Math.min(11, g.COL / chars / 0.62));
  const unit = Math.max(g.COL, chars * 0.62 * size) / chars;  // one character's width
  const cross = r.crossAttention.at(-1);
  let at = 0.5;  // where the word starts, in characters
  return r.sourceTokens.flatMap((word, j) => {
    const [x, width] = [g.ENC + unit * at, unit * word.length];
    at += word.length + 1;
    const weight = step < 0 ? 0 : cross.reduce((sum, head) => sum + head[step][j], 0) / cross.length;
    return [text(x + width / 2, y, word, { "font-weight": "bold", "font-size": size }),
      s("rect", { x, y: y + 6, width, height: 5, fill: "#6aa7d8", "fill-opacity": weight })];
  });
}

/** The drawing's long lines: its title, the memory's note and the decoder's input (`read`), whole
 * on the desktop; on a phone the title and the note in two lines, the input ending at the column's
 * right edge. */
function lines(g, step, read, out, memory, base) {
  const [x, reads] = [g.DEC + g.COL / 2, read.join(" ")];
  const title = (t) => text(4, 14, t, { "font-weight": "bold", "text-anchor": "start" });
  if (!g.phone) {
    const said = `step ${step}: reads ${reads}, writes "${out[step]}"`;
    return [title(step < 0 ? "the encoder reads the whole sentence once" : said),
      note(g.ENC, TOP - 20, `${memory}, computed once`), text(x, base + 30, reads)];
  }
  return [...(step < 0 ? [title("the encoder reads the whole sentence once")]
    : [title(`step ${step}: writes "${out[step]}"`), note(4, 30, `reads ${reads}`)]),
  note(g.ENC, TOP - 32, `${memory},`), note(g.ENC, TOP - 20, "computed once"),
  text(g.DEC + g.COL, base + 30, reads, { "text-anchor": "end" })];
}

/** Frame `step` (-1: the encoder reads the sentence; t: the decoder writes word t), drawn for the
 * geometry `g` (DESKTOP or NARROW). */
function picture(g, r, c, step) {
  const on = step >= 0;
  const [MID, ENC, DEC, BUS] = [g.COL / 2, g.ENC, g.DEC, g.BUS];
  const [src, out, x] = [r.sourceTokens.length, r.hypotheses[0].tokens, DEC + MID];
  const read = ["<bos>", ...out.slice(0, Math.max(step, 0))];
  const kv = on ? "#6aa7d8" : "#7cb342";
  const y = (l) => TOP + (c.n_layers - 1 - l) * (LH + GAP);
  const base = y(0) + LH + 34;
  const memory = [[ENC + MID, TOP], [ENC + MID, TOP - 14], [BUS, TOP - 14], [BUS, y(0) + LH / 2]];
  const items = [arrowHead(),
    s("polyline", { points: memory.join(" "), fill: "none", stroke: kv, "stroke-width": 1.5 }),
    ...lines(g, step, read, out, `memory ${dims(src, c.d_model)}`, base),
    line(x, TOP, x, TOP - 18), ...box(g, DEC, TOP - 44, "Linear + softmax", on ? "#b0bec5" : GREY, 24),
    line(x, TOP - 44, x, TOP - 58),
    text(x - 4, TOP - 48, `${c.tgt_tokens.length} probabilities`,
      { fill: "#607d8b", "font-size": 10, "text-anchor": "end" }),
    ...sources(g, r, step, base + 12)];
  if (on) {
    // the word written and its probability, worded as the frames (book/whole_model.py) word it
    items.push(text(x, TOP - 64, `${out[step]}   p = ${r.topK[step][0].prob.toFixed(2)}`,
      { "font-weight": "bold", style: "white-space: pre" }),
    note(BUS + 3, y(0) + LH + 14, `each ${dims(c.n_heads, src, c.d_model / c.n_heads)}`));
  }
  for (let l = 0; l < c.n_layers; l += 1) {
    const [middle, below] = [y(l) + LH / 2, y(l) + LH];
    items.push(...box(g, ENC, y(l), `encoder ${l}`, on ? GREY : "#9ccc65"),
      ...box(g, DEC, y(l), `decoder ${l}`, on ? "#f48fb1" : GREY),
      line(BUS, middle, DEC, middle, kv), on ? note(BUS + 3, middle - 4, "K, V") : null,
      line(ENC + MID, below + GAP, ENC + MID, below), note(ENC + MID + 4, below + 20, dims(src, c.d_model)),
      line(x, below + GAP, x, below), note(x + 4, below + 20, on ? dims(read.length, c.d_model) : ""));
  }
  return s("svg", { viewBox: `0 0 ${g.WIDTH} ${base + 36}`, "font-size": 11, role: "img",
    "data-role": "whole-model", "data-step": step, "data-layout": g.phone ? "phone" : "desktop",
    style: `width: 100%; max-width: ${g.phone ? g.WIDTH * 1.5 : 540}px; height: auto`,
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
      const draw = (step) => picture(window.matchMedia(PHONE).matches ? NARROW : DESKTOP, result, seen.config,
        step);
      const holder = h("div", {}, draw(-1));
      const labels = ["encode", ...result.hypotheses[0].tokens.map((t, i) => `${i}: ${t}`)];
      const show = (i) => holder.replaceChildren(draw(i - 1));
      const steps = steadyReadout(slider("step", labels, 0, show, "step"), labels);
      return [h("div", { class: "il-controls" }, player({ name: "step", labels }, steps.querySelector("input")), steps),
        holder];
    },
  });
  element.prepend(element.querySelector(".il-live"));
}
