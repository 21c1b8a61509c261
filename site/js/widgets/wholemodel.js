// The whole model in motion for the reader's own sentence (chapter 07; params {corpus, sentence}):
// the frames of src/illustrated/book/whole_model.py show until the sentence changes, then the same
// picture in SVG: the encoder stack once, the memory as K and V into every decoder layer, one
// frame per word written, the shapes on the arrows.
import { h, measure, s, slider } from "./dom.js";
import { player, steadyReadout } from "./frames.js";
import { liveWidget } from "./sentence.js";

// Boxes COL wide, LH high, GAP apart; the encoder at x = ENC, the decoder at DEC, the memory's bus at
// BUS, far enough left of the decoder for "K, V" (10 units high, about 24 wide) between them; the
// drawing WIDTH units wide, on the desktop with room right of the decoder for the word written
// coming back as its next input (the frames' "fed back in", which a phone's frames leave out too).
// A phone's column (PHONE, book/interactive.py's PHONE_MEDIA) gets a narrower drawing, so that the
// same units are larger there (11-unit text at 12.5 px in 342 px), its long lines (title, memory,
// the decoder's input) broken or anchored inside it.
const DESKTOP = { WIDTH: 378, COL: 148, ENC: 4, DEC: 208, BUS: 166, WORD: 9.5, phone: false };
const NARROW = { WIDTH: 300, COL: 124, ENC: 4, DEC: 172, BUS: 140, WORD: 10, phone: true };
const PHONE = "(max-width: 680px)";
const [LH, GAP, TOP, GREY, ROW] = [26, 34, 120, "var(--il-off)", 22];  // ROW: from one row of words to the next
// The page's palette (book/palette.py, as book/whole_model.py's frames): the ink, notes in it too (the
// muted grey reads under 4.5:1 on white), the muted grey for the loop of the word fed back in.
const [INK, NOTE, MUTED] = ["var(--il-text)", "var(--il-text)", "var(--il-muted)"];
const dims = (...d) => `(${d.join(", ")})`;
const text = (x, y, t, attrs) => s("text", { x, y, "text-anchor": "middle", ...attrs, text: t });
const bold = (x, y, t) => text(x, y, t, { "font-weight": "bold" });
const note = (x, y, t) => text(x, y, t, { fill: NOTE, "font-size": 10, "text-anchor": "start" });
const line = (x1, y1, x2, y2, stroke = INK) =>
  s("line", { x1, y1, x2, y2, stroke, "stroke-width": 1.5, "marker-end": "url(#il-arrow)" });
const box = (g, x, y, t, fill, height = LH) => [
  s("rect", { x, y, width: g.COL, height, rx: 6, fill, stroke: INK }),
  bold(x + g.COL / 2, y + height / 2 + 4, t)];
const arrowHead = () => s("defs", {}, s("marker", { id: "il-arrow", markerWidth: 6, markerHeight: 6, refX: 5, refY: 3,
  orient: "auto" }, s("path", { d: "M0,0 L6,3 L0,6 z" })));

/** Each word's left edge and row, `widths` (a space between words included) in rows at most `room`
 * wide (a word wider than a row alone on its own). */
function flow(widths, room) {
  let [at, row] = [0, 0];
  return widths.map((width) => {
    if (at > 0 && at + width > room) [at, row] = [0, row + 1];
    at += width;
    return { at: at - width, row };
  });
}

/** The source words under the encoder (g.WORD to 11 units high: at least 11 px on a phone), spread
 * across its column, each over a bar as dark as the last decoder layer's mean attention to it at
 * `step` (none at -1); in rows ROW apart where one row of g.WORD-high words reaches the bus.
 * Returns [items, rows]. */
function sources(g, r, step, y) {
  const words = r.sourceTokens, space = measure(" ", 11, "bold"), room = g.BUS - g.ENC - 6;  // up to the bus
  const natural = words.map((w) => measure(w, 11, "bold") + space);  // at 11 units
  const total = natural.reduce((a, b) => a + b, 0) - space;
  const size = Math.max(g.WORD, Math.min(11, 11 * g.COL / total));
  const spread = Math.max(1, g.COL / (total * size / 11));  // one row: the column shared out
  const widths = natural.map((w) => w * size / 11 * spread);
  const at = flow(widths, room + space * size / 11), cross = r.crossAttention.at(-1);
  return [words.flatMap((word, j) => {
    const [x, width, top] = [g.ENC + at[j].at, widths[j] - space * size / 11, y + at[j].row * ROW];
    const weight = step < 0 ? 0 : cross.reduce((sum, head) => sum + head[step][j], 0) / cross.length;
    return [text(x + widths[j] / 2, top, word, { "font-weight": "bold", "font-size": size }),
      s("rect", { x: x + (widths[j] - width) / 2, y: top + 6, width, height: 5, fill: "var(--il-value)",
        "fill-opacity": weight })];
  }), at.at(-1).row + 1];
}

/** The decoder's input (`read`) at `y`: one line under the decoder (`attrs` place it) where it fits
 * `room`, else rows ROW apart from the column's left. Returns [items, rows]. */
function input(g, read, y, attrs, room) {
  const widths = read.map((w) => measure(`${w} `, 11));
  if (widths.reduce((a, b) => a + b, 0) <= room) return [[text(attrs.x, y, read.join(" "), attrs)], 1];
  const at = flow(widths, g.COL), rows = at.at(-1).row + 1;
  return [Array.from({ length: rows }, (_, row) => text(g.DEC, y + row * ROW,
    read.filter((_, j) => at[j].row === row).join(" "), { "text-anchor": "start" })), rows];
}

/** `reads <bos> i am` where it fits `room` units as a note, else `reads <bos> and the N words written`. */
const reading = (read, room) => (measure(`reads ${read.join(" ")}`, 10) <= room ? `reads ${read.join(" ")}`
  : `reads <bos> and the ${read.length - 1} words written`);

/** The drawing's long lines: its title, the memory's note and the decoder's input (`read`), whole
 * on the desktop where they fit; on a phone, or a title too long for the desktop, the title and
 * what the decoder reads in two lines; on a phone the memory's note in two and the input ending at
 * the column's right edge; an input too long for the column in rows. Returns [items, rows]: rows
 * those of the last step's input, so that every frame is as tall. */
function lines(g, step, read, out, memory, base) {
  const title = (t) => text(4, 14, t, { "font-weight": "bold", "text-anchor": "start" });
  const said = `step ${step}: reads ${read.join(" ")}, writes "${out[step]}"`;
  const heads = step < 0 ? [title("the encoder reads the whole sentence once")]
    : g.phone || measure(said, 11, "bold") > g.WIDTH - 8 ? [title(`step ${step}: writes "${out[step]}"`),
      note(4, 30, reading(read, g.WIDTH - 8))] : [title(said)];
  // one line: on a phone ending at the column's edge, as far left as the bus; else centred under it
  const place = (words) => (g.phone
    ? input(g, words, base + 30, { x: g.DEC + g.COL, "text-anchor": "end" }, g.DEC + g.COL - g.BUS - 4)
    : input(g, words, base + 30, { x: g.DEC + g.COL / 2 }, 2 * (g.WIDTH - g.DEC - g.COL / 2)));
  const [items] = place(read), [, rows] = place(["<bos>", ...out.slice(0, -1)]);  // the last step's rows
  const notes = g.phone ? [note(g.ENC, TOP - 32, `${memory},`), note(g.ENC, TOP - 20, "computed once")]
    : [note(g.ENC, TOP - 20, `${memory}, computed once`)];
  return [[...heads, ...notes, ...items], rows];
}

/** The word written (its label `said`, centred at x over the decoder) coming back, dashed, round the
 * decoder's right side into its input line at `y` (`read`: that line's words), "fed back in" beside. */
function fedBack(g, x, said, read, y) {
  if (g.phone || said.startsWith("<eos>")) return [];  // no room on a phone; <eos> ends the sentence
  const loop = g.DEC + g.COL + 7, top = TOP - 68;
  const width = measure(read.join(" "), 11);
  const end = width <= g.COL ? x + width / 2 + 3 : g.DEC + g.COL + 1;  // a longer input wraps in the column
  return [s("polyline", { points: [[x + measure(said, 11, "bold") / 2 + 3, top], [loop, top], [loop, y - 4],
    [end + 5, y - 4]].join(" "), fill: "none", stroke: MUTED, "stroke-dasharray": "4 3" }),
  line(end + 6, y - 4, end, y - 4, MUTED),
  text(loop + 3, (top + y) / 2, "fed back in at the next step", { fill: NOTE, "font-size": 10,
    transform: `rotate(90 ${loop + 3} ${(top + y) / 2})` })];
}

/** Frame `step` (-1: the encoder reads the sentence; t: the decoder writes word t), drawn for the
 * geometry `g` (DESKTOP or NARROW). */
function picture(g, r, c, step) {
  const on = step >= 0;
  const [MID, ENC, DEC, BUS] = [g.COL / 2, g.ENC, g.DEC, g.BUS];
  const [src, out, x] = [r.sourceTokens.length, r.hypotheses[0].tokens, DEC + MID];
  const read = ["<bos>", ...out.slice(0, Math.max(step, 0))];
  const kv = on ? "var(--il-value)" : "var(--il-memory)";
  const y = (l) => TOP + (c.n_layers - 1 - l) * (LH + GAP);
  const base = y(0) + LH + 34;
  const memory = [[ENC + MID, TOP], [ENC + MID, TOP - 14], [BUS, TOP - 14], [BUS, y(0) + LH / 2]];
  const [long, readRows] = lines(g, step, read, out, `memory ${dims(src, c.d_model)}`, base);
  const [words, srcRows] = sources(g, r, step, base + 12);
  const items = [arrowHead(),
    s("polyline", { points: memory.join(" "), fill: "none", stroke: kv, "stroke-width": 1.5 }), ...long,
    line(x, TOP, x, TOP - 18), ...box(g, DEC, TOP - 44, "Linear + softmax", on ? "var(--il-probs)" : GREY, 24),
    line(x, TOP - 44, x, TOP - 58),
    text(x - 4, TOP - 48, `${c.tgt_tokens.length} probabilities`,
      { fill: NOTE, "font-size": 10, "text-anchor": "end" }),
    ...words];
  if (on) {
    // the word written and its probability, worded as the frames (book/whole_model.py) word it
    const said = `${out[step]}   p = ${r.topK[step][0].prob.toFixed(2)}`;
    items.push(text(x, TOP - 64, said, { "font-weight": "bold", style: "white-space: pre" }),
      note(BUS + 3, y(0) + LH + 14, `each ${dims(c.n_heads, src, c.d_model / c.n_heads)}`),
      ...fedBack(g, x, said, read, base + 30));
  }
  for (let l = 0; l < c.n_layers; l += 1) {
    const [middle, below] = [y(l) + LH / 2, y(l) + LH];
    items.push(...box(g, ENC, y(l), `encoder ${l}`, on ? GREY : "var(--il-encoder)"),
      ...box(g, DEC, y(l), `decoder ${l}`, on ? "var(--il-decoder)" : GREY),
      line(BUS, middle, DEC, middle, kv), on ? note(BUS + 3, middle - 4, "K, V") : null,
      line(ENC + MID, below + GAP, ENC + MID, below), note(ENC + MID + 4, below + 20, dims(src, c.d_model)),
      line(x, below + GAP, x, below), note(x + 4, below + 20, on ? dims(read.length, c.d_model) : ""));
  }
  const height = base + 36 + (Math.max(srcRows, readRows) - 1) * ROW;
  return s("svg", { viewBox: `0 0 ${g.WIDTH} ${height}`, "font-size": 11, role: "img",
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
    describe: (corpus, sentence) => `the whole ${corpus} model translating '${sentence}', step by step: the ` +
      "encoder reads it once, then the decoder writes one word a step",
    said: ({ hypotheses: [best] }) => `The model writes "${best.tokens.join(" ")}", a word a step: move the ` +
      "step slider to follow each.",
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
