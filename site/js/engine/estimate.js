// How long the reader's own pairs take to train in the page, said before Train (widgets/train.js): from the
// number of pairs trained on, the steps, the batch and a step's time measured on the reader's device.

/** The most seconds one pass over the training pairs may take for the page to train them. */
export const PAGE_BUDGET_S = 300;

const count = (n) => Math.round(n).toLocaleString("en");
const duration = (s) => (s < 90 ? `${Math.ceil(s)} s` : `${(s / 60).toFixed(s < 600 ? 1 : 0)} min`);

/** {passes (times each training pair is shown), seconds (the run), passSteps, passSeconds (one pass over the
 * pairs), tooLarge (one pass needs more than `maxSteps` steps or `budget` seconds), text} for `trainPairs` pairs
 * trained on, `steps` steps of `batchSize` pairs, `msPerStep` ms a step. */
export function pairsEstimate({ trainPairs, steps, batchSize, msPerStep, maxSteps, budget = PAGE_BUDGET_S }) {
  const passes = (steps * batchSize) / trainPairs;
  const seconds = (steps * msPerStep) / 1000;
  const passSteps = Math.ceil(trainPairs / batchSize);
  const passSeconds = (passSteps * msPerStep) / 1000;
  const tooLarge = passSteps > maxSteps || passSeconds > budget;
  const per = `at ${msPerStep.toFixed(0)} ms per step (measured on this device)`;
  const text = tooLarge
    ? `Too large to train in the page in reasonable time: ${count(trainPairs)} pairs to train on, ${batchSize} ` +
      `a step, need ${count(passSteps)} steps for one pass over them, about ${duration(passSeconds)} ${per}` +
      `${passSteps > maxSteps ? `; the page allows at most ${count(maxSteps)} steps` : ""}. These ` +
      `${count(steps)} steps show each pair ${passes.toFixed(2)} times. Train them with ` +
      "python -m illustrated train --pairs FILE.tsv instead."
    : `${count(trainPairs)} pairs to train on: ${count(steps)} steps of ${batchSize} show each about ` +
      `${passes < 10 ? passes.toFixed(1) : count(passes)} times, about ${duration(seconds)} ${per}.`;
  return { passes, seconds, passSteps, passSeconds, tooLarge, text };
}
