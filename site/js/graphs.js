// Running a model's two ONNX graphs (illustrated.onnx_export): the encoder once per sentence, the
// decoder once per step for every live hypothesis; flat tensors become the API's nested arrays.
/** Nested arrays of numbers from a flat array and its dims (row-major, as ONNX stores). */
export function nest(data, dims) {
  if (dims.length === 1) return Array.from(data);
  const step = data.length / dims[0];
  return Array.from({ length: dims[0] }, (_, i) => nest(data.subarray(i * step, (i + 1) * step), dims.slice(1)));
}
function ids(ort, rows) {
  const flat = BigInt64Array.from(rows.flat(), (id) => BigInt(id));
  return new ort.Tensor("int64", flat, [rows.length, rows[0].length]);
}
/** The encoder on one sentence (model.encode): memory, an ort.Tensor (1, src_len, d_model), and
 * encoderAttention [layer][head][source][source]. */
export async function encode(model, srcIds) {
  const out = await model.encoder.run({ src: ids(model.ort, [srcIds]) });
  const attention = out.encoder_attention;  // (n_layers, n_heads, src_len, src_len)
  return { memory: out.memory, encoderAttention: nest(attention.data, attention.dims) };
}
/** log_softmax of the last position's logits, one Float32Array per row of tgtIn (rows of equal
 * length from <bos>), <bos> and <pad> then made impossible: decoding.py's _next_log_probs. */
export async function nextLogProbs(model, tgtIn, memory) {
  const out = await model.decoder.run({ tgt_in: ids(model.ort, tgtIn), memory });  // (n, vocab)
  const vocab = out.log_probs.dims[1];
  const rows = tgtIn.map((_, i) => out.log_probs.data.slice(i * vocab, (i + 1) * vocab));
  for (const row of rows) {
    row[model.config.bos_id] = row[model.config.tgt_pad_id] = -Infinity;
    // A NaN would win every argmax and top-k: a broken model must not look like a translation.
    if (!Number.isFinite(Math.max(...row))) throw new Error("model: its scores for the next token are NaN; nothing can be decoded");
  }
  return rows;
}
/** The decoder's attention while it wrote `tokens` (no <bos>): crossAttention [layer][head][step]
 * [source], selfAttention [layer][head][step][step]; one run on <bos> + tokens[:-1] gives every step. */
export async function attentionOf(model, tokens, memory) {
  const tgtIn = [[model.config.bos_id, ...tokens.slice(0, -1)]];
  const out = await model.decoder.run({ tgt_in: ids(model.ort, tgtIn), memory });
  const pick = (t) => nest(t.data, t.dims).map((layer) => layer[0]);  // drop the batch of one
  return { crossAttention: pick(out.cross_attention), selfAttention: pick(out.self_attention) };
}
/** The topK most probable words at every step of a hypothesis (no <bos>), [step][rank] {id, logProb},
 * best (then the lower id) first: step t is nextLogProbs on <bos> + tokens[:t]. */
export async function stepDistributions(model, tokens, memory, topK) {
  const out = [];
  for (let t = 0; t < tokens.length; t += 1) {
    const [row] = await nextLogProbs(model, [[model.config.bos_id, ...tokens.slice(0, t)]], memory);
    const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
    out.push(order.slice(0, topK).map((id) => ({ id, logProb: row[id] })));
  }
  return out;
}
