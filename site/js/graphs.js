// Translating with a model (engine.js's modelFrom): the encoder once per sentence, the decoder
// once per step for every live hypothesis (decoding.py's loops are in search_beam.js), and the
// arrays turned into the nested arrays the API returns. `memory` is disposed by the caller.
import { compiled } from "./engine.js";

/** Nested arrays of numbers from a flat array and its dims (row-major). */
export function nest(data, dims) {
  if (dims.length === 1) return Array.from(data);
  const step = data.length / dims[0];
  return Array.from({ length: dims[0] }, (_, i) => nest(data.subarray(i * step, (i + 1) * step), dims.slice(1)));
}

// Shapes padded up to a power of two (8 positions at least): jit compiles once per size.
const bucket = (n, least, most) => Math.min(most, Math.max(least, 2 ** Math.ceil(Math.log2(n))));
export const ids = (np, rows, width, pad) => np.array(new Int32Array(rows.flatMap(
  (r) => [...r, ...Array(width - r.length).fill(pad)])), { dtype: np.int32 }).reshape([rows.length, width]);
const cut = (w, q, k) => nest(w.dataSync(), w.shape)[0].map((head) =>  // batch of one
  head.slice(0, q).map((row) => row.slice(0, k)));

/** The encoder on one sentence: memory {array (1, src_len padded, d_model), mask, length,
 * dispose} and encoderAttention [layer][head][source][source]. */
export async function encode(model, srcIds) {
  const { jax: { numpy: np, tree }, config } = model, n = srcIds.length;
  const src = ids(np, [srcIds], bucket(n, 8, config.max_len), config.src_pad_id);
  const mask = model.net.maskOf(src.ref);
  const [array, weights] = compiled(model).encode(tree.ref(model.params), src);
  return { memory: { array, mask, length: n, dispose: () => [array, mask].forEach((a) => a.dispose()) },
    encoderAttention: weights.map((w) => cut(w, n, n)) };
}

// The decoder on rows of equal length: [log-probs [row][position][vocab], self, cross weights].
function decodeAll(model, tgtIn, memory) {
  const { jax: { numpy: np, tree }, config } = model;
  const padded = [...tgtIn, ...Array(bucket(tgtIn.length, 1, Infinity) - tgtIn.length).fill(tgtIn[0])];
  const tgt = ids(np, padded, bucket(tgtIn[0].length, 8, config.max_len), config.tgt_pad_id);
  const [logProbs, self, cross] = compiled(model).decode(tree.ref(model.params), tgt, memory.array.ref, memory.mask.ref);
  return [nest(logProbs.dataSync(), logProbs.shape).slice(0, tgtIn.length), self, cross];
}

/** decoding.py's _next_log_probs: log_softmax of the last position's logits, one Float32Array
 * per row of tgtIn (rows of equal length starting with <bos>), <bos> and <pad> made impossible. */
export async function nextLogProbs(model, tgtIn, memory) {
  const [logProbs, self, cross] = decodeAll(model, tgtIn, memory);
  [...self, ...cross].forEach((w) => w.dispose());
  return logProbs.map((positions) => ruledOut(model, Float32Array.from(positions[tgtIn[0].length - 1])));
}

function ruledOut(model, row) {
  row[model.config.bos_id] = -Infinity;
  row[model.config.tgt_pad_id] = -Infinity;
  // A NaN would win every argmax and top-k: a broken model must not look like a translation.
  if (!Number.isFinite(Math.max(...row))) throw new Error("model: its scores for the next token are NaN; nothing can be decoded");
  return row;
}

/** The decoder's attention (crossAttention [layer][head][step][source], selfAttention [layer]
 * [head][step][step]) while it generated `tokens` (without <bos>), from one run. */
export async function attentionOf(model, tokens, memory) {
  const [, self, cross] = decodeAll(model, [[model.config.bos_id, ...tokens.slice(0, -1)]], memory);
  const n = tokens.length;
  return { crossAttention: cross.map((w) => cut(w, n, memory.length)), selfAttention: self.map((w) => cut(w, n, n)) };
}

/** The topK most probable words at every step of a hypothesis, [step][rank] {id, logProb},
 * best first (ties: the lower id first): step t's distribution given <bos> + tokens[:t], all
 * from one run of the decoder (its mask lets position t see no later one). */
export async function stepDistributions(model, tokens, memory, topK) {
  const [[positions], self, cross] = decodeAll(model, [[model.config.bos_id, ...tokens.slice(0, -1)]], memory);
  [...self, ...cross].forEach((w) => w.dispose());
  return positions.slice(0, tokens.length).map((p) => {
    const row = ruledOut(model, p), order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
    return order.slice(0, topK).map((id) => ({ id, logProb: row[id] }));
  });
}
