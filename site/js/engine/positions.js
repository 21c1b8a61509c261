// The sinusoidal positional encoding of modules/positional.py for the page's engine, both layouts,
// and the check that refuses a config the engine cannot run as PyTorch does (issue 32).

/** d_model's rule in words, n_heads said as `heads`: the heads split it, the sines and cosines pair its dimensions. */
export const evenDivisible = (heads) => ["an even number divisible by ", heads];

/** The sinusoidal positions as a Float32Array (n, d): `layout` "interleaved" (sin on even, cos on
 * odd dimensions; paper §3.5) or "concatenated" (all sines, then all cosines, timescales geometric
 * from 1 to 10^4 over d/2 - 1 steps: tensor2tensor's, the post's figures); modules/positional.py's. */
export const sinusoids = (n, d, layout = "interleaved") => Float32Array.from({ length: n * d }, (_, k) => {
  const [pos, i] = [Math.floor(k / d), k % d];
  if (layout === "concatenated") {
    const half = d / 2;
    const angle = pos * Math.exp(-(Math.log(10000) / Math.max(half - 1, 1)) * (i % half));
    return i < half ? Math.sin(angle) : Math.cos(angle);
  }
  const angle = pos * Math.exp((-Math.log(10000) * (i - (i % 2))) / d);
  return i % 2 ? Math.cos(angle) : Math.sin(angle);
});

const LAYOUTS = ["interleaved", "concatenated"];

/** Refuses a config this engine cannot run as PyTorch does, naming the field. */
export function checkConfig(cfg) {
  const layout = cfg.pe_layout ?? "interleaved";
  if (!LAYOUTS.includes(layout)) {
    throw new Error(`pe_layout: expected one of ${LAYOUTS.join(", ")}, got ${JSON.stringify(cfg.pe_layout)}`);
  }
  if (!(cfg.d_model > 0 && cfg.d_model % 2 === 0 && cfg.d_model % cfg.n_heads === 0)) {
    throw new Error(`d_model: expected ${evenDivisible(`n_heads (${cfg.n_heads})`).join("")}, got ${cfg.d_model}`);
  }
  return layout;
}
