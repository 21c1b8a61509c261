// The sentence box of the live widgets: the model's words offered as the reader types (a
// <datalist> and clickable suggestions), unknown words flagged before anything is decoded.
import { debounce, h } from "./live_dom.js";
import { tokenize } from "./tokenizer.js";

let counter = 0;

/** The last, unfinished word of what was typed: after the last space, punctuation mark or
 * apostrophe (so "l'ani" offers "animal", the tokenizer's word after the elision "l'"). */
export function partialWord(text) {
  const match = /[^\s.,!?;:'\u2019]*$/u.exec(text);
  return match[0].toLowerCase();
}

/** The words of `text` the model does not know (in order, once each), or null for a blank text. */
export function unknownWords(text, known) {
  let tokens;
  try { tokens = tokenize(text); } catch { return null; }
  return [...new Set(tokens.filter((t) => !known.has(t)))];
}

/**
 * @param {{value: string, onSentence: function(string): void}} options onSentence gets a sentence
 *   whose every word the model knows, after a pause in typing (or at once on Enter)
 * @returns {{element: HTMLElement, setWords: function(string[], string): void,
 *   value: function(): string, set: function(string): void}}
 */
export function sentenceBox({ value, onSentence }) {
  counter += 1;
  const listId = `il-words-${counter}`;
  const datalist = h("datalist", { id: listId });
  const input = h("input", { type: "text", value, list: listId, "data-control": "sentence",
    "aria-label": "source sentence", autocomplete: "off", spellcheck: "false" });
  input.value = value;
  const suggestions = h("div", { class: "il-suggestions", "aria-label": "words the model knows" });
  const flag = h("div", { class: "il-unknown", "data-role": "unknown" });
  let known = new Set();
  let words = [];
  let corpus = "";

  function check() {
    const unknown = unknownWords(input.value, known);
    if (unknown === null) flag.textContent = "Type a sentence.";
    else if (unknown.length) {
      flag.textContent = `The ${corpus} model does not know: ${unknown.map((w) => `"${w}"`).join(", ")}` +
        " (it knows only the words of its toy corpus).";
    } else flag.textContent = "";
    return unknown !== null && unknown.length === 0;
  }

  function suggest() {
    const typed = input.value;
    const part = partialWord(typed);
    const start = typed.slice(0, typed.length - part.length);
    const offered = words.filter((w) => w.startsWith(part) && w !== part).slice(0, 12);
    datalist.replaceChildren(...offered.map((w) => h("option", { value: `${start}${w}` })));
    suggestions.replaceChildren(...offered.map((w) => h("button", { type: "button", text: w,
      "data-control": "suggestion", onclick: () => { input.value = `${start}${w} `; changed(); input.focus(); } })));
  }

  const later = debounce(() => { if (check()) onSentence(input.value); }, 350);
  function changed() { suggest(); check(); later(); }
  input.addEventListener("input", changed);
  input.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    later.cancel();
    if (check()) onSentence(input.value);
  });
  const element = h("div", {}, h("div", { class: "il-row" },
    h("label", {}, "source sentence", input), datalist), suggestions, flag);
  return {
    element,
    value: () => input.value,
    set(text) { input.value = text; suggest(); check(); },
    setWords(list, name) {
      words = [...list].sort();
      known = new Set(list);
      corpus = name;
      suggest();
      return check();
    },
  };
}
