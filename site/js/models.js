// The shipped models as illustrated.web_export writes them into _illustrated/models/: index.json,
// and per corpus {corpus}.json (vocabularies, sizes, train_src_len) and {corpus}.safetensors
// (the weights, run by engine.js); the model trained last in the page is the corpus "trained".
import { loadRuntime } from "./runtime.js";

const FORMAT = "illustrated-safetensors/1";  // index.json's: illustrated.web_export.FORMAT
const modelFrom = async (...args) => (await import("./engine.js")).modelFrom(...args);  // on first use

/** Where the models are served: _illustrated/models/ beside this folder. */
export const MODELS_URL = new URL("../models/", import.meta.url);

async function fetched(url, as = "json") {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response[as]();
}

// Each file is fetched once; a failed fetch is forgotten, so that a later call tries again.
function once(cache, key, load) {
  if (!cache.has(key)) {
    const promise = load();
    cache.set(key, promise);
    promise.catch(() => cache.delete(key));
  }
  return cache.get(key);
}

const cache = new Map();

/** index.json: {format, corpora: [names], models: {corpus: {files, bytes}}}. */
export function loadIndex() {
  return once(cache, "index", () => fetched(new URL("index.json", MODELS_URL)).then((data) => {
    if (data.format !== FORMAT) throw new Error(`index.json: format ${data.format}, expected ${FORMAT}`);
    return data;
  }));
}

/** A corpus's {corpus}.json, a few kB, without the runtime: {corpus, src_tokens, tgt_tokens,
 * bos_id, eos_id, max_len, n_layers, n_heads, train_src_len, ...}; an unknown corpus rejects. */
export function loadConfig(corpus) {
  if (corpus === "trained") {
    if (cache.has("model:trained")) return cache.get("model:trained").then((m) => m.config);
    return Promise.reject(new Error("corpus: no model has been trained in this page yet (train one first)"));
  }
  return once(cache, `config:${corpus}`, async () => {
    const { corpora, models: entries } = await loadIndex();
    if (!corpora.includes(corpus)) {
      throw new Error(`corpus: got ${JSON.stringify(corpus)}, expected one of ${corpora.join(", ")}`);
    }
    return fetched(new URL(entries[corpus].files.vocab, MODELS_URL));
  });
}

/** A corpus's model, loaded once: engine.js's modelFrom, its config being {corpus}.json. */
export function loadModel(corpus) {
  return once(cache, `model:${corpus}`, async () => {
    const config = await loadConfig(corpus);  // checks the name first
    const files = (await loadIndex()).models[corpus].files;
    const [jax, bytes] = await Promise.all([loadRuntime(), fetched(new URL(files.model, MODELS_URL), "arrayBuffer")]);
    return await modelFrom(jax, bytes, corpus, config);
  });
}

/** The model trained in the page (a page model file's bytes) becomes the corpus "trained". */
export async function setTrained(bytes, trainSrcLen) {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  cache.set("model:trained", modelFrom(await loadRuntime(), buffer, "trained", { train_src_len: trainSrcLen }));
}
