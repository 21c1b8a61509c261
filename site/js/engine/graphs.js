// Translating with a model (engine.js's modelFrom): the encoder once per sentence, the decoder
// once per step for every live hypothesis (decoding.py's loops are in search_beam.js), and the
// arrays turned into the nested arrays the API returns. `memory` is disposed by the caller.

/** The model's encoder and log-softmaxed decoder, jitted once, with their attention weights. */
export function compiled(model) {
  const { jax, net } = model;
  model.jitted ??= {
    encode: jax.jit((p, src) => {
      const keep = { encoder: [] };
      return [net.encode(p, src.ref, net.maskOf(src), keep), keep.encoder];
    }),
    decode: jax.jit((p, tgt, memory, mask) => {
      const keep = { self: [], cross: [] };
      return [jax.nn.logSoftmax(net.decode(p, tgt, memory, mask, keep), -1), keep.self, keep.cross];
    }),
    crossKeysValues: jax.jit((p, memory) => net.crossKeysValues(p, memory)),
    step: jax.jit((p, tgt, at, seen, rows, cache, cross, mask) => {
      const [logits, written] = net.decodeStep(p, tgt, at, seen, rows, cache, cross, mask);
      return [jax.nn.logSoftmax(logits, -1), written];
    }),
  };
  return model.jitted;
}

// Shapes padded up to a power of two (8 positions at least): jit compiles once per size.
const bucket = (n, least, most) => Math.min(most, Math.max(least, 2 ** Math.ceil(Math.log2(n))));
// Attention weights (1, heads, queries, keys), padded, as [head][query][key] of the n and m real ones.
const cut = (w, n, m) => w.js()[0].map((head) => head.slice(0, n).map((row) => row.slice(0, m)));

/** Rows of token ids padded to `width` with `pad`: an int32 array (rows, width). */
export const ids = (np, rows, width, pad) => np.array(new Int32Array(rows.flatMap(
  (r) => [...r, ...Array(width - r.length).fill(pad)])), { dtype: np.int32 }).reshape([rows.length, width]);

/** The encoder on one sentence: memory {array (1, src_len padded, d_model), mask, length,
 * dispose} and encoderAttention [layer][head][source][source]. */
export async function encode(model, srcIds) {
  const { jax: { numpy: np, tree }, config } = model;
  const n = srcIds.length;
  const src = ids(np, [srcIds], bucket(n, 8, config.max_len), config.src_pad_id);
  const mask = model.net.maskOf(src.ref);
  const [array, weights] = compiled(model).encode(tree.ref(model.params), src);
  const dispose = () => [array, mask].forEach((a) => a.dispose());
  return { memory: { array, mask, length: n, dispose }, encoderAttention: weights.map((w) => cut(w, n, n)) };
}

// The decoder on rows of equal length: [log-probs [row][position][vocab], self, cross weights].
function decodeAll(model, tgtIn, memory) {
  const { jax: { numpy: np, tree }, config } = model;
  const rows = [...tgtIn, ...Array(bucket(tgtIn.length, 1, Infinity) - tgtIn.length).fill(tgtIn[0])];
  const tgt = ids(np, rows, bucket(tgtIn[0].length, 8, config.max_len), config.tgt_pad_id);
  const { array, mask } = memory;
  const [logProbs, self, cross] = compiled(model).decode(tree.ref(model.params), tgt, array.ref, mask.ref);
  return [logProbs.js().slice(0, tgtIn.length), self, cross];
}

// <bos> and <pad> made impossible; a NaN (it would win every argmax and top-k) refused.
function ruledOut(model, row) {
  row[model.config.bos_id] = -Infinity;
  row[model.config.tgt_pad_id] = -Infinity;
  if (!Number.isFinite(Math.max(...row))) {
    throw new Error("model: its scores for the next token are NaN; nothing can be decoded");
  }
  return row;
}

/** decoding.py's _next_log_probs: log_softmax of the last position's logits, one Float32Array
 * per row of tgtIn (rows of equal length starting with <bos>), <bos> and <pad> made impossible. */
export async function nextLogProbs(model, tgtIn, memory) {
  const [logProbs, self, cross] = decodeAll(model, tgtIn, memory);
  [...self, ...cross].forEach((w) => w.dispose());
  return logProbs.map((positions) => ruledOut(model, Float32Array.from(positions[tgtIn[0].length - 1])));
}

/** A KV cache over one encoded sentence (engine.js's decodeStep): the cross-attentions' keys and
 * values computed once, then `next(rows, tokens)`, one step for every live hypothesis: rows[j], the
 * hypothesis of the last step that hypothesis j continues (step 1: [0]), tokens[j] its newest token
 * (<bos> at step 1). Returns nextLogProbs's rows; `dispose()` frees the cache. */
export function decoderCache(model, memory) {
  const { jax: { numpy: np, tree }, config } = model;
  const jitted = compiled(model);
  const { n_layers: layers, n_heads: heads, d_model: d, max_len: maxLen } = config;
  const cross = jitted.crossKeysValues(tree.ref(model.params), memory.array.ref);
  let cache = Array.from({ length: layers }, () => [0, 1].map(() => np.zeros([1, heads, maxLen, d / heads])));
  let position = 0;
  const flags = (test) => np.array(Array.from({ length: maxLen }, (_, i) => test(i))).greater(0);
  return {
    async next(rows, tokens) {
      const n = bucket(rows.length, 1, Infinity);  // rows padded as decodeAll pads them
      const padded = (a) => [...a, ...Array(n - a.length).fill(a[0])];
      const tgt = ids(np, padded(tokens).map((t) => [t]), 1, config.tgt_pad_id);
      const index = np.array(new Int32Array(padded(rows)), { dtype: np.int32 });
      const [logProbs, written] = jitted.step(tree.ref(model.params), tgt, flags((i) => i === position),
        flags((i) => i <= position), index, cache, tree.ref(cross), memory.mask.ref);
      cache = written;
      position += 1;
      return logProbs.js().slice(0, rows.length).map(([row]) => ruledOut(model, Float32Array.from(row)));
    },
    dispose: () => tree.dispose([cross, cache]),
  };
}

/** The decoder once more over the best hypothesis `tokens` (without <bos>): crossAttention [layer][head]
 * [step][source], selfAttention [layer][head][step][step] and topK: the topK most probable words of every
 * step t given <bos> + tokens[:t], [step][rank] {id, logProb}, best first (ties: the lower id first). */
export async function decodeBest(model, tokens, memory, topK) {
  const n = tokens.length;
  const [[positions], self, cross] = decodeAll(model, [[model.config.bos_id, ...tokens.slice(0, -1)]], memory);
  const ranked = (logProbs) => {
    const row = ruledOut(model, logProbs);
    const order = [...row.keys()].sort((a, b) => row[b] - row[a] || a - b);
    return order.slice(0, topK).map((id) => ({ id, logProb: row[id] }));
  };
  return { crossAttention: cross.map((w) => cut(w, n, memory.length)), selfAttention: self.map((w) => cut(w, n, n)),
    topK: topK > 0 ? positions.slice(0, n).map(ranked) : [] };
}
