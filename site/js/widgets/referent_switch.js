// The training widget's switch for the "it" objective (referent.js): offered for a corpus with "it" labels (whose
// recipe in the widget's params names a referentWeight); on, train() gets that weight (1 if it is 0); off, 0.
import { h } from "./dom.js";

/** {element, fill(recipe) (a corpus's, from the widget's params), set(weight) (on when > 0), setting():
 * {referentWeight} if offered, else {}}; `label`: recipe.json's. */
export function referentSwitch(onChange, label) {
  const box = h("input", { type: "checkbox", "data-control": "referent", onchange: onChange });
  const element = h("label", { class: "il-referent", "data-role": "referent" }, box,
    ` ${label[0].toUpperCase()}${label.slice(1)}`);
  let weight = 1;
  function fill(recipe) {
    element.hidden = !("referentWeight" in recipe);
    box.checked = recipe.referentWeight > 0;
    weight = recipe.referentWeight || 1;
  }
  const set = (value) => {
    box.checked = Number(value) > 0;
    if (Number(value) > 0) weight = Number(value);
  };
  return { element, fill, set, setting: () => (element.hidden ? {} : { referentWeight: box.checked ? weight : 0 }) };
}

/** A progress report's "it" loss as the status line says it ("" when the objective is off). */
export const itLoss = (r) => (r.referentLoss === undefined ? "" : ` · “it” loss ${r.referentLoss.toFixed(3)}`);
