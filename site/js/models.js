// The shipped models as illustrated.onnx_export writes them into _illustrated/models/: index.json,
// and per corpus {corpus}.json (vocabularies, sizes, train_src_len) with its encoder and
// one-step decoder graphs.
import { loadRuntime } from "./runtime.js";
import { Vocab } from "./vocab.js";

/** Where the models are served: _illustrated/models/ beside this folder. */
export const MODELS_URL = new URL("../models/", import.meta.url);

/** The format of index.json this code reads (illustrated.onnx_export.FORMAT). */
export const FORMAT = "illustrated-onnx/1";

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
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
  return once(cache, "index", () => fetchJson(new URL("index.json", MODELS_URL)).then((data) => {
    if (data.format !== FORMAT) throw new Error(`index.json: format ${data.format}, expected ${FORMAT}`);
    return data;
  }));
}

/**
 * A corpus's {corpus}.json, a few kB, without the runtime: what a widget needs before it
 * translates ({corpus, src_tokens, tgt_tokens, bos_id, eos_id, max_len, n_layers, n_heads,
 * train_src_len, ...}). Rejects a corpus that index.json does not list, naming the ones it does.
 */
export function loadConfig(corpus) {
  return once(cache, `config:${corpus}`, async () => {
    const { corpora, models: entries } = await loadIndex();
    if (!corpora.includes(corpus)) {
      throw new Error(`corpus: got ${JSON.stringify(corpus)}, expected one of ${corpora.join(", ")}`);
    }
    return fetchJson(new URL(entries[corpus].files.vocab, MODELS_URL));
  });
}

/**
 * A corpus's model, loaded once: {corpus, config, ort, srcVocab, tgtVocab, encoder, decoder},
 * where encoder and decoder are onnxruntime-web InferenceSessions and config is {corpus}.json.
 */
export function loadModel(corpus) {
  return once(cache, `model:${corpus}`, async () => {
    const config = await loadConfig(corpus);  // checks the name first
    const files = (await loadIndex()).models[corpus].files;
    const ort = await loadRuntime();
    const options = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
    const [encoder, decoder] = await Promise.all([files.encoder, files.decoder].map(
      (name) => ort.InferenceSession.create(new URL(name, MODELS_URL).href, options)));
    return { corpus, config, ort, encoder, decoder,
      srcVocab: new Vocab(config.src_tokens), tgtVocab: new Vocab(config.tgt_tokens) };
  });
}
