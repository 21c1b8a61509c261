// What the training widget (train.js) says before Train: each field's problem beside it; that WebAssembly is
// needed; that a phone is slower; a big model's time and the reader's own pairs' estimate (engine/estimate.js),
// from a step measured on the reader's device. And the run's progress kept in view.
import { problems } from "./fields.js";
import { pairsEstimate } from "../engine/estimate.js";

/** Each field's problem beside it, all at once, as it is typed; Train waits until there is none. */
export function check(w) {
  const bad = problems(w.form.options(), w.recipe);
  w.form.numbers.show(bad);
  return bad;
}

// The reader's pairs' estimate: those trained on (the test share held out), the recipe's batch.
function ownEstimate(w, count, o, msPerStep) {
  const test = Math.min(Math.max(Math.round(w.recipe.pairs.test_fraction * count), 1), count - 1);
  return pairsEstimate({ trainPairs: count - test, steps: o.steps, msPerStep, maxSteps: w.recipe.limits.steps[1],
    batchSize: w.recipe.pairs.train_settings.batch_size });
}

// What a measured step says: the reader's pairs' estimate, or a big model's time.
function measured(w, o, own, msPerStep) {
  if (own) {
    const estimate = ownEstimate(w, own.pairs.length, o, msPerStep);
    w.warning.dataset.tooLarge = String(estimate.tooLarge);
    return estimate.text;
  }
  return `d_model ${o.dModel} with ${o.nLayers} layers: about ${msPerStep.toFixed(0)} ms per step on this device ` +
    `(measured), so ${o.steps} steps take about ${(o.steps * msPerStep / 1000).toFixed(0)} s.`;
}

// WebAssembly lacking, or a phone: said at once.
function device(w) {
  const lacking = typeof WebAssembly !== "object";
  w.buttons.forEach((b) => (b.disabled = lacking));
  w.warning.textContent = lacking
    ? "Training needs WebAssembly, which this browser lacks: open the chapter in Colab."
    : window.matchMedia?.("(pointer: coarse)").matches
      ? "On a phone, training runs slower and uses the battery; it pauses when you leave the tab." : "";
  return !lacking;
}

// The reader's pairs without a problem, or a model bigger than the recipes': a step is measured.
const worthMeasuring = (o, own) => (own ? !own.problems.length : o.dModel > 64 || o.nLayers > 2);

/** Said before Train; a step is measured (3 steps of illustrated.train) for a big model or the reader's pairs. */
export function warn(w) {
  const o = w.form.options();
  delete w.warning.dataset.tooLarge;
  const own = o.corpus === "pairs" ? w.pairs.read() : null;  // the reader's pairs: always an estimate
  if (!device(w) || !w.state.engaged || Object.keys(check(w)).length || !worthMeasuring(o, own)) return;
  const key = JSON.stringify({ o, pairs: own?.pairs.length, first: own?.pairs[0] });
  w.state.measured = key;
  w.api.train({ ...o, ...(own ? { pairs: own.pairs } : {}), measure: true }).then(({ msPerStep }) => {
    if (w.state.measured === key) w.warning.textContent += ` ${measured(w, o, own, msPerStep)}`;
  }, () => {});
}

/** The run's progress (status line and chart) scrolled into view when the Train button left it below the fold. */
export function inView(element) {
  const box = element.getBoundingClientRect();
  if (box.top < 0 || box.top > window.innerHeight * 0.6) element.scrollIntoView?.({ block: "start" });
}
