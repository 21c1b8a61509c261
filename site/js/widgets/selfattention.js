// The post's self-attention picture for the reader's own sentence (chapter 04; params {corpus,
// sentence, corpora, examples}): a line from each word on the left (query) to each on the right
// (key), as strong as its weight, for one encoder layer and head or every head in its colour (a legend
// names the colours, the page's --il-head-<i>; the strongest lines are drawn last, so that no head's hides
// another's). Tap, click or focus (Tab, the arrow keys, Enter or Space) a word to see its lines and read its
// weights (all heads: the top 3); the pointer passing over the drawing changes nothing. A sentence with "it"
// opens on "it", the word whose head the book's coreference model grew (chapter 03).
import { h, s } from "./dom.js";
import { liveWidget } from "./sentence.js";
import { layerHead } from "./translate.js";

const colour = (head) => `var(--il-head-${head % 8})`;  // book/palette.py's HEAD_COLORS
// A phone (illustrated.css's breakpoint) spaces the rows 56 units apart: the 400-unit drawing is shown about
// 340 px wide there, so each word's row stays a 44 px target.
const ROW = window.matchMedia("(max-width: 720px)").matches ? 56 : 24;
const [LEFT, RIGHT, WIDTH] = [120, 280, 400];
const y = (i) => ROW * (i + 0.5) + 6;
const ARROWS = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, Home: -Infinity, End: Infinity };
const swatch = (head) => h("span",
  { class: "il-head-swatch", style: `background: ${colour(head)}`, "aria-hidden": "true" });

/** What query q attends to in one head: every key's weight in order, or (all heads) its top 3. */
function said(head, weights, tokens, q, top) {
  const pairs = weights[q].map((w, k) => [w, `${tokens[k]} ${w.toFixed(2)}`]);
  const shown = top ? pairs.sort((a, b) => b[0] - a[0]).slice(0, 3) : pairs;
  return `head ${head}: "${tokens[q]}" attends to ${shown.map(([, t]) => t).join(", ")}`;
}

/** The heads' colours, always shown: which line is which head's without hovering. */
function legend(heads) {
  return h("p", { class: "il-legend", "data-role": "legend" }, heads.map(([head]) =>
    h("span", { "data-head": head, class: "il-legend-head" }, swatch(head), `head ${head}`)));
}

/** @param {Array<[number, number[][]]>} heads [head, weights [query][key]] @param {string[]} tokens
 * @param {Element} readout the widget's one live readout @param {{chosen}} view the word chosen last */
function picture(heads, tokens, readout, view) {
  // Each head's lines leave their word a little apart from the others', and all are drawn weakest first:
  // a strong line of head 0 is never hidden under a weak one of head 2.
  const spread = (rank) => (heads.length > 1 ? (rank - (heads.length - 1) / 2) * 2 : 0);
  const lines = heads.flatMap(([head, weights], rank) => weights.flatMap((row, q) => row.map((w, k) => [w,
    s("line", { x1: LEFT + 6, y1: y(q) - 4 + spread(rank), x2: RIGHT - 6, y2: y(k) - 4 + spread(rank),
      style: `stroke: ${colour(head)}`, "stroke-opacity": w.toFixed(3), "stroke-width": (0.5 + 3.5 * w).toFixed(2),
      "data-q": q, "data-k": k, "data-head": head, "data-weight": String(w) })])))
    .sort((a, b) => a[0] - b[0]).map(([, line]) => line);
  // the word shown: the one chosen last in this sentence, else "it", else none until one is chosen
  const same = view.chosen?.sentence === tokens.join(" ");
  const first = same ? view.chosen.q : tokens.includes("it") ? tokens.indexOf("it") : null;
  const show = (q) => {
    view.chosen = { sentence: tokens.join(" "), q };
    for (const line of lines) line.classList.toggle("il-faded", Number(line.dataset.q) !== q);
    queries.forEach((word, i) => word.classList.toggle("il-chosen", i === q));
    readout.replaceChildren(...heads.map(([head, weights]) =>
      h("div", {}, heads.length > 1 ? swatch(head) : null, said(head, weights, tokens, q, heads.length > 1))));
  };
  const ring = (q, on) => targets[q].classList.toggle("il-focus", on);
  const key = (event, q) => {  // one Tab stop for all the words; the arrow keys move along them
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      return show(q);
    }
    const next = Math.min(tokens.length - 1, Math.max(0, q + (ARROWS[event.key] ?? 0)));
    if (next === q) return;
    event.preventDefault();
    queries.forEach((word, i) => word.setAttribute("tabindex", i === next ? 0 : -1));
    queries[next].focus();
  };
  const tab = first ?? 0;
  const queries = tokens.map((text, q) => s("text", { x: LEFT, y: y(q), "text-anchor": "end", text,
    tabindex: q === tab ? 0 : -1, class: "il-query", "data-q": q, onfocus: () => (ring(q, true), show(q)),
    onblur: () => ring(q, false), onclick: () => show(q), onkeydown: (event) => key(event, q) }));
  const keys = tokens.map((text, k) => s("text", { x: RIGHT, y: y(k), text }));
  // Each word's target, a row tall (44 px or more on a phone): the word's glyphs alone are 14 px tall.
  const targets = tokens.map((_, q) => s("rect", { x: 0, y: y(q) - ROW / 2 - 4, width: LEFT + 4, height: ROW,
    class: "il-target", "data-q": q, onclick: () => queries[q].focus() }));
  const height = y(tokens.length) - 6;
  const svg = s("svg", { class: "il-attn", width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`,
    role: "img", "aria-label": `self-attention lines from each word on the left to each word on the right`,
    "data-role": "attention" }, lines, targets, queries, keys);
  if (first === null) {
    readout.replaceChildren(h("div", { text: "Tap, click or Tab to a word on the left to read its weights." }));
  } else show(first);
  return [legend(heads), svg];
}

export function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const view = {};
  // one readout for the widget's life: a screen reader announces each new word's weights
  const readout = h("p", { class: "il-readout", "data-role": "readout", "aria-live": "polite" });
  const live = liveWidget(element, api, p, {
    ...layerHead("encoder", ["all", "all heads"], view, () => live.redraw()),
    compute: (corpus, sentence) => api.translate(corpus, sentence, { maxLen: 1 }),
    describe: (corpus, sentence) => `the encoder self-attention of the ${corpus} model for '${sentence}'`,
    draw(result) {
      const heads = result.encoderAttention[view.layer].map((weights, i) => [i, weights])
        .filter(([i]) => view.head === "all" || i === Number(view.head));
      const which = view.head === "all" ? "every head in its own colour" : `head ${view.head}`;
      return [h("p", { class: "il-caption", text: `Encoder self-attention, layer ${view.layer}, ${which}:` }),
        ...picture(heads, result.sourceTokens, readout, view), readout];
    },
  });
}
