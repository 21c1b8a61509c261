// Beam search in the browser: src/illustrated/inference/decoding.py's beam_search, line by line, with its
// float32 arithmetic (torch adds log-probabilities as float32: Math.fround here) and its
// float64 division by the length penalty.
import { decoderCache, nextLogProbs } from "./graphs.js";

/** GNMT length penalty ((5 + length) / 6) ** alpha; 1 when alpha = 0 (decoding.length_penalty). */
export const lengthPenalty = (length, alpha) => ((5.0 + length) / 6.0) ** alpha;

/** totals.topk(k): the indices of the k largest finite values, best first (ties: the lower first). */
function topk(totals, k) {
  const finite = [...totals.keys()].filter((i) => Number.isFinite(totals[i]));
  return finite.sort((a, b) => totals[b] - totals[a] || a - b).slice(0, k);
}

/** Keeps the beamSize best partial translations at every step; returns {best, steps}: best, the topBeams
 * [token ids without <bos>, score], best first; steps, the beam as a tree, one entry per step ({step,
 * candidates: [[ids, logProb]], kept: [ids], finished: [ids]}, decoding.BeamStep). `useCache` (as
 * decoding.py's use_cache): the decoder keeps each layer's keys and values (graphs.js decoderCache) and
 * runs on the newest position only, rows following their hypotheses; false: the whole prefix a step. */
export async function beamSearch(model, memory, { beamSize, topBeams, maxLen, alpha, useCache = true }) {
  const cache = useCache ? decoderCache(model, memory) : null;
  try {
    return await search(model, memory, { beamSize, topBeams, maxLen, alpha }, cache);
  } finally {
    cache?.dispose();
  }
}

async function search(model, memory, { beamSize, topBeams, maxLen, alpha }, cache) {
  const { bos_id: bosId, eos_id: eosId } = model.config;
  const steps = [];
  const finished = [];  // [token ids, length-penalised score]
  let live = [[]];
  let liveScores = [0];  // (n_live,), float32 values
  let parents = [0];  // the row of the last step's live hypotheses each one continues
  for (let step = 1; step <= maxLen; step += 1) {
    const logProbs = cache ? await cache.next(parents, live.map((h) => h.at(-1) ?? bosId))
      : await nextLogProbs(model, live.map((h) => [bosId, ...h]), memory);  // (n_live, vocab)
    const vocab = logProbs[0].length;
    const totals = logProbs.flatMap((row, i) => Array.from(row, (lp) => Math.fround(liveScores[i] + lp)));
    const candidates = [];
    const kept = [];
    const keptScores = [];
    const ended = [];
    const keptParents = [];
    topk(totals, 2 * beamSize).forEach((flat, rank) => {
      const score = totals[flat];
      const hyp = [...live[Math.floor(flat / vocab)], flat % vocab];
      candidates.push([hyp, score]);
      if (hyp.at(-1) === eosId) {
        if (rank < beamSize) {
          ended.push(hyp);
          finished.push([hyp, score / lengthPenalty(step, alpha)]);
        }
      } else if (kept.length < beamSize) {
        kept.push(hyp);
        keptScores.push(score);
        keptParents.push(Math.floor(flat / vocab));
      }
    });
    if (step === maxLen) {  // out of room: unfinished hypotheses are returned as they are
      kept.forEach((h, i) => finished.push([h, keptScores[i] / lengthPenalty(step, alpha)]));
      kept.length = 0;
    }
    steps.push({ step, candidates, kept: [...kept], finished: ended });
    if (kept.length === 0) break;
    [live, liveScores, parents] = [kept, keptScores, keptParents];
    if (finished.length >= topBeams) {
      // log-probs only fall as a hypothesis grows, and the penalty is largest at max_len,
      // so no live hypothesis can end with a score above this bound.
      const bound = Math.max(...keptScores) / lengthPenalty(maxLen, alpha);
      const kthBest = finished.map(([, s]) => s).sort((a, b) => b - a)[topBeams - 1];
      if (bound < kthBest) break;
    }
  }
  // A stable sort, best first, as Python's sorted(..., reverse=True).
  return { best: [...finished].sort((a, b) => b[1] - a[1]).slice(0, topBeams), steps };
}
