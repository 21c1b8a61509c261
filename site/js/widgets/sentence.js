// What the live widgets share: the corpus and sentence inputs with the model's words offered (a
// <datalist>), notes on what the model never saw, one result area that a new input clears and an
// error replaces; a line a screen reader announces (aria-live) with each new result, in a few words;
// data-state ("busy", "ready", "error") and data-shown (JSON) for the tests.
import { h, select } from "./dom.js";
import { PUNCTUATION, tokenize } from "../engine/tokenizer.js";
import { SPECIALS } from "../engine/vocab.js";

let counter = 0;
const quoted = (words) => words.map((w) => `"${w}"`).join(", ");
const span = ([lo, hi]) => (lo === hi ? `${lo}` : `${lo} to ${hi}`);
const fold = (w) => w.normalize("NFD").replace(/\p{M}/gu, "");
const wordsOf = (config) => config.src_tokens.filter((t) => !SPECIALS.includes(t));

/** The known word w is but for its accents ("etudiant": "étudiant"), if any. */
export const nearest = (w, known) => known.find((t) => fold(t) === fold(w));

/** {sentence, notes}: the typed words without the punctuation the model ({corpus}.json) never saw,
 * noting that, and a length or pair of words it was not trained on; throws naming unknown words. */
export function readable(text, config) {
  const name = `the ${config.corpus} model`;
  if (!text.trim()) throw new Error("Type a sentence: the box is empty.");
  const known = wordsOf(config);
  const tokens = tokenize(text);
  const dropped = [...new Set(tokens.filter((t) => PUNCTUATION.includes(t) && !known.includes(t)))];
  const words = tokens.filter((t) => !dropped.includes(t));
  const unknown = [...new Set(words.filter((t) => !known.includes(t)))];
  if (unknown.length) {
    const near = unknown.map((u) => [u, nearest(u, known)]).filter(([, t]) => t);
    const guess = near.length ? ` Did you mean ${near.map(([u, t]) => `"${t}" for "${u}"`).join(", ")}?` : "";
    throw new Error(`The ${config.corpus} model does not know ${quoted(unknown)}: it knows only the words ` +
      `of its corpus.${guess}`);
  }
  if (!words.length) throw new Error(`Type a word: ${name} reads no punctuation.`);
  const notes = dropped.length ? [`Left out ${quoted(dropped)}: ${name} never saw punctuation.`] : [];
  const [lo, hi] = config.train_src_len;
  if (words.length < lo || words.length > hi) {
    notes.push(`Warning: ${words.length} word${words.length === 1 ? "" : "s"}, but ${name} was trained on ` +
      `sentences of ${span([lo, hi])} words only: outside them it often answers nonsense.`);
  }
  const seen = new Set(config.src_bigrams ?? []);
  const pairs = new Set(words.slice(1).map((w, i) => `${words[i]} ${w}`));  // each unseen pair named once
  const odd = [...pairs].filter((pair) => seen.size && !seen.has(pair));
  if (odd.length) {
    notes.push(`Note: ${name} never saw ${quoted(odd)} in its corpus: this sentence is unlike the ones it ` +
      "learned from, so its answer may be wrong however sure it is.");
  }
  return { sentence: words.join(" "), notes };
}

/** Calls fn once, when element first comes near the screen (the runtime loads on first use). */
function whenVisible(element, fn) {
  const observer = new window.IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    observer.disconnect();
    fn();
  }, { rootMargin: "300px" });
  observer.observe(element);
}

/** Mounts the inputs and the result area into element (its default picture goes). p: params corpus, sentence,
 * corpora, examples ({corpus: sentence}); w: controls (Nodes), settings() (their values), compute(corpus,
 * sentence, settings) (a Promise), draw(result) (Nodes), configured(config), lazy (compute only once the
 * sentence changes), describe(corpus, sentence, settings) (the widget's aria-label once it shows a result:
 * what it shows now, not the page's first sentence), said(result, settings) (the result in a sentence, announced;
 * none: the widget announces its own). Returns {run, redraw}: the input, or a view, changed. */
export function liveWidget(element, api, p, w) {
  const c = { element, api, p, w, state: { corpus: p.corpus, words: null, result: null, serial: 0, timer: null },
    list: h("datalist", { id: `il-words-${counter += 1}` }), about: h("p", { class: "il-about", "data-role": "about" }),
    notes: h("div", { class: "il-notes", "data-role": "notes", "aria-live": "polite" }),
    result: h("div", { class: "il-result", "data-role": "result" }),
    said: h("p", { class: "il-said", "data-role": "said", "aria-live": "polite" }) };
  c.input = h("input", { type: "text", list: c.list.id, "data-control": "sentence",
    autocomplete: "off", spellcheck: "false", onkeydown: (e) => e.key === "Enter" && run(c) });
  c.input.value = p.sentence;
  c.input.addEventListener("input", () => {
    clear(c, "");  // a new input clears the old result at once
    if (c.state.words) suggest(c, c.state.words);
    window.clearTimeout(c.state.timer);
    c.state.timer = window.setTimeout(() => run(c), 400);  // computed after a pause in typing, or on Enter
  });
  const choose = (corpus) => {
    c.state.corpus = corpus;
    const from = corpus === "trained" ? corpusChoice.querySelector("option[value=trained]").dataset.from : corpus;
    c.input.value = p.examples?.[from] ?? c.input.value;  // "trained": the example of the corpus it learned
    run(c);
  };
  const corpusChoice = p.corpora?.length > 1
    ? select("corpus", p.corpora.map((x) => [x, x]), p.corpus, choose, "corpus") : null;
  element.querySelector("img.il-live-default")?.remove();
  element.append(h("div", { class: "il-live" },
    h("div", { class: "il-controls" }, corpusChoice, h("label", { class: "il-sentence" }, "sentence", c.input), c.list),
    w.controls?.length ? h("div", { class: "il-controls" }, w.controls) : null, c.about, c.notes, c.said, c.result));
  api.config(c.state.corpus).then((config) => configure(c, config), () => {});  // an error shows when it runs
  if (w.lazy) element.dataset.state = "ready";  // its default is drawn
  else whenVisible(element, () => run(c));
  return { run: () => run(c), redraw: () => redraw(c) };
}

// The result area cleared (held at its height until the next result: no text below jumps); a new serial.
function clear(c, text) {
  Object.assign(c.state, { serial: c.state.serial + 1, result: null });
  c.notes.replaceChildren();
  c.said.textContent = "";
  c.result.style.minHeight = `${c.result.offsetHeight}px`;
  c.result.replaceChildren(h("p", { class: "il-status", text }));
  c.element.dataset.state = "busy";
  delete c.element.dataset.shown;
  return c.state.serial;
}

// A model's config read: the widget says whose model it is and what it was trained on.
function configure(c, config) {
  if (c.state.words === config) return;
  c.state.words = config;
  const whose = config.corpus === "trained" ? "Your" : "The shipped";
  c.about.textContent = `${whose} ${config.corpus} model, run in your browser; it was trained on sentences of ` +
    `${span(config.train_src_len)} words.`;
  c.w.configured?.(config);
  suggest(c, config);
}

// The last, unfinished word (after a space, punctuation or an elision's apostrophe) completed.
function suggest(c, config) {
  const typed = c.input.value;
  const part = /[^\s.,!?;:'\u2019]*$/u.exec(typed)[0].toLowerCase();
  const start = typed.slice(0, typed.length - part.length);
  const offered = wordsOf(config).filter((t) => t.startsWith(part) && t !== part);
  c.list.replaceChildren(...offered.sort().slice(0, 12).map((t) => h("option", { value: start + t })));
}

// The sentence computed (an earlier run's answer, arriving late, is dropped) and drawn.
async function run(c) {
  const { element, w, state } = c;
  window.clearTimeout(state.timer);
  const serial = clear(c, "computing…");
  const corpus = state.corpus;
  try {
    const config = await c.api.config(corpus);
    if (serial !== state.serial) return;
    configure(c, config);
    const { sentence, notes: said } = readable(c.input.value, config);
    c.notes.replaceChildren(...said.map((text) => h("p", { text })));
    const settings = w.settings?.() ?? {};
    const out = await w.compute(corpus, sentence, settings);
    if (serial !== state.serial) return;
    state.result = out;
    redraw(c);
    // the sentence as the model read it
    if (w.describe) element.setAttribute("aria-label", w.describe(corpus, sentence, settings));
    c.said.textContent = w.said?.(out, settings) ?? "";
    element.dataset.shown = JSON.stringify({ corpus, sentence: c.input.value, ...settings });
    element.dataset.state = "ready";
  } catch (error) {
    if (serial !== state.serial) return;
    c.result.replaceChildren(h("p", { class: "il-error", role: "alert", text: error.message }));
    element.dataset.state = "error";
  }
}

function redraw(c) {
  if (!c.state.result) return;
  c.result.style.minHeight = "";
  c.result.replaceChildren(...c.w.draw(c.state.result).filter(Boolean));
}
