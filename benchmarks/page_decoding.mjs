// The page's decoding (site/js, jax-js, WebAssembly, one thread, in Node) with and without the KV
// cache: `node benchmarks/page_decoding.mjs MODELS_DIR [CORPUS]` (MODELS_DIR: illustrated.commands.web_export's
// folder, e.g. _build/site-assets/_illustrated/models) greedy-decodes and beam-searches (beam 4) one
// test sentence at output lengths 10, 30 and max_len - 4, <eos> made never chosen (its bias lowered by
// 1e4) so that every call writes that many tokens; each setting runs twice and the second run (jit
// compiled) is kept. Asserts the same tokens both ways; writes benchmarks/results/page_decoding.json.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import * as jax from "../site/node_modules/@jax-js/jax/dist/index.js";
import { modelFrom } from "../site/js/engine/engine.js";
import { encode } from "../site/js/engine/graphs.js";
import { beamSearch } from "../site/js/engine/search_beam.js";

await jax.init("wasm");
const [dir, corpus = "fr-en"] = process.argv.slice(2);
const index = JSON.parse(readFileSync(`${dir}/index.json`, "utf8"));
const files = index.models[corpus].files;
const bytes = readFileSync(`${dir}/${files.model}`);
const config = JSON.parse(readFileSync(`${dir}/${files.vocab}`, "utf8"));
const model = modelFrom(jax, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), corpus, config);
const bias = model.params["generator.proj.bias"];
const lowered = Float32Array.from(bias.dataSync(), (b, i) => (i === model.config.eos_id ? b - 1e4 : b));
model.params["generator.proj.bias"] = jax.numpy.array(lowered);
const train = JSON.parse(readFileSync(`${dir}/${files.train}`, "utf8"));
const src = train.test[0][0];
const { memory } = await encode(model, src);
const results = {};
for (const maxLen of [10, 30, model.config.max_len - 4]) {
  for (const beamSize of [1, 4]) {
    const times = {}, tokens = {};
    for (const useCache of [true, false]) {
      for (let run = 0; run < 2; run += 1) {
        const start = performance.now();
        const { best } = await beamSearch(model, memory, { beamSize, topBeams: 1, alpha: 0, maxLen, useCache });
        times[useCache] = performance.now() - start;
        tokens[useCache] = best[0][0];
      }
    }
    assert.deepEqual(tokens[true], tokens[false]);
    assert.equal(tokens[true].length, maxLen);
    const name = `${beamSize === 1 ? "greedy" : `beam_${beamSize}`}_${maxLen}`;
    results[name] = { tokens: maxLen, ms_cached: +times[true].toFixed(1), ms_uncached: +times[false].toFixed(1),
      speedup: +(times[false] / times[true]).toFixed(2), identical_tokens: true };
    console.log(name, results[name]);
  }
}
memory.dispose();
const out = new URL("results/page_decoding.json", import.meta.url);
writeFileSync(out, `${JSON.stringify({ corpus, sentence: src, engine: "jax-js wasm, Node, one thread", results }, null, 2)}\n`);
