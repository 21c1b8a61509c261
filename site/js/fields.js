// The training widget's number fields (train.js): their inputs within the page's recipe's limits (recipe.js,
// from recipe.json), a slot beside each for its problem, and every problem of the settings at once, each
// message naming the fields by their labels (an empty field refused as "got nothing", text that is no number
// as "got text that is not a number").
import { h } from "./dom.js";
import { checkRange } from "./options.js";
import { trainOptions } from "./recipe.js";

const FIELDS = [["steps", "steps", 1], ["lr", "learning rate", "any"], ["warmup", "warm-up", 1],
  ["labelSmoothing", "label smoothing", 0.05], ["dModel", "d_model", 8], ["nHeads", "n_heads", 1],
  ["nLayers", "n_layers", 1], ["seed", "seed", 1]];  // [option, label, the input's step]
const LABELS = Object.fromEntries(FIELDS);
const NAMES = new RegExp(`\\b(${FIELDS.map(([k]) => k).join("|")})\\b`, "g");
/** A message with the options it names said by their labels: "d_model: expected ... n_heads (4), got 30". */
export const labelled = (message) => message.replace(NAMES, (k) => LABELS[k]);

/** The status line when Train is refused: "Not trained: fix steps, d_model (marked beside each)." (`bad`: labels). */
export const refusal = (bad) => `Not trained: fix ${bad.join(", ")} (marked beside ${bad.length > 1 ? "each" : "it"}).`;

/** Every field's problem at once, {option: message (by the labels)}: its range (recipe.limits), then the rules
 * that join fields (trainOptions's, e.g. d_model even and divisible by n_heads; a field out of range taken at its
 * low limit there), under the field the message names. */
export function problems(o, recipe) {
  const limits = recipe.limits;
  const [bad, inRange] = [{}, { ...o, batchSize: limits.batchSize[0] }];
  for (const [key] of FIELDS) {
    try {
      checkRange(key, o[key], limits[key]);
    } catch (error) {
      [bad[key], inRange[key]] = [error.message, limits[key][0]];
    }
  }
  try {
    trainOptions(inRange, { config: {}, train_settings: {} }, recipe);
  } catch (error) {
    bad[error.message.split(":")[0]] ??= error.message;
  }
  return Object.fromEntries(Object.entries(bad).map(([key, message]) => [key, labelled(message)]));
}

/** {FIELDS, inputs, errors (the slots beside them), read() (each field's number; undefined where it is empty, NaN
 * where its text is no number), show(bad) (problems' messages in their slots)} within
 * ``recipe.limits``; onInput as a field is typed, onChange when it is left. */
export function fields(recipe, onInput, onChange) {
  const [inputs, errors] = [{}, {}];
  for (const [key, , step] of FIELDS) {
    const [min, max] = recipe.limits[key];
    inputs[key] = h("input", { type: "number", "data-control": key, min, max, step, oninput: onInput,
      onchange: onChange });
    errors[key] = h("span", { class: "il-field-error", "data-role": "field-error", "data-field": key });
  }
  // A number input's value is "" both when it is empty and when its text is no number ("1e", validity.badInput).
  const read = () => Object.fromEntries(FIELDS.map(([k]) => [k, inputs[k].validity.badInput ? NaN
    : inputs[k].value === "" ? undefined : Number(inputs[k].value)]));
  const show = (bad) => FIELDS.forEach(([key, label]) => {
    const said = bad[key]?.slice(label.length + 2).replace(/got NaN$/, "got text that is not a number");
    errors[key].textContent = said ?? "";  // the label is beside it
    inputs[key].setAttribute("aria-invalid", String(Boolean(bad[key])));
  });
  return { FIELDS, inputs, errors, read, show };
}
