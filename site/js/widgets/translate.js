// The "type a sentence" widget (chapter 10; params {corpus, sentence, corpora, topK, examples}): the
// greedy translation, its log-probability and how sure the model is, the encoder-decoder attention
// of one decoder layer and head (or their mean), and the topK most probable words at every position.
import { h, select, setOptions } from "./dom.js";
import { liveWidget } from "./sentence.js";

/** A probability as a reader says it: "99%", "<1%". */
export const confidence = (p) => (p < 0.01 ? "<1%" : `${Math.round(100 * p)}%`);
const numbered = (n, what) => Array.from({ length: n }, (_, i) => [String(i), `${what} ${i}`]);
const mean = (heads) => heads[0].map((row, i) => row.map((_, j) =>
  heads.reduce((sum, head) => sum + head[i][j], 0) / heads.length));

/** The layer and head selects of a view; `all`: the first head option; configured(config) fills them. */
export function layerHead(kind, all, view, redraw) {
  const set = (key, value) => {
    view[key] = value;
    redraw();
  };
  const layer = select(`${kind} layer`, [], "", (v) => set("layer", Number(v)), "layer");
  const head = select("head", [], "", (v) => set("head", v), "head");
  return { controls: [layer, head], configured(config) {
    Object.assign(view, { layer: config.n_layers - 1, head: all[0] });
    setOptions(layer, numbered(config.n_layers, "layer"), view.layer);
    setOptions(head, [all, ...numbered(config.n_heads, "head")], view.head);
  } };
}

const RAMP_STOPS = 9;  // palette.RAMP_STOPS

/** A weight or probability w in [0, 1] as the page's sequential colour (book/palette.py's ramp: the
 * --il-seq-<i> nearest w, and the ink that reads on it). */
export const shade = (w) => {
  const i = Math.round(Math.min(1, Math.max(0, w)) * (RAMP_STOPS - 1));
  return `background: var(--il-seq-${i}); color: var(--il-seq-ink-${i})`;
};

function heatmap(weights, sources, outputs, caption) {
  // A cell reads "0.25"; on a phone, in hundredths ("25", its data-pct), so that a sentence of a
  // dozen words fits the column with the source words set upright (_static/illustrated.css).
  const cell = (w) => h("td", { "data-weight": String(w), "data-pct": String(Math.round(100 * w)),
    style: shade(w) },
  h("span", { class: "il-w", text: w.toFixed(2) }));
  return h("div", { class: "il-scroll" }, h("table", { class: "il-heatmap", "data-role": "attention" },
    h("caption", { text: caption }),
    h("thead", {}, h("tr", {}, h("th", { class: "il-corner", text: "output \\ source" }),
      sources.map((t) => h("th", { text: t, "data-role": "source" })))),
    h("tbody", {}, weights.map((row, i) => h("tr", {},
      h("th", { text: outputs[i], "data-role": "output" }), row.map(cell))))));
}

function bars(positions, chosen) {
  return h("div", { class: "il-dists", "data-role": "distributions" }, positions.map((ranks, t) =>
    h("div", { class: "il-dist" }, h("p", { text: `position ${t}: ${chosen[t]}` }),
      ranks.map(({ token, prob }) => h("div", { class: token === chosen[t] ? "il-bar il-chosen" : "il-bar",
        "data-token": token, "data-prob": String(prob) },
      h("span", { text: token }), h("div", { style: `width: ${(100 * prob).toFixed(1)}%` }),
      h("span", { text: prob.toFixed(3) }))))));
}

export function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const view = {};
  const live = liveWidget(element, api, p, {
    ...layerHead("decoder", ["mean", "mean of heads"], view, () => live.redraw()),
    compute: (corpus, sentence) => api.translate(corpus, sentence, { topK: p.topK }),
    describe: (corpus, sentence) => `the ${corpus} model's translation of '${sentence}' and its ` +
      "encoder-decoder attention",
    said: ({ hypotheses: [best] }) =>
      `Translation: ${best.tokens.filter((t) => t !== "<eos>").join(" ")}; the model is ` +
      `${confidence(Math.exp(best.score))} sure of it.`,
    draw(result) {
      const best = result.hypotheses[0];
      const cross = result.crossAttention[view.layer];
      const which = view.head === "mean" ? "mean of heads" : `head ${view.head}`;
      const sure = confidence(Math.exp(best.score));
      return [
        h("p", {}, h("strong", { text: "translation " }),
          h("span", { class: "il-tokens", "data-role": "translation" }, best.tokens.map((t) => h("span", { text: t }))),
          h("span", { "data-role": "score", "data-score": String(best.score),
            text: ` log-probability ${best.score.toFixed(4)}` }),
          h("span", { "data-role": "confidence", text: `: the model is ${sure} sure of it` })),
        heatmap(view.head === "mean" ? mean(cross) : cross[Number(view.head)], result.sourceTokens,
          best.tokens, `encoder-decoder attention, decoder layer ${view.layer}, ${which}`),
        h("p", { text: `The ${p.topK} most probable next words at each position, with their probabilities:` }),
        bars(result.topK, best.tokens)];
    },
  });
}
