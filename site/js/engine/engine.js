// The encoder-decoder of src/illustrated/modules/ once more, in jax-js (`jax`: _vendor/ in the
// page, node_modules in tests/site/engine.test.mjs, which checks it against PyTorch), to train
// (valueAndGrad, jit: no backward pass of ours) and translate. Weights: a flat object named as
// the state_dict. Arrays are reference-counted: functions consume their arguments (`.ref` keeps).
import { readModel } from "./safetensors.js";
import { Vocab } from "./vocab.js";
import { checkConfig, sinusoids } from "./positions.js";
import { kvCache } from "./kv_cache.js";
import { isReadout, referentLoss } from "./referent.js";

/** The model of a config (TransformerConfig's fields): {encode, decode, forward, lossAndAccuracy, maskOf,
 * and kv_cache.js's crossKeysValues and decodeStep}; `keep` collects the attention weights of every
 * layer. Throws (naming the field) for a config it cannot run (positions.js's checkConfig). */
export function transformer(jax, cfg) {
  const { numpy: np, nn } = jax;
  const { d_model: d, n_heads: heads, n_layers: layers, norm_first: preLN } = cfg;
  const dk = d / heads;
  const table = np.array(sinusoids(cfg.max_len, d, checkConfig(cfg))).reshape([cfg.max_len, d]);
  const linear = (x, p, name) => np.matmul(x, np.transpose(p[`${name}.weight`])).add(p[`${name}.bias`]);
  const norm = (x, p, name) => {
    const centred = x.ref.sub(np.mean(x, -1, { keepdims: true }));
    const variance = np.mean(np.square(centred.ref), -1, { keepdims: true });
    return centred.div(np.sqrt(variance.add(1e-5))).mul(p[`${name}.weight`]).add(p[`${name}.bias`]);
  };
  // (batch, seq, d_model) -> (batch, heads, seq, d_k)
  const split = (x) => x.reshape([x.shape[0], x.shape[1], heads, dk]).transpose([0, 2, 1, 3]);
  const keysValues = (key, p, name) => [split(linear(key.ref, p, `${name}.w_k`)), split(linear(key, p, `${name}.w_v`))];
  // key is also the value; `kv`: their projections, (batch, heads, k, d_k) each, if already made
  function attention(query, key, p, name, mask, keep, kv) {
    const q = split(linear(query, p, `${name}.w_q`));
    const [k, v] = kv ?? keysValues(key, p, name);
    const scores = np.matmul(q, k.transpose([0, 1, 3, 2])).mul(1 / Math.sqrt(dk));
    const weights = nn.softmax(np.where(mask, scores, -Infinity), -1);  // (batch, heads, q, k)
    if (keep) keep.push(weights.ref);
    const z = np.matmul(weights, v).transpose([0, 2, 1, 3]);  // (batch, q, heads, d_k)
    return linear(z.reshape([z.shape[0], z.shape[1], d]), p, `${name}.w_o`);
  }
  // Add & Norm around one sub-layer: post-LN norm(x + f(x)), pre-LN x + f(norm(x)).
  const residual = (x, p, name, f) => (preLN ? x.ref.add(f(norm(x, p, name))) : norm(x.ref.add(f(x)), p, name));
  const ffn = (p, name) => (x) => linear(nn.relu(linear(x, p, `${name}.linear1`)), p, `${name}.linear2`);
  const embed = (p, name, ids) => table.ref.slice([0, ids.shape[1]])
    .add(np.take(p[`${name}.lut.weight`], ids, 0).mul(Math.sqrt(d)));
  /** src (batch, src_len) int32, srcMask bool (batch, 1, 1, src_len) -> memory. */
  function encode(p, src, srcMask, keep) {
    let x = embed(p, "src_embed", src);
    for (let i = 0; i < layers; i += 1) {
      const name = `encoder.layers.${i}`;
      const selfAttention = (h) => attention(h.ref, h, p, `${name}.self_attn`, srcMask.ref, keep?.encoder);
      x = residual(x, p, `${name}.norm1`, selfAttention);
      x = residual(x, p, `${name}.norm2`, ffn(p, `${name}.feed_forward`));
    }
    srcMask.dispose();
    return preLN ? norm(x, p, "encoder.norm") : x;
  }
  /** tgtIn (batch, tgt_len) int32, memory, srcMask -> the logits (batch, tgt_len, vocab). */
  function decode(p, tgtIn, memory, srcMask, keep) {
    const causal = np.tril(np.ones([tgtIn.shape[1], tgtIn.shape[1]])).greater(0);
    let y = embed(p, "tgt_embed", tgtIn);
    for (let i = 0; i < layers; i += 1) {
      const name = `decoder.layers.${i}`;
      const selfAttention = (h) => attention(h.ref, h, p, `${name}.self_attn`, causal.ref, keep?.self);
      const crossAttention = (h) => attention(h, memory.ref, p, `${name}.cross_attn`, srcMask.ref, keep?.cross);
      y = residual(y, p, `${name}.norm1`, selfAttention);
      y = residual(y, p, `${name}.norm2`, crossAttention);
      y = residual(y, p, `${name}.norm3`, ffn(p, `${name}.feed_forward`));
    }
    [causal, memory, srcMask].forEach((a) => a.dispose());
    return linear(preLN ? norm(y, p, "decoder.norm") : y, p, "generator.proj");
  }
  const maskOf = (src) => src.notEqual(cfg.pad_id).reshape([src.shape[0], 1, 1, src.shape[1]]);
  const forward = (p, src, tgtIn) => decode(p, tgtIn, encode(p, src.ref, maskOf(src.ref)), maskOf(src));
  const cached = kvCache(jax, cfg, { linear, norm, keysValues, attention, residual, ffn, table });
  const model = { encode, decode, ...cached, forward, maskOf, dispose: () => table.dispose() };
  return Object.assign(model, { lossAndAccuracy: lossOf(jax, cfg, model) });
}

/** The model's lossAndAccuracy(p, src, tgtIn, tgtOut, smoothing, onMemory): F.cross_entropy(ignore_index=tgt_pad_id,
 * label_smoothing) of a batch, and its accuracy; with `onMemory`, also what it makes of the encoder's output (it
 * consumes it: referent.js's loss), third. */
function lossOf(jax, cfg, { encode, decode, maskOf }) {
  const { numpy: np, nn } = jax;
  return (p, src, tgtIn, tgtOut, smoothing, onMemory) => {
    const memory = encode(p, src.ref, maskOf(src.ref));
    const extra = onMemory?.(memory.ref);
    const logProbs = nn.logSoftmax(decode(p, tgtIn, memory, maskOf(src)), -1);  // (batch, tgt_len, vocab)
    const kept = tgtOut.ref.notEqual(cfg.tgt_pad_id).astype(np.float32);
    const right = np.argmax(logProbs.ref, -1).equal(tgtOut.ref).astype(np.float32).mul(kept.ref).sum();
    const nll = logProbs.ref.mul(nn.oneHot(tgtOut, cfg.tgt_vocab_size)).sum(-1).neg();
    const perToken = nll.mul(1 - smoothing).sub(np.mean(logProbs, -1).mul(smoothing));
    const count = kept.ref.sum();
    const accuracy = jax.lax.stopGradient(right.div(count.ref));
    return [perToken.mul(kept).sum().div(count), accuracy, ...(extra ? [extra] : [])];
  };
}

/** The loss a trainer differentiates, [value, aux]: the translation loss ([loss, [accuracy]]), or with the
 * "it" objective (referentWeight > 0, referent.js) loss + referentWeight x its loss ([sum, [accuracy, loss,
 * its loss]]); `labels` (labelArrays) only then. */
export function objectiveOf(jax, model, smoothing, referentWeight) {
  if (!(referentWeight > 0)) {
    return (p, src, tgtIn, tgtOut) => {
      const [loss, accuracy] = model.lossAndAccuracy(p, src, tgtIn, tgtOut, smoothing);
      return [loss, [accuracy]];
    };
  }
  const stop = jax.lax.stopGradient;
  return (p, src, tgtIn, tgtOut, labels) => {
    const onMemory = (memory) => referentLoss(jax, p, memory, labels, referentWeight);
    const [loss, accuracy, extra] = model.lossAndAccuracy(p, src, tgtIn, tgtOut, smoothing, onMemory);
    return [loss.ref.add(extra.ref), [accuracy, stop(loss), stop(extra)]];
  };
}

/** torch.optim.Adam (betas [beta1, beta2] and eps: the Recipe's, recipe.json) after clip_grad_norm_, one
 * jitted step over the gradients as one vector (few kernels); 1 - beta^t in float64 (jax-js's float32 pow is off).
 * With referentWeight > 0 the weights hold the read-out's too (referent.js), trained by the same Adam but left out
 * of the clip, as il.train clips the model's gradients only. */
export function trainer(jax, cfg, { smoothing = 0, clip, betas: [beta1, beta2], eps, referentWeight = 0 }) {
  const { numpy: np, tree } = jax;
  const model = transformer(jax, cfg);
  const lossAndGrads = jax.valueAndGrad(objectiveOf(jax, model, smoothing, referentWeight), { hasAux: true });
  const step = jax.jit((p, m, v, src, tgtIn, tgtOut, stepSize, correction2, ...labels) => {  // labels: with "it" only
    const [[value, [accuracy, loss, extra]], grads] = lossAndGrads(tree.ref(p), src, tgtIn, tgtOut, ...labels);
    if (extra) value.dispose();  // the sum; its parts are reported
    const [clipped, free] = [Object.keys(p).filter((k) => !isReadout(k)), Object.keys(p).filter(isReadout)];
    const flat = (names) => np.concatenate(names.map((k) => grads[k].reshape([-1])));
    const g = flat(clipped);
    const scaled = g.mul(np.minimum(np.array(clip).div(np.sqrt(np.square(g.ref).sum()).add(1e-6)), 1));
    const gs = free.length ? np.concatenate([scaled, flat(free)]) : scaled;
    const names = [...clipped, ...free];
    const m1 = m.mul(beta1).add(gs.ref.mul(1 - beta1));
    const v1 = v.mul(beta2).add(np.square(gs).mul(1 - beta2));
    const update = m1.ref.mul(stepSize).div(np.sqrt(v1.ref).div(correction2).add(eps));
    const p1 = {};
    let at = 0;
    for (const k of names) {
      p1[k] = p[k].sub(update.ref.slice([at, at + p[k].size]).reshape(p[k].shape));
      at += p[k].size;
    }
    update.dispose();
    // the translation loss, the accuracy, the weights, Adam's m and v; then the "it" loss (x referentWeight)
    return [extra ? loss : value, accuracy, p1, m1, v1, ...(extra ? [extra] : [])];
  });
  let t = 0;
  return {
    model,
    // One step on a batch {src, tgtIn, tgtOut} (int32; and `labels`, labelArrays, with the "it" objective) at
    // rate lr; consumes state {p, m, v}. [translation loss, accuracy, state, the "it" loss or null].
    update(state, batch, lr) {
      t += 1;
      const scalars = [lr / (1 - beta1 ** t), Math.sqrt(1 - beta2 ** t)].map((x) => np.array(x));
      const { src, tgtIn, tgtOut, labels } = batch;
      const [loss, accuracy, p, m, v, extra = null] = step(state.p, state.m, state.v, src, tgtIn, tgtOut, ...scalars,
        ...(labels ? [labels] : []));
      return [loss, accuracy, { p, m, v }, extra];
    },
    zeros: (p) => np.zeros([Object.values(p).reduce((n, a) => n + a.size, 0)]),  // Adam's m, v: flat
    dispose() {
      step.dispose();
      model.dispose();
    },
  };
}

/** The package's learning_rate(step, lr, warmup, schedule, total_steps) (training/schedules.py). */
export function learningRate(step, lr, warmup, schedule, total) {
  if (warmup > 0 && step < warmup) return lr * step / warmup;
  if (schedule === "noam" && warmup > 0) return lr * Math.sqrt(warmup / step);
  const progress = Math.min((step - warmup) / Math.max(total - warmup, 1), 1);
  return schedule === "cosine" ? lr * 0.5 * (1 + Math.cos(Math.PI * progress)) : lr;
}

/** jax arrays of tensors {name: {shape, data}} (a model file's, or initial weights). */
export const arrays = (jax, tensors) => Object.fromEntries(Object.entries(tensors).map(
  ([name, { shape, data }]) => [name, jax.numpy.array(data).reshape(shape)]));

/** A model from a page model file's bytes: {corpus, config (its TransformerConfig, vocabularies and
 * special ids, then `extra`: {corpus}.json), jax, net, params, srcVocab, tgtVocab}. */
export function modelFrom(jax, buffer, corpus, extra = {}) {
  const { tensors, config: c, srcTokens, tgtTokens } = readModel(buffer);
  const config = { ...c, corpus, src_tokens: srcTokens, tgt_tokens: tgtTokens, src_pad_id: c.pad_id,
    bos_id: tgtTokens.indexOf("<bos>"), eos_id: tgtTokens.indexOf("<eos>"), ...extra };
  return { corpus, config, jax, net: transformer(jax, c), params: arrays(jax, tensors),
    srcVocab: new Vocab(srcTokens), tgtVocab: new Vocab(tgtTokens) };
}
