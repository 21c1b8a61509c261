// The training widget's number fields (train.js): the recipe's number controls (recipe.json's x-page-fields: their
// labels and input steps) within the page's limits, a slot beside each for its problem, and every problem of the
// settings at once, each message naming the fields by their labels (an empty field refused as "got nothing", text
// that is no number as "got text that is not a number"); and the limits in words.
import { h } from "./dom.js";
import { checkRange } from "../engine/options.js";
import { evenDivisible } from "../engine/positions.js";
import { trainOptions } from "../engine/recipe.js";

/** The recipe's number controls: [{name, label, step, ...}]. */
const numbers = (recipe) => recipe.fields.filter((f) => f.control === "number");

/** A message with the options it names said by their labels: "d_model: expected ... n_heads (4), got 30". */
export function labelled(message, recipe) {
  const labels = Object.fromEntries(recipe.fields.map((f) => [f.name, f.label]));
  const names = new RegExp(`\\b(${numbers(recipe).map((f) => f.name).join("|")})\\b`, "g");
  return message.replace(names, (k) => labels[k]);
}

/** The status line when Train is refused: "Not trained: fix steps, d_model (marked beside each)." (`bad`: labels). */
export const refusal = (bad) => `Not trained: fix ${bad.join(", ")} (marked beside ${bad.length > 1 ? "each" : "it"}).`;

/** Every field's problem at once, {option: message (by the labels)}: its range (recipe.limits), then the rules
 * that join fields (trainOptions's, e.g. d_model even and divisible by n_heads; a field out of range taken at its
 * low limit there), under the field the message names. */
export function problems(o, recipe) {
  const limits = recipe.limits;
  const [bad, inRange] = [{}, { ...o, batchSize: limits.batchSize[0] }];
  for (const { name } of numbers(recipe)) {
    try {
      checkRange(name, o[name], limits[name]);
    } catch (error) {
      [bad[name], inRange[name]] = [error.message, limits[name][0]];
    }
  }
  try {
    trainOptions(inRange, { config: {}, train_settings: {} }, recipe);
  } catch (error) {
    bad[error.message.split(":")[0]] ??= error.message;
  }
  return Object.fromEntries(Object.entries(bad).map(([key, message]) => [key, labelled(message, recipe)]));
}

/** {numbers, inputs, errors (the slots beside them), read() (each field's number; undefined where it is empty, NaN
 * where its text is no number), show(bad) (problems' messages in their slots), element(field) (its label, input and
 * slot)} within ``recipe.limits``; onInput
 * as a field is typed, onChange when it is left. */
export function fields(recipe, onInput, onChange) {
  const [inputs, errors, shown] = [{}, {}, numbers(recipe)];
  for (const { name, step } of shown) {
    const [min, max] = recipe.limits[name];
    inputs[name] = h("input", { type: "number", "data-control": name, min, max, step, oninput: onInput,
      onchange: onChange });
    errors[name] = h("span", { class: "il-field-error", "data-role": "field-error", "data-field": name });
  }
  // A number input's value is "" both when it is empty and when its text is no number ("1e", validity.badInput).
  const read = () => Object.fromEntries(shown.map(({ name: k }) => [k, inputs[k].validity.badInput ? NaN
    : inputs[k].value === "" ? undefined : Number(inputs[k].value)]));
  const show = (bad) => shown.forEach(({ name, label }) => {
    const said = bad[name]?.slice(label.length + 2).replace(/got NaN$/, "got text that is not a number");
    errors[name].textContent = said ?? "";  // the label is beside it
    inputs[name].setAttribute("aria-invalid", String(Boolean(bad[name])));
  });
  const element = ({ name, label }) => h("div", { class: "il-field" }, h("label", {}, label, inputs[name]),
    errors[name]);
  return { numbers: shown, inputs, errors, read, show, element };
}

/** The limits in words (the widget states them): strings, and {code} for names. */
export function limitsText({ limits: l, dFfPerDModel }) {
  const range = ([low, high]) => `${low.toLocaleString("en")}-${high.toLocaleString("en")}`;
  return [`Limits: ${range(l.steps)} steps, learning rate up to ${l.lr[1]}, warm-up up to ` +
    `${l.warmup[1].toLocaleString("en")} steps, label smoothing up to ${l.labelSmoothing[1]}, `, { code: "d_model" },
    ` ${range(l.dModel)} (`, ...evenDivisible({ code: "n_heads" }), `), ${range(l.nHeads)} heads, ` +
    `${range(l.nLayers)} layers a side; `, { code: "d_ff" }, ` is ${dFfPerDModel} x `, { code: "d_model" }, "."];
}
