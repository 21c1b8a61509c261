// The training widget's own pairs (chapter 10): a box to type or paste sentence pairs into, or a .tsv file chosen
// from the reader's disk (its text then fills the box), read as the command line reads --pairs (engine/pairs.js:
// the package's limits and messages, every bad line named under the box); nothing typed is lost.
import { h } from "./dom.js";
import { readPairs } from "../engine/pairs.js";

/** The settings of "your pairs" in the widget: the tiny preset's sizes and recipe (recipe.json's x-pairs). */
export function pairsSettings(recipe) {
  const { config: c, train_settings: t } = recipe.pairs;
  return { steps: t.steps, lr: t.lr, warmup: t.warmup, labelSmoothing: t.label_smoothing, dModel: c.d_model,
    nHeads: c.n_heads, nLayers: c.n_layers, seed: recipe.defaults.seed, schedule: t.schedule,
    normFirst: c.norm_first ? "pre" : "post" };
}

/** Tab types a tab in `box` (the pairs' separator); Esc, then Tab (or Shift+Tab) leaves it. */
function typesTabs(box) {
  let leaving = false;
  box.addEventListener("keydown", (event) => {
    const tab = event.key === "Tab" && !event.shiftKey && !event.ctrlKey && !event.altKey && !event.metaKey;
    if (tab && !leaving) {
      event.preventDefault();
      box.setRangeText("\t", box.selectionStart, box.selectionEnd, "end");
    }
    leaving = event.key === "Escape";
  });
}

/** {element, read() ({pairs, problems}: the box's pairs, each problem shown under it), show(on)}. */
export function pairsBox(recipe, onChange) {
  const limits = recipe.pairs;
  const box = h("textarea", { "data-control": "pairs", rows: 6, spellcheck: "false", class: "il-pairs",
    placeholder: "je suis étudiant\ti am a student\nmerci\tthanks", "aria-label": "your sentence pairs" });
  const problems = h("ul", { class: "il-field-error", "data-role": "pairs-problems", "aria-live": "polite" });
  const summary = h("p", { class: "il-pairs-summary", "data-role": "pairs-summary" });
  const say = ({ pairs, problems: bad }) => {
    problems.replaceChildren(...bad.map((text) => h("li", { text })));
    summary.textContent = bad.length ? "" : `${pairs.length} pairs; ${Math.round(limits.test_fraction * 100)} % ` +
      "of them (at least one) held out to test on, chosen by the seed, as python -m illustrated train --pairs does.";
  };
  const read = () => {
    const text = box.value;
    const out = text.trim() ? readPairs(new TextEncoder().encode(text), "line", limits)
      : { pairs: [], problems: ["The box is empty: type or paste pairs, one a line, source<TAB>target."] };
    say(out);
    return out;
  };
  const file = h("input", { type: "file", accept: ".tsv,.txt,text/tab-separated-values,text/plain",
    "data-control": "pairs-file", onchange: async () => {
      const chosen = file.files[0];
      if (!chosen) return;
      const out = chosen.size > limits.max_file_bytes
        ? { pairs: [], problems: [`${chosen.name}: expected a file of at most ${limits.max_file_bytes} bytes, ` +
          `got ${chosen.size} (not a file of sentence pairs?)`] }
        : readPairs(new Uint8Array(await chosen.arrayBuffer()), chosen.name, limits);
      if (!out.problems.length) box.value = new TextDecoder().decode(await chosen.arrayBuffer());  // now editable
      say(out);
      onChange();
    } });
  typesTabs(box);
  box.addEventListener("change", () => read() && onChange());
  const element = h("div", { class: "il-pairs-box", "data-role": "pairs-box", hidden: true },
    h("label", {}, "Your pairs, one a line: source, a tab, target (Tab types a tab; Esc, then Tab, leaves the box)",
      box),
    h("label", {}, "or a .tsv file: ", file), problems, summary);
  return { element, read, show: (on) => (element.hidden = !on) };
}
