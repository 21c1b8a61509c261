// A training's recipe in the page (trainer.js): illustrated.train's options checked and filled in from
// presets.SETTINGS; their names, limits, choices, defaults and how the page shows them read from
// recipe.json, the Recipe's JSON schema (illustrated.recipe.schema, written by web_export).
import { MODELS_URL, loadIndex } from "./models.js";
import { checkRange, refuse } from "./options.js";
import { evenDivisible } from "./positions.js";

/** What the page reads of the schema: limits {name: [low, high, integer?]} (each field's page limits,
 * "x-page", and the model's, "x-page-model"), defaults {name: value}, schedules, Adam's betas and eps,
 * clip (the gradient norm), dFfPerDModel (d_ff = that x d_model) and fields, the training widget's
 * controls in order ("x-page-fields": {field, name, label, control, step, said, said_at, options}) and pairs (a
 * reader's own: "x-pairs", web_export's page_schema). */
export function recipeFrom(schema) {
  // a Recipe field's menu offers its enum (the schema's one list of its choices)
  const fields = schema["x-page-fields"].map((f) => ({ ...f,
    options: schema.properties[f.field]?.enum?.map((v) => [v, v]) ?? f.options }));
  const nameOf = (field) => schema.properties[field]?.["x-page-name"] ?? fields.find((f) => f.field === field).name;
  const properties = Object.entries(schema.properties);
  const limits = Object.fromEntries([
    ...properties.filter(([, p]) => p["x-page"])
      .map(([n, p]) => [nameOf(n), [...p["x-page"], +(p.type === "integer")]]),
    ...Object.entries(schema["x-page-model"]).map(([n, range]) => [nameOf(n), [...range, 1]])]);
  const defaults = Object.fromEntries(properties.map(([n, p]) => [nameOf(n), p.default]));
  return { limits, defaults, fields, pairs: schema["x-pairs"], schedules: schema.properties.schedule.enum,
    betas: defaults.adamBetas,
    eps: defaults.adamEps, clip: defaults.clipGrad, dFfPerDModel: schema["x-d-ff-per-d-model"] };
}

let loaded = null;
/** recipeFrom(recipe.json), loaded once (index.json names it with its sha256). */
export function loadRecipe() {
  loaded ??= loadIndex().then(async ({ recipe }) => {
    const response = await fetch(new URL(recipe.file, MODELS_URL));
    if (!response.ok) throw new Error(`${response.url}: HTTP ${response.status}`);
    return recipeFrom(await response.json());
  });
  loaded.catch(() => {
    loaded = null;  // a failed load is tried again next time
  });
  return loaded;
}

/** The options filled in from the corpus's recipe (data: {corpus}.train.json) and checked against the
 * page's recipe (recipeFrom); normFirst "post" or "pre", as the page writes it everywhere. */
export function trainOptions(options, data, recipe) {
  const [c, t, d] = [data.config, data.train_settings, recipe.defaults];
  const o = { steps: t.steps, lr: t.lr, warmup: t.warmup, schedule: t.schedule, labelSmoothing: t.label_smoothing,
    batchSize: t.batch_size, referentWeight: t.referent_weight ?? d.referentWeight, dModel: c.d_model,
    nHeads: c.n_heads, nLayers: c.n_layers, normFirst: c.norm_first ? "pre" : "post", seed: d.seed, measure: false,
    ...options };
  const menus = recipe.fields.filter((f) => f.control === "menu").map((f) => f.name);
  const unknown = Object.keys(o).filter((k) => !(k in recipe.limits) && !menus.includes(k) && k !== "measure");
  if (unknown.length) refuse("options", "only the options of illustrated.train", unknown);
  for (const [name, limits] of Object.entries(recipe.limits)) checkRange(name, o[name], limits);
  for (const { name, options: offered } of recipe.fields.filter((f) => f.options)) {
    const values = offered.map(([v]) => v);
    if (!values.includes(o[name])) refuse(name, `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`, o[name]);
  }
  if (o.dModel % o.nHeads !== 0 || o.dModel % 2) {
    refuse("dModel", evenDivisible(`nHeads (${o.nHeads})`).join(""), o.dModel);
  }
  return o;
}
