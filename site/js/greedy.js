// Greedy decoding in the browser: src/illustrated/decoding.py's greedy_decode (through
// greedy_decode_batch, with a batch of one sentence), line by line.
import { nextLogProbs } from "./graphs.js";

/** Index of the largest value, the first one on a tie (torch.argmax's choice). */
export function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i += 1) if (row[i] > row[best]) best = i;
  return best;
}

/**
 * Pick the most probable word at every step, feeding each choice back in, until <eos>.
 * @param {object} model from models.js   @param {object} memory the encoder's output tensor
 * @param {number} maxLen most tokens generated, <eos> included
 * @returns {Promise<{tokens: number[], logProbs: number[]}>} generated ids without <bos>,
 *   ending with <eos> when it was produced, and each one's log-probability
 */
export async function greedyDecode(model, memory, maxLen) {
  const { bos_id: bosId, eos_id: eosId } = model.config;
  let tgt = [bosId];
  const logProbs = [];
  for (let step = 0; step < maxLen; step += 1) {
    const [row] = await nextLogProbs(model, [tgt], memory);  // (vocab,)
    const nextId = argmax(row);
    tgt = [...tgt, nextId];  // (t + 1,)
    logProbs.push(row[nextId]);
    if (nextId === eosId) break;  // done.all() for a batch of one
  }
  return { tokens: tgt.slice(1), logProbs };
}
