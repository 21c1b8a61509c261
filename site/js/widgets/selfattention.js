// The post's self-attention picture for the reader's own sentence (chapter 04; params {corpus,
// sentence, corpora, examples}): a line from each word on the left (query) to each on the right
// (key), as strong as its weight, for one encoder layer and head or every head in its colour (a legend
// names the colours; the strongest lines are drawn last, so that no head's hides another's). Tap, hover
// or focus (Tab, arrows) a word to see its lines and read its weights (all heads: the top 3); a sentence
// with "it" opens on "it", the word whose head the book's coreference model grew (chapter 03).
import { h, s } from "./dom.js";
import { liveWidget } from "./sentence.js";
import { layerHead } from "./translate.js";

const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
// A phone (illustrated.css's breakpoint) spaces the rows 56 units apart: the 400-unit drawing is shown about
// 340 px wide there, so each word's row stays a 44 px target.
const ROW = window.matchMedia("(max-width: 720px)").matches ? 56 : 24;
const [LEFT, RIGHT, WIDTH] = [120, 280, 400];
const y = (i) => ROW * (i + 0.5) + 6;
const ARROWS = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };

/** What query q attends to in one head: every key's weight in order, or (all heads) its top 3. */
function said(head, weights, tokens, q, top) {
  const pairs = weights[q].map((w, k) => [w, `${tokens[k]} ${w.toFixed(2)}`]);
  const shown = top ? pairs.sort((a, b) => b[0] - a[0]).slice(0, 3) : pairs;
  return `head ${head}: "${tokens[q]}" attends to ${shown.map(([, t]) => t).join(", ")}`;
}

/** The heads' colours, always shown: which line is which head's without hovering. */
function legend(heads) {
  return h("p", { class: "il-legend", "data-role": "legend" }, heads.map(([head]) =>
    h("span", { "data-head": head, style: `color: ${COLOURS[head % 8]}; margin-right: 0.8em; white-space: nowrap` },
      h("span", { text: "\u25A0 ", "aria-hidden": "true" }), `head ${head}`)));
}

/** @param {Array<[number, number[][]]>} heads [head, weights [query][key]] @param {string[]} tokens */
function picture(heads, tokens) {
  const readout = h("p", { class: "il-readout", "data-role": "readout", "aria-live": "polite" });
  // Each head's lines leave their word a little apart from the others', and all are drawn weakest first:
  // a strong line of head 0 is never hidden under a weak one of head 2.
  const spread = (rank) => (heads.length > 1 ? (rank - (heads.length - 1) / 2) * 2 : 0);
  const lines = heads.flatMap(([head, weights], rank) => weights.flatMap((row, q) => row.map((w, k) => [w,
    s("line", { x1: LEFT + 6, y1: y(q) - 4 + spread(rank), x2: RIGHT - 6, y2: y(k) - 4 + spread(rank),
      stroke: COLOURS[head % 8], "stroke-opacity": w.toFixed(3), "stroke-width": (0.5 + 3.5 * w).toFixed(2),
      "data-q": q, "data-k": k, "data-head": head, "data-weight": String(w) })])))
    .sort((a, b) => a[0] - b[0]).map(([, line]) => line);
  const rest = tokens.includes("it") ? tokens.indexOf("it") : null;  // the word shown until one is chosen
  const show = (q) => {
    for (const line of lines) line.classList.toggle("il-faded", q !== null && Number(line.dataset.q) !== q);
    const help = h("div", { text: "Tap, hover or focus a word on the left to read its weights." });
    readout.replaceChildren(...(q === null ? [help] : heads.map(([head, weights]) =>
      h("div", { text: said(head, weights, tokens, q, heads.length > 1), style: `color: ${COLOURS[head % 8]}` }))));
  };
  const move = (event, q) => {  // one Tab stop for all the words; the arrow keys move along them
    const next = q + (ARROWS[event.key] ?? 0);
    if (next === q || next < 0 || next >= tokens.length) return;
    event.preventDefault();
    queries.forEach((word, i) => word.setAttribute("tabindex", i === next ? 0 : -1));
    queries[next].focus();
  };
  const queries = tokens.map((text, q) => s("text", { x: LEFT, y: y(q), "text-anchor": "end", text,
    tabindex: q === 0 ? 0 : -1, class: "il-query", "data-q": q, onfocus: () => show(q),
    onmouseenter: () => show(q), onclick: () => show(q), onkeydown: (event) => move(event, q) }));
  const keys = tokens.map((text, k) => s("text", { x: RIGHT, y: y(k), text }));
  // Each word's target, a row tall (44 px or more on a phone): the word's glyphs alone are 14 px tall.
  const targets = tokens.map((_, q) => s("rect", { x: 0, y: y(q) - ROW / 2 - 4, width: LEFT + 4, height: ROW,
    fill: "transparent", "data-q": q, onmouseenter: () => show(q), onclick: () => queries[q].focus() }));
  const height = y(tokens.length) - 6;
  const svg = s("svg", { class: "il-attn", width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`,
    role: "img", "aria-label": `self-attention lines from each word on the left to each word on the right`,
    "data-role": "attention", onmouseleave: () => show(rest) }, lines, targets, queries, keys);
  show(rest);
  return [legend(heads), svg, readout];
}

export function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const view = {};
  const live = liveWidget(element, api, p, {
    ...layerHead("encoder", ["all", "all heads"], view, () => live.redraw()),
    compute: (corpus, sentence) => api.translate(corpus, sentence, { maxLen: 1 }),
    describe: (corpus, sentence) => `the encoder self-attention of the ${corpus} model for '${sentence}'`,
    draw(result) {
      const heads = result.encoderAttention[view.layer].map((weights, i) => [i, weights])
        .filter(([i]) => view.head === "all" || i === Number(view.head));
      const which = view.head === "all" ? "every head in its own colour" : `head ${view.head}`;
      return [h("p", { class: "il-caption", text: `Encoder self-attention, layer ${view.layer}, ${which}:` }),
        ...picture(heads, result.sourceTokens)];
    },
  });
}
