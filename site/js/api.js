// window.illustrated: the book's models in the reader's browser (the contract in DESIGN.md,
// "Widgets in the static book"). Loaded as a module on every page; it fetches only index.json
// until a widget first translates, which loads onnxruntime-web and that corpus's model.
//
//   await illustrated.ready;                       // index.json read; illustrated.corpora filled
//   const r = await illustrated.translate("post", "je suis étudiant", {beamSize: 4});
//   r.hypotheses[0].tokens                          // ["i", "am", "a", "student", "<eos>"]
//
// translate(corpus, sentence, {beamSize = 1, topBeams = 1, alpha = 0, maxLen = min(50, max_len),
// returnSteps = false, topK = 0}) -> Promise of {hypotheses: [{tokens, score}], sourceTokens,
// encoderAttention [layer][head][source][source], crossAttention [layer][head][step][source],
// decoderAttention [layer][head][step][step], steps (with returnSteps), topK (with topK > 0:
// [step][rank] {token, prob, logProb}, the decoder's most probable next words at each step of
// the best hypothesis)}: il.beam_search's hypotheses and scores (beamSize 1 included);
// attention of the best hypothesis.
// greedy(corpus, sentence, {maxLen}) -> the same, from il.greedy_decode, plus logProbs per step.
// words(corpus) -> Promise of the source words the corpus's model knows (no runtime loaded).
import { beamSearch } from "./beam.js";
import { attentionOf, encode, stepDistributions } from "./graphs.js";
import { greedyDecode } from "./greedy.js";
import { loadConfig, loadIndex, loadModel } from "./models.js";
import { mountLiveWidgets } from "./live.js";
import { mountWidgets } from "./widgets.js";
import { decodeOptions, OPTIONS } from "./options.js";
import { sourceIds, SPECIALS } from "./vocab.js";

// One decoding at a time: an onnxruntime-web session runs one call at a time.
let queue = Promise.resolve();
function exclusive(task) {
  const result = queue.then(task);
  queue = result.catch(() => {});
  return result;
}

async function prepare(corpus, sentence, options, allowed) {
  const model = await loadModel(corpus);
  const settings = decodeOptions(options, model.config, allowed);
  return { model, settings, source: sourceIds(model, sentence) };
}

async function describe(model, source, memory, encoderAttention, best) {
  const { crossAttention, selfAttention } = await attentionOf(model, best, memory);
  return { sourceTokens: source.tokens, encoderAttention, crossAttention,
    decoderAttention: selfAttention };
}

async function translate(corpus, sentence, options = {}) {
  const { model, settings, source } = await prepare(corpus, sentence, options, OPTIONS);
  return exclusive(async () => {
    const { memory, encoderAttention } = await encode(model, source.ids);
    const { best, steps } = await beamSearch(model, memory, settings);
    const spell = (ids) => model.tgtVocab.spell(ids);
    const result = {
      hypotheses: best.map(([ids, score]) => ({ tokens: spell(ids), score })),
      ...await describe(model, source, memory, encoderAttention, best[0][0]),
    };
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
    return result;
  });
}

async function greedy(corpus, sentence, options = {}) {
  const { model, settings, source } = await prepare(corpus, sentence, options, ["maxLen"]);
  return exclusive(async () => {
    const { memory, encoderAttention } = await encode(model, source.ids);
    const { tokens, logProbs } = await greedyDecode(model, memory, settings.maxLen);
    const score = logProbs.reduce((a, b) => a + b, 0);
    return { hypotheses: [{ tokens: model.tgtVocab.spell(tokens), score }], logProbs,
      ...await describe(model, source, memory, encoderAttention, tokens) };
  });
}

async function words(corpus) {
  const config = await loadConfig(corpus);
  return config.src_tokens.filter((token) => !SPECIALS.includes(token));
}

const api = { corpora: [], translate, greedy, words };
api.ready = loadIndex().then((index) => {
  api.corpora = Object.freeze([...index.corpora]);
  return api;
});
api.ready.catch(() => {});  // a failure reaches whoever awaits ready, not the console
window.illustrated = api;
// The live widgets of the page (containers written by illustrated.widgets.live), if any.
mountLiveWidgets(api);
mountWidgets(api);
