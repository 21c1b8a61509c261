// The shipped models as illustrated.web_export writes them into _illustrated/models/: index.json,
// and per corpus {corpus}.json (vocabularies, sizes, train_src_len) and {corpus}.safetensors
// (the weights, run by engine.js); the model trained last in the page is the corpus "trained".
import { loadRuntime } from "./runtime.js";
import { FORMAT } from "./safetensors.js";

/** Where the models are served: _illustrated/models/ beside this folder. */
export const MODELS_URL = new URL("../models/", import.meta.url);
const cache = new Map();  // name -> Promise of a file or a model
const modelFrom = async (...args) => (await import("./engine.js")).modelFrom(...args);  // on first use

// Each file is fetched once; a failed fetch is forgotten, so that a later call tries again.
function once(key, load) {
  if (!cache.has(key)) {
    const promise = load();
    cache.set(key, promise);
    promise.catch(() => cache.delete(key));
  }
  return cache.get(key);
}

async function fetched(name, as = "json") {
  const url = new URL(name, MODELS_URL);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response[as]();
}

/** index.json: {format, corpora: [names], models: {corpus: {files, bytes}}}. */
export function loadIndex() {
  return once("index", async () => {
    const index = await fetched("index.json");
    if (index.format !== FORMAT) throw new Error(`index.json: format ${index.format}, expected ${FORMAT}`);
    return index;
  });
}

/** A corpus's {corpus}.json, a few kB, without the runtime: {corpus, src_tokens, tgt_tokens,
 * bos_id, eos_id, max_len, n_layers, n_heads, train_src_len, ...}; an unknown corpus rejects. */
export function loadConfig(corpus) {
  if (corpus === "trained") {
    if (cache.has("model:trained")) return cache.get("model:trained").then((model) => model.config);
    return Promise.reject(new Error("corpus: no model has been trained in this page yet (train one first)"));
  }
  return once(`config:${corpus}`, async () => {
    const { corpora, models } = await loadIndex();
    if (!corpora.includes(corpus)) {
      throw new Error(`corpus: got ${JSON.stringify(corpus)}, expected one of ${corpora.join(", ")}`);
    }
    return fetched(models[corpus].files.vocab);
  });
}

/** A corpus's model, loaded once: engine.js's modelFrom, its config being {corpus}.json. */
export function loadModel(corpus) {
  return once(`model:${corpus}`, async () => {
    const config = await loadConfig(corpus);  // checks the name first
    const { files } = (await loadIndex()).models[corpus];
    const [jax, bytes] = await Promise.all([loadRuntime(), fetched(files.model, "arrayBuffer")]);
    return modelFrom(jax, bytes, corpus, config);
  });
}

/** The model trained in the page (a page model file's bytes) becomes the corpus "trained". */
export async function setTrained(bytes, trainSrcLen) {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  cache.set("model:trained", modelFrom(await loadRuntime(), buffer, "trained", { train_src_len: trainSrcLen }));
}
