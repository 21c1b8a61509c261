// The training widget's number fields (train.js): their inputs within recipe.js's LIMITS, a slot beside
// each for its problem, and every problem of the settings at once.
import { h } from "./dom.js";
import { checkRange } from "./options.js";
import { LIMITS, trainOptions } from "./recipe.js";

const FIELDS = [["steps", "steps", 1], ["lr", "learning rate", "any"], ["warmup", "warm-up", 1],
  ["labelSmoothing", "label smoothing", 0.05], ["dModel", "d_model", 8], ["nHeads", "n_heads", 1],
  ["nLayers", "n_layers", 1], ["seed", "seed", 1]];  // [option, label, the input's step]

/** Every field's problem at once, {option: message}: its range (LIMITS), then the rules that join fields
 * (trainOptions's, e.g. d_model a multiple of n_heads; a field out of range taken at its low limit there),
 * under the field the message names. */
export function problems(o) {
  const [bad, inRange] = [{}, { ...o, batchSize: LIMITS.batchSize[0] }];
  for (const [key] of FIELDS) {
    try {
      checkRange(key, o[key], LIMITS[key]);
    } catch (error) {
      [bad[key], inRange[key]] = [error.message, LIMITS[key][0]];
    }
  }
  try {
    trainOptions(inRange, { config: {}, train_settings: {} });
  } catch (error) {
    bad[error.message.split(":")[0]] ??= error.message;
  }
  return bad;
}

/** {FIELDS, inputs, errors (the slots beside them), limits (said in words)}; onInput as a field is typed,
 * onChange when it is left. */
export function fields(onInput, onChange) {
  const [inputs, errors] = [{}, {}];
  for (const [key, , step] of FIELDS) {
    const [min, max] = LIMITS[key];
    inputs[key] = h("input", { type: "number", "data-control": key, min, max, step, oninput: onInput,
      onchange: onChange });
    errors[key] = h("span", { class: "il-field-error", "data-role": "field-error", "data-field": key });
  }
  const limits = FIELDS.map(([key, label]) => `${label} ${LIMITS[key][0]}-${LIMITS[key][1]}`).join(", ");
  return { FIELDS, inputs, errors, limits };
}
