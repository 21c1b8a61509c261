// The page's training batches: shuffled epochs as il.train's (other random numbers), padded, and with the "it"
// objective each pair's label (referent.js).
import { ids } from "./graphs.js";
import { labelArrays } from "./referent.js";

/** A function giving the next batch: batchSize pairs of shuffled epochs (Fisher-Yates), padded to `widths`:
 * {src, tgtIn, tgtOut}, and with the "it" objective (`referent`) their labels (referent.js's labelArrays). */
export function batches(np, data, cfg, batchSize, random, widths, referent) {
  const order = [];
  return () => {
    if (order.length < batchSize) {
      const epoch = data.train.map((_, i) => i);
      for (let i = epoch.length - 1; i >= 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [epoch[i], epoch[j]] = [epoch[j], epoch[i]];
      }
      for (const i of epoch) order.push(i);  // not push(...epoch): 200,000 arguments overflow the stack
    }
    const rows = order.splice(0, batchSize);
    const pairs = rows.map((i) => data.train[i]);
    const target = (tokens) => ids(np, tokens, widths[1], cfg.tgt_pad_id);
    return { src: ids(np, pairs.map(([s]) => s), widths[0], cfg.pad_id),
      tgtIn: target(pairs.map(([, t]) => [data.bos_id, ...t])),
      tgtOut: target(pairs.map(([, t]) => [...t, data.eos_id])),
      labels: referent ? labelArrays(np, rows.map((i) => data.referent[i])) : undefined };
  };
}

