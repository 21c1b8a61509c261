// window.illustrated: the book's shipped models in the reader's browser (the contract in
// docs/ARCHITECTURE.md, "Public API"), and the page's widgets mounted (widgets.js). Loaded as a
// module on every page; it fetches only index.json until a widget first translates, which loads
// jax-js and that corpus's model. `await illustrated.ready` fills illustrated.corpora.
// translate(corpus, sentence, {beamSize = 1, topBeams = 1, alpha = 0, maxLen = min(50, max_len),
// returnSteps = false, topK = 0}) -> Promise of {hypotheses: [{tokens, score}], sourceTokens,
// encoderAttention [layer][head][source][source], crossAttention [layer][head][step][source],
// decoderAttention [layer][head][step][step], steps (with returnSteps), topK (with topK > 0:
// [step][rank] {token, prob, logProb}, the decoder's most probable next words at each step of
// the best hypothesis)}: il.beam_search's hypotheses and scores (beamSize 1 is greedy decoding);
// attention of the best hypothesis. config(corpus) -> Promise of {corpus}.json (words, sizes,
// train_src_len), without the runtime. train(options, onProgress): trainer.js; corpus "trained".
import { loadConfig, loadIndex, loadModel } from "./models.js";
import { sourceIds } from "./vocab.js";
import { mountWidgets } from "./widgets.js";

// One decoding at a time (the jitted model is shared).
let queue = Promise.resolve();
function exclusive(task) {
  const result = queue.then(task);
  queue = result.catch(() => {});
  return result;
}

async function translate(corpus, sentence, options = {}) {
  const [{ attentionOf, encode, stepDistributions }, { decodeOptions }, { beamSearch }] = await Promise.all(
    [import("./graphs.js"), import("./options.js"), import("./search_beam.js")]);  // fetched on first use
  const model = await loadModel(corpus);
  const settings = decodeOptions(options, model.config);
  const source = sourceIds(model, sentence);
  const spell = (ids) => model.tgtVocab.spell(ids);
  return exclusive(async () => {
    const { memory, encoderAttention } = await encode(model, source.ids);
    const { best, steps } = await beamSearch(model, memory, settings);
    const { crossAttention, selfAttention } = await attentionOf(model, best[0][0], memory);
    const result = { hypotheses: best.map(([ids, score]) => ({ tokens: spell(ids), score })),
      sourceTokens: source.tokens, encoderAttention, crossAttention, decoderAttention: selfAttention };
    if (settings.returnSteps) {
      result.steps = steps.map((s) => ({ step: s.step,
        candidates: s.candidates.map(([ids, logProb]) => ({ tokens: spell(ids), logProb })),
        kept: s.kept.map(spell), finished: s.finished.map(spell) }));
    }
    if (settings.topK > 0) {
      const ranked = await stepDistributions(model, best[0][0], memory, settings.topK);
      result.topK = ranked.map((ranks) => ranks.map(({ id, logProb }) =>
        ({ token: model.tgtVocab.tokens[id], prob: Math.exp(logProb), logProb })));
    }
    memory.dispose();  // jax-js arrays are freed by hand
    return result;
  });
}

const api = { corpora: [], translate, config: loadConfig,
  train: (options, onProgress) => import("./trainer.js").then((m) => m.train(options, onProgress)) };
api.ready = loadIndex().then((index) => {
  api.corpora = Object.freeze([...index.corpora]);
  return api;
});
api.ready.catch(() => {});  // a failure reaches whoever awaits ready, not the console
window.illustrated = api;
mountWidgets(api);
