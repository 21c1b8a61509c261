// What the page loads on first use, once: jax-js from _vendor/jax-js/ (site/build.mjs copies the npm
// package; never a CDN), and the models illustrated.commands.web_export writes into _illustrated/models/: index.json,
// per corpus {corpus}.json (words, sizes, train_src_len) and {corpus}.safetensors; the corpus "trained" too.
import { FORMAT } from "./safetensors.js";

/** Where the runtime's files are served: _vendor/ beside _illustrated/. */
export const RUNTIME_URL = new URL("../../../_vendor/jax-js/", import.meta.url);
/** Where the models are served: _illustrated/models/ (this folder is _illustrated/js/engine/). */
export const MODELS_URL = new URL("../../models/", import.meta.url);
const cache = new Map();  // name -> Promise of the runtime, a file or a model
const modelFrom = async (...args) => (await import("./engine.js")).modelFrom(...args);  // on first use

// Each is loaded once; a failed load is forgotten, so that a later call tries again.
function once(key, load) {
  if (!cache.has(key)) {
    const promise = load();
    cache.set(key, promise);
    promise.catch(() => cache.delete(key));
  }
  return cache.get(key);
}

/** The `jax` namespace (numpy, nn, jit, ...), imported and started once. */
export function loadRuntime() {
  return once("runtime", () => import(new URL("index.js", RUNTIME_URL).href).then(async (jax) => {
    await jax.init("wasm");
    jax.defaultDevice("wasm");
    return jax;
  }, (error) => {
    throw new Error(`jax-js could not be loaded from ${RUNTIME_URL.href}: ${error.message}`);
  }));
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
