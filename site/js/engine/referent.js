// illustrated.training.referent in the page: while the model trains, a linear read-out of the encoder's output at "it"
// must name the noun "it" refers to (labels: {corpus}.train.json's `referent`, from web_export); its
// cross-entropy times referentWeight joins the translation loss (engine.js's trainer; jax-js differentiates
// it). The read-out's weights sit beside the model's as "referent.linear.*" and are dropped after training.
import { refuse } from "./options.js";
import { uniform } from "./init.js";

const PREFIX = "referent.";

/** Whether a weight's name is the read-out's (not the Transformer's). */
export const isReadout = (name) => name.startsWith(PREFIX);

/** The model's weights without the read-out's. */
export const withoutReadout = (p) => Object.fromEntries(Object.entries(p).filter(([k]) => !isReadout(k)));

/** The read-out's initial weights, {name: {shape, data}}, as nn.Linear(d_model, src_vocab_size) draws them
 * (weight and bias U(±1/sqrt(d_model))), from their own seeded stream: the model's weights and the batches
 * are the same with the objective on and off. */
export function initialReadout(cfg, seed) {
  const random = uniform((seed ^ 0x9e3779b9) >>> 0);
  const [o, i] = [cfg.src_vocab_size, cfg.d_model];
  const draw = (n) => Float32Array.from({ length: n }, () => (2 * random() - 1) / Math.sqrt(i));
  return { [`${PREFIX}linear.weight`]: { shape: [o, i], data: draw(o * i) },
    [`${PREFIX}linear.bias`]: { shape: [o], data: draw(o) } };
}

/** The read-out's initial weights for the options `o` (initialReadout), or none when referentWeight is 0; refuses
 * a weight above 0 for a corpus whose data ({corpus}.train.json) has no "it" labels, as il.train does. */
export function readoutFor(o, data, cfg) {
  if (!(o.referentWeight > 0)) return {};
  if (!data.referent) {
    refuse("referentWeight", `0 for the ${o.corpus} corpus, which has no "it" labels (coreference has)`,
      o.referentWeight);
  }
  return initialReadout(cfg, o.seed);
}

/** A batch's labels as arrays (batch,): position of "it" and id of its noun (int32; 0 where a pair has none)
 * and whether it has them (float32 1 or 0); `labels`: the batch's [it, noun] or null, in its order. */
export function labelArrays(np, labels) {
  const column = (f) => np.array(Int32Array.from(labels, f), { dtype: np.int32 });
  return { it: column((l) => l?.[0] ?? 0), noun: column((l) => l?.[1] ?? 0),
    labelled: np.array(Float32Array.from(labels, (l) => (l ? 1 : 0))) };
}

/** weight x F.cross_entropy of the read-out at "it" over the labelled pairs (0 if none; ReferentObjective.loss):
 * memory (batch, src_len, d_model), consumed; p: the weights, read-out's among them. */
export function referentLoss(jax, p, memory, { it, noun, labelled }, weight) {
  const { numpy: np, nn } = jax;
  const [batch, srcLen, d] = memory.shape;
  const pick = nn.oneHot(it, srcLen).reshape([batch, 1, srcLen]);
  const atIt = np.matmul(pick, memory).reshape([batch, d]);  // the encoder's output at "it"
  const scores = np.matmul(atIt, np.transpose(p[`${PREFIX}linear.weight`])).add(p[`${PREFIX}linear.bias`]);
  const vocab = scores.shape[1];
  const nll = nn.logSoftmax(scores, -1).mul(nn.oneHot(noun, vocab)).sum(-1).neg();  // (batch,)
  const count = np.maximum(labelled.ref.sum(), 1);
  return nll.mul(labelled).sum().div(count).mul(weight);
}
