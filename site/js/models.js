// The shipped models as illustrated.onnx_export writes them into _illustrated/models/: index.json,
// and per corpus {corpus}.json (vocabularies, sizes) with its encoder and one-step decoder graphs.
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

let index = null;  // Promise of index.json

/** index.json: {format, corpora: [names], models: {corpus: {files, bytes}}}. */
export function loadIndex() {
  index ??= fetchJson(new URL("index.json", MODELS_URL)).then((data) => {
    if (data.format !== FORMAT) throw new Error(`index.json: format ${data.format}, expected ${FORMAT}`);
    return data;
  }, (error) => {
    index = null;
    throw error;
  });
  return index;
}

const configs = new Map();  // corpus -> Promise of {corpus}.json

/**
 * A corpus's {corpus}.json (vocabularies and sizes, a few kB), fetched once and without the
 * runtime: what a widget needs to offer the model's words before it translates anything.
 * @param {string} corpus one of index.json's corpora
 * @returns {Promise<object>} {corpus, src_tokens, tgt_tokens, bos_id, eos_id, max_len, ...}
 */
export function loadConfig(corpus) {
  if (!configs.has(corpus)) {
    const config = loadIndex().then(({ corpora, models: entries }) => {
      if (!corpora.includes(corpus)) {
        throw new Error(`corpus: got ${JSON.stringify(corpus)}, expected one of ${corpora.join(", ")}`);
      }
      return fetchJson(new URL(entries[corpus].files.vocab, MODELS_URL));
    });
    configs.set(corpus, config);
    config.catch(() => configs.delete(corpus));
  }
  return configs.get(corpus);
}

const models = new Map();  // corpus -> Promise of its model

/**
 * A corpus's model, loaded once: {corpus, config, srcVocab, tgtVocab, encoder, decoder}, where
 * encoder and decoder are onnxruntime-web InferenceSessions and config is {corpus}.json.
 * @param {string} corpus one of index.json's corpora
 */
export function loadModel(corpus) {
  if (!models.has(corpus)) {
    const model = load(corpus);
    models.set(corpus, model);
    model.catch(() => models.delete(corpus));  // a failed load is tried again next time
  }
  return models.get(corpus);
}

async function load(corpus) {
  const config = await loadConfig(corpus);  // checks the name first
  const { models: entries } = await loadIndex();
  const files = entries[corpus].files;
  const ort = await loadRuntime();
  const options = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
  const [encoder, decoder] = await Promise.all([files.encoder, files.decoder].map(
    (name) => ort.InferenceSession.create(new URL(name, MODELS_URL).href, options)));
  return { corpus, config, ort, encoder, decoder,
    srcVocab: new Vocab(config.src_tokens), tgtVocab: new Vocab(config.tgt_tokens) };
}
