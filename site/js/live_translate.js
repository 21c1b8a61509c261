// The "type a sentence" live widget (chapters 07 and 10): the shipped model's greedy translation,
// its encoder-decoder attention for a chosen decoder layer and head (or their mean), and the
// decoder's most probable next words at every step. Mounted by live.js on a container that
// illustrated.widgets.live.live_translate wrote: data-corpus, data-sentence, data-corpora
// (comma-separated), data-top-k, data-examples (JSON: a sentence per corpus).
import { heatmap, meanOverHeads } from "./live_draw_heatmap.js";
import { stepBars } from "./live_draw_bars.js";
import { h, select } from "./live_dom.js";
import { sentenceBox } from "./live_sentence.js";
import { whenVisible, runner } from "./live_run.js";

function attentionView(result, state, redraw) {
  const cross = result.crossAttention;  // [layer][head][step][source]
  state.layer = Math.min(state.layer ?? cross.length - 1, cross.length - 1);
  if (state.head !== "mean" && Number(state.head) >= cross[0].length) state.head = "mean";
  const layers = cross.map((_, i) => [String(i), String(i + 1)]);
  const heads = [["mean", "mean of heads"], ...cross[0].map((_, i) => [String(i), String(i + 1)])];
  const weights = state.head === "mean" ? meanOverHeads(cross[state.layer])
    : cross[state.layer][Number(state.head)];
  const which = state.head === "mean" ? "mean over heads" : `head ${Number(state.head) + 1}`;
  const tokens = result.hypotheses[0].tokens;
  return h("div", {},
    h("div", { class: "il-row" },
      select("decoder layer", layers, state.layer, (v) => { state.layer = Number(v); redraw(); }, "layer"),
      select("head", heads, state.head, (v) => { state.head = v; redraw(); }, "head")),
    heatmap(weights, result.sourceTokens, tokens,
      `encoder-decoder attention, decoder layer ${state.layer + 1}, ${which}`));
}

/** Draw the widget into `element` (replacing its fallback) and keep it live. */
export async function mount(element, api) {
  const data = element.dataset;
  const corpora = data.corpora.split(",");
  const examples = JSON.parse(data.examples ?? "{}");
  const topK = Number(data.topK);
  const state = { corpus: data.corpus, layer: null, head: "mean", result: null };
  const shown = h("div", { "data-role": "result" });
  const redraw = () => {
    const { result } = state;
    const tokens = result.hypotheses[0].tokens;
    shown.replaceChildren(
      h("div", { class: "il-row" }, h("strong", { text: "translation" }),
        h("span", { class: "il-tokens", "data-role": "translation" },
          tokens.map((t) => h("span", { text: t }))),
        h("span", { text: `log-probability ${result.hypotheses[0].score.toFixed(4)}`,
          "data-role": "score", "data-score": String(result.hypotheses[0].score) })),
      attentionView(result, state, redraw),
      h("div", { text: `the ${topK} most probable next words at each step (probabilities)` }),
      stepBars(result.topK, tokens));
  };
  const run = runner(element,
    ({ corpus, sentence }) => api.translate(corpus, sentence, { topK }),
    (result) => { state.result = result; redraw(); });
  const ask = (sentence) => run({ corpus: state.corpus, sentence });
  const box = sentenceBox({ value: data.sentence, onSentence: ask });
  const useCorpus = async (corpus) => {
    state.corpus = corpus;
    shown.replaceChildren();  // never another corpus's translation under this one's name
    if (examples[corpus]) box.set(examples[corpus]);
    if (box.setWords(await api.words(corpus), corpus)) ask(box.value());
  };
  const corpusChoice = corpora.length > 1
    ? select("corpus", corpora.map((c) => [c, c]), state.corpus, useCorpus, "corpus") : null;
  element.replaceChildren(h("div", { class: "illustrated-live-widget" },
    h("div", { class: "il-row" }, corpusChoice,
      h("span", { text: `live: the shipped ${corpora.length > 1 ? "" : `${state.corpus} `}model, in your browser` })),
    box.element, h("div", { class: "il-status", "data-role": "status" }), shown));
  await api.ready;
  box.setWords(await api.words(state.corpus), state.corpus);
  whenVisible(element, () => ask(box.value()));
}
