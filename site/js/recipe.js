// A training's recipe in the page (trainer.js): illustrated.train's options checked and filled
// in from presets.SETTINGS; their limits, choices and defaults read from recipe.json, the Recipe's
// JSON schema (illustrated.recipe.schema, written by web_export); initial weights drawn as PyTorch
// draws them (other random numbers).
import { MODELS_URL, loadIndex } from "./models.js";
import { checkRange, refuse } from "./options.js";

const CHOICES = ["corpus", "schedule", "normFirst", "measure"];
const camel = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());

/** What the page reads of the schema: limits {option: [low, high, integer?]} (each field's
 * page limits, "x-page", and the model's, "x-page-model"), schedules, defaults {option: value},
 * Adam's betas and eps, clip (the gradient norm) and dFfPerDModel (d_ff = that x d_model). */
export function recipeFrom(schema) {
  const fields = Object.entries(schema.properties);
  const limits = Object.fromEntries([
    ...fields.filter(([, f]) => f["x-page"]).map(([n, f]) => [camel(n), [...f["x-page"], +(f.type === "integer")]]),
    ...Object.entries(schema["x-page-model"]).map(([n, range]) => [camel(n), [...range, 1]])]);
  const defaults = Object.fromEntries(fields.map(([n, f]) => [camel(n), f.default]));
  return { limits, defaults, schedules: schema.properties.schedule.enum, betas: defaults.adamBetas,
    eps: defaults.adamEps, clip: defaults.clipGrad, dFfPerDModel: schema["x-d-ff-per-d-model"] };
}

/** d_model's rule in words, n_heads said as `heads`: the heads split it, the sines and cosines pair its dimensions. */
export const evenDivisible = (heads) => ["an even number divisible by ", heads];

/** The limits in words (the widget states them): strings, and {code} for names. */
export function limitsText({ limits: l, dFfPerDModel }) {
  const range = ([low, high]) => `${low.toLocaleString("en")}-${high.toLocaleString("en")}`;
  return [`Limits: ${range(l.steps)} steps, learning rate up to ${l.lr[1]}, warm-up up to ` +
    `${l.warmup[1].toLocaleString("en")} steps, label smoothing up to ${l.labelSmoothing[1]}, `, { code: "d_model" },
    ` ${range(l.dModel)} (`, ...evenDivisible({ code: "n_heads" }), `), ${range(l.nHeads)} heads, ` +
    `${range(l.nLayers)} layers a side; `, { code: "d_ff" }, ` is ${dFfPerDModel} x `, { code: "d_model" }, "."];
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

/** The options filled in from the corpus's recipe (data: {corpus}.train.json) and checked
 * against the page's recipe (recipeFrom). */
export function trainOptions(options, data, recipe) {
  const c = data.config;
  const t = data.train_settings;
  const o = { steps: t.steps, lr: t.lr, warmup: t.warmup, schedule: t.schedule,
    labelSmoothing: t.label_smoothing, batchSize: t.batch_size,
    referentWeight: t.referent_weight ?? recipe.defaults.referentWeight, dModel: c.d_model,
    nHeads: c.n_heads, nLayers: c.n_layers, normFirst: c.norm_first, seed: recipe.defaults.seed, measure: false,
    ...options };
  const unknown = Object.keys(o).filter((k) => !(k in recipe.limits) && !CHOICES.includes(k));
  if (unknown.length) refuse("options", "only the options of illustrated.train", unknown);
  for (const [name, limits] of Object.entries(recipe.limits)) checkRange(name, o[name], limits);
  if (!recipe.schedules.includes(o.schedule)) {
    refuse("schedule", `${recipe.schedules.slice(0, -1).join(", ")} or ${recipe.schedules.at(-1)}`, o.schedule);
  }
  if (typeof o.normFirst !== "boolean") refuse("normFirst", "true or false", o.normFirst);
  if (o.dModel % o.nHeads !== 0 || o.dModel % 2) {
    refuse("dModel", evenDivisible(`nHeads (${o.nHeads})`).join(""), o.dModel);
  }
  return o;
}

/** mulberry32: the seeded uniform numbers of the initial weights and of the batch order. */
export function uniform(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    const t = Math.imul(a ^ (a >>> 15), 1 | a);
    const u = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((u ^ (u >>> 14)) >>> 0) / 4294967296;
  };
}

/** The state_dict's names and shapes, {name: {shape, data}}: Glorot for every matrix
 * (modules/transformer.py), U(±1/sqrt(fan_in)) for biases (nn.Linear), 1 and 0 for norms. */
export function initialWeights(cfg, random) {
  const { d_model: d, d_ff: ff } = cfg;
  const out = {};
  const add = (name, shape, draw) => {
    out[name] = { shape, data: Float32Array.from({ length: shape[0] * (shape[1] ?? 1) }, draw) };
  };
  const glorot = (name, [o, i]) => add(name, [o, i], () => (2 * random() - 1) * Math.sqrt(6 / (o + i)));
  const linear = (name, o, i) => {
    glorot(`${name}.weight`, [o, i]);
    add(`${name}.bias`, [o], () => (2 * random() - 1) / Math.sqrt(i));
  };
  const norm = (name) => {
    add(`${name}.weight`, [d], () => 1);
    add(`${name}.bias`, [d], () => 0);
  };
  glorot("src_embed.lut.weight", [cfg.src_vocab_size, d]);
  glorot("tgt_embed.lut.weight", [cfg.tgt_vocab_size, d]);
  for (const side of ["encoder", "decoder"]) {
    for (let i = 0; i < cfg.n_layers; i += 1) {
      const name = `${side}.layers.${i}`;
      const attention = side === "encoder" ? ["self_attn"] : ["self_attn", "cross_attn"];
      attention.forEach((a) => ["w_q", "w_k", "w_v", "w_o"].forEach((w) => linear(`${name}.${a}.${w}`, d, d)));
      linear(`${name}.feed_forward.linear1`, ff, d);
      linear(`${name}.feed_forward.linear2`, d, ff);
      [1, 2, 3].slice(0, attention.length + 1).forEach((n) => norm(`${name}.norm${n}`));
    }
    if (cfg.norm_first) norm(`${side}.norm`);
  }
  linear("generator.proj", cfg.tgt_vocab_size, d);
  return out;
}
