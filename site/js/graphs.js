// Running a model (engine.js, jax-js) for translation: the encoder once per sentence, the
// decoder once per step for every live hypothesis (decoding.py's loops, in search_beam.js),
// and the arrays turned into the nested arrays the API returns. `memory` is a jax-js array
// that the caller disposes when the sentence is done.
import { transformer } from "./engine.js";
import { readModel } from "./safetensors.js";
import { Vocab } from "./vocab.js";

/** Nested arrays of numbers from a flat array and its dims (row-major). */
export function nest(data, dims) {
  if (dims.length === 1) return Array.from(data);
  const step = data.length / dims[0];
  return Array.from({ length: dims[0] }, (_, i) => nest(data.subarray(i * step, (i + 1) * step), dims.slice(1)));
}

/** A model from a page model file's bytes (safetensors.js): {corpus, config, jax, net, params,
 * srcVocab, tgtVocab}; config: what {corpus}.json holds (sizes, special ids, both vocabularies). */
export function modelFrom(jax, buffer, corpus, extra = {}) {
  const file = readModel(buffer);
  const { numpy: np } = jax;
  const params = Object.fromEntries(Object.entries(file.tensors).map(
    ([name, { shape, data }]) => [name, np.array(data).reshape(shape)]));
  const c = file.config;
  const config = { corpus, src_tokens: file.srcTokens, tgt_tokens: file.tgtTokens,
    src_pad_id: c.pad_id, tgt_pad_id: c.tgt_pad_id, bos_id: file.tgtTokens.indexOf("<bos>"),
    eos_id: file.tgtTokens.indexOf("<eos>"), max_len: c.max_len, n_layers: c.n_layers,
    n_heads: c.n_heads, d_model: c.d_model, ...extra };
  return { corpus, config, jax, net: transformer(jax, c), params,
    srcVocab: new Vocab(file.srcTokens), tgtVocab: new Vocab(file.tgtTokens) };
}

// Shapes are padded up to a power of two (at least 8 positions), so that jax-js's jit compiles
// the encoder and the decoder step once per size, not once per sentence length and step.
const bucket = (n, least, most) => Math.min(most, Math.max(least, 2 ** Math.ceil(Math.log2(n))));
function ids(np, rows, width, pad) {
  const flat = rows.flatMap((r) => [...r, ...Array(width - r.length).fill(pad)]);
  return np.array(new Int32Array(flat), { dtype: np.int32 }).reshape([rows.length, width]);
}
const cut = (w, q, k) => nest(w.dataSync(), w.shape)[0].map((head) =>  // batch of one
  head.slice(0, q).map((row) => row.slice(0, k)));

function compiled(model) {
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
  };
  return model.jitted;
}

/**
 * The encoder on one sentence (model.encode in modules/transformer.py): memory, {array (1,
 * src_len padded, d_model), mask, length}, and encoderAttention [layer][head][source][source].
 */
export async function encode(model, srcIds) {
  const { jax: { numpy: np, tree }, config } = model, n = srcIds.length;
  const src = ids(np, [srcIds], bucket(n, 8, config.max_len), config.src_pad_id);
  const mask = model.net.maskOf(src.ref);
  const [array, weights] = compiled(model).encode(tree.ref(model.params), src);
  const encoderAttention = weights.map((w) => cut(w, n, n));
  return { memory: { array, mask, length: n, dispose: () => [array, mask].forEach((a) => a.dispose()) },
    encoderAttention };
}

/** The decoder on rows of equal length: [log-probs (n, len, vocab) Float32Array, self, cross]. */
function decodeAll(model, tgtIn, memory) {
  const { jax: { numpy: np, tree }, config } = model, len = tgtIn[0].length;
  const rows = bucket(tgtIn.length, 1, Infinity);
  const padded = [...tgtIn, ...Array(rows - tgtIn.length).fill(tgtIn[0])];
  const tgt = ids(np, padded, bucket(len, 8, config.max_len), config.tgt_pad_id);
  const [logProbs, self, cross] = compiled(model).decode(tree.ref(model.params), tgt,
    memory.array.ref, memory.mask.ref);
  return [nest(logProbs.dataSync(), logProbs.shape).slice(0, tgtIn.length), self, cross];
}

/**
 * log_softmax of the last position's logits (one Float32Array per row of tgtIn: rows of equal
 * length, each starting with <bos>), with <bos> and <pad> made impossible afterwards:
 * decoding.py's _next_log_probs, line by line.
 */
export async function nextLogProbs(model, tgtIn, memory) {
  const [logProbs, self, cross] = decodeAll(model, tgtIn, memory);
  [...self, ...cross].forEach((w) => w.dispose());
  const rows = logProbs.map((positions) => Float32Array.from(positions[tgtIn[0].length - 1]));
  for (const row of rows) {
    row[model.config.bos_id] = -Infinity;
    row[model.config.tgt_pad_id] = -Infinity;
    // A NaN would win every argmax and top-k: a broken model must not look like a translation.
    if (!Number.isFinite(Math.max(...row))) {
      throw new Error("model: its scores for the next token are NaN; nothing can be decoded");
    }
  }
  return rows;
}

/**
 * The decoder's attention while it generated `tokens` (without <bos>), crossAttention
 * [layer][head][step][source] and selfAttention [layer][head][step][step]: step t's query is the
 * position that produced tokens[t], so one run on <bos> + tokens[:-1] gives every step.
 */
export async function attentionOf(model, tokens, memory) {
  const [, self, cross] = decodeAll(model, [[model.config.bos_id, ...tokens.slice(0, -1)]], memory);
  const n = tokens.length;
  return { crossAttention: cross.map((w) => cut(w, n, memory.length)),
    selfAttention: self.map((w) => cut(w, n, n)) };
}

/**
 * The topK most probable words at every step of a hypothesis (without <bos>), [step][rank]
 * {id, logProb}, best first (ties: the lower id first): step t is nextLogProbs on <bos> +
 * tokens[:t] (<bos> and <pad> have probability 0, but count in the log_softmax's normalisation).
 */
export async function stepDistributions(model, tokens, memory, topK) {
  const out = [];
  for (let t = 0; t < tokens.length; t += 1) {
    const [row] = await nextLogProbs(model, [[model.config.bos_id, ...tokens.slice(0, t)]], memory);
    const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
    out.push(order.slice(0, topK).map((id) => ({ id, logProb: row[id] })));
  }
  return out;
}
