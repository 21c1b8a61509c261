// window.illustrated, the book's models in the reader's browser (the contract: "In the browser" in
// docs/ARCHITECTURE.md; site/README.md shows translate's result), and the page's widgets mounted. It
// fetches only index.json until a widget first translates, which loads jax-js and that corpus's model.
import { loadConfig, loadIndex, loadModel } from "./engine/models.js";
import { sourceIds } from "./engine/vocab.js";
import { mountWidgets } from "./widgets/mount.js";

// One decoding at a time (the jitted model is shared).
let queue = Promise.resolve();
function exclusive(task) {
  const result = queue.then(task);
  queue = result.catch(() => {});
  return result;
}

// translate(corpus, sentence, options): il.beam_search's hypotheses and the attention of the best.
async function translate(corpus, sentence, options = {}) {
  const [{ decodeBest, encode }, { decodeOptions }, { beamSearch }] = await Promise.all(
    [import("./engine/graphs.js"), import("./engine/options.js"),
      import("./engine/search_beam.js")]);  // fetched on first use
  const model = await loadModel(corpus);
  const settings = decodeOptions(options, model.config);
  const source = sourceIds(model, sentence);
  const spell = (ids) => model.tgtVocab.spell(ids);
  return exclusive(async () => {
    const { memory, encoderAttention } = await encode(model, source.ids);
    const { best, steps } = await beamSearch(model, memory, settings);
    const { crossAttention, selfAttention, topK } = await decodeBest(model, best[0][0], memory, settings.topK);
    memory.dispose();  // jax-js arrays are freed by hand
    const result = { hypotheses: best.map(([ids, score]) => ({ tokens: spell(ids), score })),
      sourceTokens: source.tokens, encoderAttention, crossAttention, decoderAttention: selfAttention };
    if (settings.returnSteps) {
      result.steps = steps.map((s) => ({ step: s.step,
        candidates: s.candidates.map(([ids, logProb]) => ({ tokens: spell(ids), logProb })),
        kept: s.kept.map(spell), finished: s.finished.map(spell) }));
    }
    if (settings.topK > 0) {
      result.topK = topK.map((ranks) => ranks.map(({ id, logProb }) =>
        ({ token: model.tgtVocab.tokens[id], prob: Math.exp(logProb), logProb })));
    }
    return result;
  });
}

const api = { corpora: [], translate, config: loadConfig,
  train: (options, onProgress) => import("./engine/trainer.js").then((m) => m.train(options, onProgress)) };
api.ready = loadIndex().then((index) => {
  api.corpora = Object.freeze([...index.corpora]);
  return api;
});
api.ready.catch(() => {});  // a failure reaches whoever awaits ready, not the console
window.illustrated = api;
mountWidgets(api);
