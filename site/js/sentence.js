// What the live widgets (translate.js, beam.js, selfattention.js) share: the corpus and sentence
// inputs, the model's words offered as the reader types (one <datalist>: nothing added to the
// Tab order), a line saying which sentence lengths the model was trained on, punctuation it never
// saw left out by name, and one result area that a new input clears and an error replaces.
// The container's data-state ("busy", "ready", "error") and data-shown (the input drawn, as
// JSON) let tests wait for the page as a reader would.
import { h, select } from "./dom.js";
import { PUNCTUATION, tokenize } from "./tokenizer.js";
import { SPECIALS } from "./vocab.js";

let counter = 0;
const quoted = (words) => words.map((w) => `"${w}"`).join(", ");
const span = ([lo, hi]) => (lo === hi ? `${lo}` : `${lo} to ${hi}`);

/**
 * {sentence, notes}: the typed text's tokens without the punctuation the model (config:
 * {corpus}.json) never saw, named in a note, as a note a length it was not trained on. Throws
 * for an empty box, or naming the words the model does not know.
 */
export function readable(text, config) {
  const name = `the ${config.corpus} model`;
  if (!text.trim()) throw new Error("Type a sentence: the box is empty.");
  const known = new Set(config.src_tokens.filter((t) => !SPECIALS.includes(t)));
  const tokens = tokenize(text);
  const dropped = [...new Set(tokens.filter((t) => PUNCTUATION.includes(t) && !known.has(t)))];
  const words = tokens.filter((t) => !dropped.includes(t));
  const unknown = [...new Set(words.filter((t) => !known.has(t)))];
  if (unknown.length) {
    throw new Error(`The ${config.corpus} model does not know ${quoted(unknown)}: it knows only the words of its corpus.`);
  }
  if (!words.length) throw new Error(`Type a word: ${name} reads no punctuation.`);
  const notes = dropped.length ? [`Left out ${quoted(dropped)}: ${name} never saw punctuation.`] : [];
  const trained = config.train_src_len;
  if (words.length < trained[0] || words.length > trained[1]) {
    notes.push(`Warning: ${words.length} words, but ${name} was trained on sentences of ` +
      `${span(trained)} words only: outside them it often answers nonsense.`);
  }
  return { sentence: words.join(" "), notes };
}

/** Calls fn once, when element first comes near the screen (the runtime loads on first use). */
function whenVisible(element, fn) {
  const observer = new window.IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) { observer.disconnect(); fn(); }
  }, { rootMargin: "300px" });
  observer.observe(element);
}

/**
 * Mount the inputs and the result area into element (its default picture goes).
 * @param {object} p params: corpus, sentence, corpora (default [corpus]), examples ({corpus: sentence})
 * @param {object} w controls: Nodes shown under the inputs; settings(): their values (passed to
 *   compute, kept in data-shown); compute(corpus, sentence, settings): Promise of a result;
 *   draw(result): the result as Nodes; configured(config): a corpus was chosen
 * @returns {{run: function(): void, redraw: function(): void}} run: the input changed (clear,
 *   compute, draw); redraw: draw the kept result again (a view control changed)
 */
export function liveWidget(element, api, p, w) {
  const state = { corpus: p.corpus, words: null, result: null, serial: 0, timer: null };
  const list = h("datalist", { id: `il-words-${counter += 1}` });
  const input = h("input", { type: "text", list: list.id, "data-control": "sentence",
    autocomplete: "off", spellcheck: "false", onkeydown: (e) => { if (e.key === "Enter") run(); } });
  input.value = p.sentence;
  const about = h("p", { class: "il-about", "data-role": "about" });
  const notes = h("div", { class: "il-notes", "data-role": "notes", "aria-live": "polite" });
  const result = h("div", { class: "il-result", "data-role": "result", "aria-live": "polite" });
  const clear = (text) => {
    state.serial += 1;
    state.result = null;
    notes.replaceChildren();
    result.replaceChildren(h("p", { class: "il-status", text }));
    element.dataset.state = "busy";
    delete element.dataset.shown;
    return state.serial;
  };

  function configure(config) {
    if (state.words === config) return;
    state.words = config;
    about.textContent = `${config.corpus === "trained" ? "Your" : "The shipped"} ${config.corpus} model, run in your browser; it was trained ` +
      `on sentences of ${span(config.train_src_len)} words.`;
    w.configured?.(config);
    suggest(config);
  }

  // The last, unfinished word (after a space, punctuation or an elision's apostrophe) completed.
  function suggest(config) {
    const typed = input.value, part = /[^\s.,!?;:'\u2019]*$/u.exec(typed)[0].toLowerCase();
    const start = typed.slice(0, typed.length - part.length);
    const offered = config.src_tokens.filter((t) => !SPECIALS.includes(t) && t.startsWith(part) && t !== part);
    list.replaceChildren(...offered.sort().slice(0, 12).map((t) => h("option", { value: start + t })));
  }

  async function run() {
    window.clearTimeout(state.timer);
    const serial = clear("computing…"), corpus = state.corpus;
    try {
      const config = await api.config(corpus);
      if (serial !== state.serial) return;
      configure(config);
      const { sentence, notes: said } = readable(input.value, config);
      notes.replaceChildren(...said.map((text) => h("p", { text })));
      const settings = w.settings?.() ?? {};
      const out = await w.compute(corpus, sentence, settings);
      if (serial !== state.serial) return;
      state.result = out;
      redraw();
      element.dataset.shown = JSON.stringify({ corpus, sentence: input.value, ...settings });
      element.dataset.state = "ready";
    } catch (error) {
      if (serial !== state.serial) return;
      result.replaceChildren(h("p", { class: "il-error", role: "alert", text: error.message }));
      element.dataset.state = "error";
    }
  }

  function redraw() {
    if (state.result) result.replaceChildren(...w.draw(state.result).filter(Boolean));
  }

  input.addEventListener("input", () => {
    clear("");  // a new input clears the old result at once
    if (state.words) suggest(state.words);
    window.clearTimeout(state.timer);
    state.timer = window.setTimeout(run, 400);  // computed after a pause in typing, or on Enter
  });
  const corpusChoice = !p.corpora || p.corpora.length < 2 ? null : select("corpus", p.corpora.map((c) => [c, c]),
    p.corpus, (corpus) => {
      state.corpus = corpus;
      if (p.examples?.[corpus]) input.value = p.examples[corpus];
      run();
    }, "corpus");
  element.querySelector("img.il-live-default")?.remove();
  element.append(h("div", { class: "il-live" },
    h("div", { class: "il-controls" }, corpusChoice, h("label", { class: "il-sentence" }, "sentence", input), list),
    w.controls?.length ? h("div", { class: "il-controls" }, w.controls) : null, about, notes, result));
  api.config(state.corpus).then(configure, () => {});  // an error shows when it runs
  whenVisible(element, run);
  return { run, redraw };
}
