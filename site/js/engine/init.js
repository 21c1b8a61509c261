// The random numbers of a training in the page: a seeded uniform generator (the batch order and
// the initial weights) and the initial weights drawn as PyTorch draws them (other random numbers).

/** mulberry32: the seeded uniform numbers of the initial weights and of the batch order. */
export function uniform(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    const t = Math.imul(a ^ (a >>> 15), 1 | a);
    const u = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((u ^ (u >>> 14)) >>> 0) / 4294967296;
  };
}

/** The state_dict's names and shapes, {name: {shape, data}}: Glorot for every matrix
 * (modules/transformer.py), U(±1/sqrt(fan_in)) for biases (nn.Linear), 1 and 0 for norms. */
export function initialWeights(cfg, random) {
  const { d_model: d, d_ff: ff } = cfg;
  const out = {};
  const add = (name, shape, draw) => {
    out[name] = { shape, data: Float32Array.from({ length: shape[0] * (shape[1] ?? 1) }, draw) };
  };
  const glorot = (name, [o, i]) => add(name, [o, i], () => (2 * random() - 1) * Math.sqrt(6 / (o + i)));
  const linear = (name, o, i) => {
    glorot(`${name}.weight`, [o, i]);
    add(`${name}.bias`, [o], () => (2 * random() - 1) / Math.sqrt(i));
  };
  const norm = (name) => {
    add(`${name}.weight`, [d], () => 1);
    add(`${name}.bias`, [d], () => 0);
  };
  glorot("src_embed.lut.weight", [cfg.src_vocab_size, d]);
  glorot("tgt_embed.lut.weight", [cfg.tgt_vocab_size, d]);
  for (const side of ["encoder", "decoder"]) {
    for (let i = 0; i < cfg.n_layers; i += 1) {
      const name = `${side}.layers.${i}`;
      const attention = side === "encoder" ? ["self_attn"] : ["self_attn", "cross_attn"];
      attention.forEach((a) => ["w_q", "w_k", "w_v", "w_o"].forEach((w) => linear(`${name}.${a}.${w}`, d, d)));
      linear(`${name}.feed_forward.linear1`, ff, d);
      linear(`${name}.feed_forward.linear2`, d, ff);
      [1, 2, 3].slice(0, attention.length + 1).forEach((n) => norm(`${name}.norm${n}`));
    }
    if (cfg.norm_first) norm(`${side}.norm`);
  }
  linear("generator.proj", cfg.tgt_vocab_size, d);
  return out;
}
