// The beam search live widget (chapter 09): beam_size, top_beams and the length penalty α ->
// the returned hypotheses with their scores and the beam as a tree, computed in the browser by
// window.illustrated.translate (il.beam_search, line by line). Mounted by live.js on a container
// that illustrated.widgets.live.live_beam wrote: data-corpus, data-sentence, data-beam-size,
// data-top-beams, data-alpha, data-max-beam, data-max-len. As the Python widget
// (widgets/beam.py), a top_beams above beam_size is read as beam_size.
import { beamTree } from "./live_draw_tree.js";
import { h, slider } from "./live_dom.js";
import { runner, whenVisible } from "./live_run.js";
import { sentenceBox } from "./live_sentence.js";

// Keyword arguments are code, as the book writes them (never prose with an underscore).
const code = (text) => h("code", { text });

function hypothesesTable(hypotheses, settings) {
  return h("table", { class: "il-hyps", "data-role": "hypotheses" },
    h("caption", {}, code(`beam_size=${settings.beamSize}`), ", ",
      code(`top_beams=${settings.topBeams}`), ", ", code(`α=${settings.alpha}`),
      ": the returned translations, best first"),
    h("thead", {}, h("tr", {}, ["#", "translation", "score"].map((t) => h("th", { text: t })))),
    h("tbody", {}, hypotheses.map((hyp, i) => h("tr", { "data-role": "hypothesis" },
      h("td", { text: String(i + 1) }),
      h("td", { class: "il-tokens", "data-role": "tokens" }, hyp.tokens.map((t) => h("span", { text: t }))),
      h("td", { text: hyp.score.toFixed(4), "data-score": String(hyp.score) })))));
}

/** Draw the widget into `element` (replacing its fallback) and keep it live. */
export async function mount(element, api) {
  const data = element.dataset;
  const corpus = data.corpus;
  const maxBeam = Number(data.maxBeam), maxLen = Number(data.maxLen);
  const state = { beamSize: Number(data.beamSize), topBeams: Number(data.topBeams),
    alpha: Number(data.alpha), sentence: data.sentence };
  const shown = h("div", { "data-role": "result" });
  const run = runner(element, ({ sentence, ...settings }) => api.translate(corpus, sentence,
    { ...settings, maxLen, returnSteps: true }).then((result) => ({ result, settings })),
  ({ result, settings }) => {
    const note = state.topBeams > state.beamSize
      ? [code(`top_beams=${state.topBeams}`), " is read as ", code(`beam_size=${state.beamSize}`), "."] : [];
    shown.replaceChildren(hypothesesTable(result.hypotheses, settings),
      h("div", { class: "il-status" }, note), beamTree(result.steps, result.hypotheses));
  });
  const ask = () => run({ sentence: state.sentence, beamSize: state.beamSize,
    topBeams: Math.min(state.topBeams, state.beamSize), alpha: state.alpha });
  const box = sentenceBox({ value: state.sentence,
    onSentence: (sentence) => { state.sentence = sentence; ask(); } });
  const set = (name) => (value) => { state[name] = value; ask(); };
  element.replaceChildren(h("div", { class: "illustrated-live-widget" },
    h("div", { class: "il-row" }, h("span", { text: `live: beam search with the shipped ${corpus} model, in your browser` })),
    box.element,
    h("div", { class: "il-row" },
      slider(code("beam_size"), { min: 1, max: maxBeam, step: 1, value: state.beamSize }, set("beamSize"), "beam_size"),
      slider(code("top_beams"), { min: 1, max: maxBeam, step: 1, value: state.topBeams }, set("topBeams"), "top_beams"),
      slider("α", { min: 0, max: 2, step: 0.1, value: state.alpha }, set("alpha"), "alpha")),
    h("div", { class: "il-status", "data-role": "status" }), shown));
  await api.ready;
  box.setWords(await api.words(corpus), corpus);
  whenVisible(element, ask);
}
