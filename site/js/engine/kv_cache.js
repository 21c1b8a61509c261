// The decoder with a KV cache for the page's engine (engine.js's transformer hands it its parts):
// modules/kv_cache.py's idea in jax-js. Decoding is auto-regressive (paper §3.1) and masked
// self-attention makes each position final once written (§3.2.3), so a step runs the decoder on the
// newest position only, reading earlier keys and values from the cache; the cross-attention's keys
// and values are computed once a source. Shapes stay fixed from step to step (the cache holds
// max_len positions, `at` and `seen` say which are written) so that jit compiles each shape once.

/** {crossKeysValues, decodeStep} of a model `cfg` made of engine.js's parts. */
export function kvCache(jax, cfg, { linear, norm, keysValues, attention, residual, ffn, table }) {
  const { numpy: np } = jax;
  const { d_model: d, n_layers: layers, norm_first: preLN } = cfg;
  /** The cross-attentions' keys and values of one source, computed once a sentence (paper §3.2.3):
   * memory (1, src_len, d_model) -> per layer [k, v], each (1, heads, src_len, d_k). */
  const crossKeysValues = (p, memory) => Array.from({ length: layers },
    (_, i) => keysValues(i === layers - 1 ? memory : memory.ref, p, `decoder.layers.${i}.cross_attn`));
  /** One decoding step with a KV cache (paper §3.1: auto-regressive), the decoder on the newest
   * position only. tgt (n, 1) int32: each row's newest token; at (max_len,) bool: its position;
   * seen (max_len,) bool: the positions up to it; rows (n,) int32: the row of `cache` each row
   * continues (beam search follows its hypotheses); cache: per layer [k, v] of the self-attention,
   * (n', heads, max_len, d_k), rows at unseen positions ignored; cross: crossKeysValues's.
   * -> [logits (n, 1, vocab), the cache with this position's keys and values written in]. */
  function decodeStep(p, tgt, at, seen, rows, cache, cross, srcMask, keep) {
    const onehot = at.ref.astype(np.float32).reshape([1, cfg.max_len]);
    const position = np.matmul(onehot, table.ref);  // (1, d_model): the row of the table at `at`
    let y = position.add(np.take(p["tgt_embed.lut.weight"], tgt, 0).mul(Math.sqrt(d)));  // (n, 1, d_model)
    const where = at.reshape([1, 1, cfg.max_len, 1]);
    const visible = seen.reshape([1, 1, 1, cfg.max_len]);
    const written = [];
    for (let i = 0; i < layers; i += 1) {
      const name = `decoder.layers.${i}`;
      const selfAttention = (h) => {
        const [kNew, vNew] = keysValues(h.ref, p, `${name}.self_attn`);  // (n, heads, 1, d_k) each
        const [k, v] = cache[i].map((past, j) =>
          np.where(where.ref, [kNew, vNew][j], np.take(past, rows.ref, 0)));
        written.push([k.ref, v.ref]);  // (n, heads, max_len, d_k) each
        return attention(h, null, p, `${name}.self_attn`, visible.ref, keep?.self, [k, v]);
      };
      const crossAttention = (h) => attention(h, null, p, `${name}.cross_attn`, srcMask.ref, keep?.cross,
        cross[i].map((a) => a.ref));
      y = residual(y, p, `${name}.norm1`, selfAttention);
      y = residual(y, p, `${name}.norm2`, crossAttention);
      y = residual(y, p, `${name}.norm3`, ffn(p, `${name}.feed_forward`));
    }
    [where, visible, rows, srcMask].forEach((a) => a.dispose());
    jax.tree.dispose(cross);
    return [linear(preLN ? norm(y, p, "decoder.norm") : y, p, "generator.proj"), written];
  }
  return { crossKeysValues, decodeStep };
}
