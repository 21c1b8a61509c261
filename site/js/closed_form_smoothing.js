// Live widget of chapter 08: label smoothing. Each one-hot target keeps 1 - epsilon and every
// one of the V words gets epsilon / V (PyTorch's F.cross_entropy(label_smoothing=epsilon)), the
// numbers of il.reference.smooth_labels; a perfect model's loss is then the target's entropy.
import { setup, slider, live, table, bars, fixed } from "./closed_form_dom.js";

// One smoothed target over V words: (1 - epsilon) one-hot(id) + epsilon / V.
export function smoothed(id, V, epsilon) {
  return Array.from({ length: V }, (_, i) => (i === id ? 1 - epsilon : 0) + epsilon / V);
}

// Entropy in nats: -sum p log p, with 0 log 0 = 0.
export function entropy(p) {
  return -p.reduce((sum, q) => sum + (q > 0 ? q * Math.log(q) : 0), 0);
}

export function mount(root) {
  const ui = setup(root);
  const { target_ids, tokens, epsilon } = ui.params;
  const smallest = Math.max(...target_ids) + 1;
  const eps = slider(ui, { name: "label_smoothing ε", min: 0, max: 1, step: 0.01,
    value: epsilon, show: (v) => fixed(v, 2) });
  const size = slider(ui, { name: "vocabulary size V", min: smallest, max: 200, step: 1,
    value: tokens.length });
  const out = ui.el("div", root);
  live([eps, size], () => {
    const [e, V] = [Number(eps.value), Number(size.value)];
    const names = Array.from({ length: V }, (_, i) => tokens[i] ?? `word ${i}`);
    const rows = target_ids.map((id) => smoothed(id, V, e));
    out.replaceChildren();
    table(ui, out, [
      ["correct", "correct word: 1 − ε + ε/V", [fixed(1 - e + e / V)]],
      ["other", "every other word: ε/V", [fixed(e / V)]],
      ["entropy", "lowest possible loss (entropy of the target, nats)", [fixed(entropy(rows[0]))]],
    ]);
    ui.el("p", out, {}, `target of position 1 ("${names[target_ids[0]]}") over the ${V} words:`);
    bars(ui, out, rows[0], names, { highlight: [target_ids[0]], width: 640, height: 110 });
    if (V <= 16) {
      table(ui, out, rows.map((row, p) => [`position-${p}`, `position ${p + 1}: ` +
        `${names[target_ids[p]]}`, row.map((v) => fixed(v))]), names);
    }
  });
}
