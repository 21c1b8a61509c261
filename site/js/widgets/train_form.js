// The training widget's settings (train.js): its controls as recipe.json's fields name, label and order them
// (x-page-fields: the corpus and the other menus, the number fields of fields.js, the "it" objective's switch),
// filled with a corpus's recipe (the widget's params.settings) and read back as the recipe writes them.
import { h, select } from "./dom.js";
import { fields } from "./fields.js";
import { referentSwitch } from "./referent_switch.js";

// A menu's [value, text] options: the corpus's from the widget's params, the others' from the recipe.
const offered = (field, corpora) => (field.name === "corpus"
  ? corpora.map((c) => [c, c === "pairs" ? "your pairs" : c]) : field.options);

// The settings shown first; the others (and the compared one, the "it" switch) fold into "More settings" on a phone.
const MAIN = ["corpus", "steps", "lr", "dModel", "nLayers"];

/** A field's label, a name from the code (n_heads) set as code. */
const label = (text) => (/_/.test(text) ? h("code", { text }) : text);

/** {element (the controls in the recipe's order: the main ones, then "More settings"), inputs, menus, check(),
 * values(), options(), fill(corpus), set(values)}.
 * onInput: a number is typed; onChange: a setting changed; onCorpus: the corpus changed (after it is filled). */
export function trainForm(recipe, p, { onInput, onChange, onCorpus }) {
  const numbers = fields(recipe, onInput, onChange);
  const menus = {};
  const elements = {};
  for (const f of recipe.fields.filter((x) => x.control === "menu")) {
    const options = offered(f, p.corpora);
    const changed = f.name === "corpus" ? (corpus) => onCorpus(fill(corpus)) : onChange;
    elements[f.name] = select(f.label, options, options[0][0], changed, f.name);
    menus[f.name] = elements[f.name].querySelector("select");
  }
  const switchField = recipe.fields.find((f) => f.control === "switch");
  const referent = referentSwitch(onChange, switchField.label);  // offered for a corpus with "it" labels
  // The settings as the recipe writes them (referentWeight only where it is offered), and as train() takes them.
  const values = () => Object.fromEntries(recipe.fields.flatMap(({ name, control }) => (control === "number"
    ? [[name, numbers.read()[name]]] : control === "menu" ? [[name, menus[name].value]]
      : Object.entries(referent.setting()))));
  const options = () => ({ referentWeight: 0, ...values() });
  /** The controls set to `v` (the recipe's names; a number as text or a number). */
  function set(v) {
    for (const [key, value] of Object.entries(v)) {
      if (key in numbers.inputs) numbers.inputs[key].value = String(value);
      else if (key in menus) menus[key].value = String(value);
      else if (key === switchField.name) referent.set(value);
    }
  }
  /** The corpus's recipe (params.settings) in every control. */
  function fill(corpus) {
    menus.corpus.value = corpus;
    referent.fill(p.settings[corpus]);
    set(p.settings[corpus]);
    return corpus;
  }
  const control = (f) => (f.control === "number" ? numbers.element(f) : f.control === "switch" ? referent.element
    : f.name === "corpus" && p.corpora.length < 2 ? null : elements[f.name]);
  const main = (f) => MAIN.includes(f.name) || f.control === "switch" || f.name === p.compare?.option;
  const more = recipe.fields.filter((f) => !main(f));
  const element = h("div", { class: "il-train-form" },
    h("div", { class: "il-train-grid" }, recipe.fields.filter(main).map(control)),
    h("details", { class: "il-train-more", "data-role": "more-settings",
      open: window.matchMedia?.("(min-width: 700px)").matches },  // open on a wide screen, folded on a phone
    h("summary", {}, "More settings: ", more.map((f, i) => [i ? ", " : "", label(f.label)])),
    h("div", { class: "il-train-grid" }, more.map(control))));
  return { element, inputs: numbers.inputs, menus, numbers, values, options, fill, set, referent };
}
