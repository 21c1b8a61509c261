// The page's questions (src/illustrated/book/quiz.py writes them): an exercise checked in the page,
// and a prediction read back after its experiment. Keyboard: Tab to a choice, arrows between choices,
// Enter or Space on the button; the verdict goes to an aria-live line. A prediction tied to runs of
// the trainer is read back when each named run has ended (the trainer's "illustrated:run-end" event,
// detail {runName, losses, accuracy}).
const RUN_END = "illustrated:run-end";

const chosen = (element) => element.querySelector("input[type=radio]:checked");
const choiceText = (input) => input.closest("label").textContent.trim();
const number = (text) => Number.parseFloat(text.replace(",", ".").replace(/[^0-9eE+\-.]/g, ""));

function say(element, text) {
  const line = element.querySelector(".il-quiz-result");
  line.textContent = text;
}

function mountQuestion(element) {
  const answer = Number(element.dataset.answer);
  const tolerance = Number(element.dataset.tolerance ?? 0);
  const field = element.querySelector("input[type=text]");
  const check = () => {
    if (field) {
      const value = number(field.value);
      if (!Number.isFinite(value)) return say(element, "Type a number first.");
      const right = Math.abs(value - answer) <= tolerance + 1e-12;
      element.dataset.verdict = right ? "right" : "wrong";
      return say(element, right ? `Right: ${field.value.trim()}.`
        : `Not quite: ${field.value.trim()} is not it. Try again, or open the solution.`);
    }
    const input = chosen(element);
    if (!input) return say(element, "Choose an answer first.");
    const right = Number(input.value) === answer;
    element.dataset.verdict = right ? "right" : "wrong";
    return say(element, right ? `Right: ${choiceText(input)}.`
      : `Not quite: “${choiceText(input)}” is not it. Try again, or open the solution.`);
  };
  element.querySelector(".il-quiz-check").addEventListener("click", check);
  field?.addEventListener("keydown", (event) => {
    if (event.key === "Enter") check();
  });
}

const finalLoss = (detail) => (detail.losses?.length ? detail.losses.at(-1).toFixed(3) : "?");
const accuracyText = (detail) => (Number.isFinite(detail.accuracy)
  ? `, ${(100 * detail.accuracy).toFixed(1)} % exact` : "");

function mountPrediction(element) {
  const answer = Number(element.dataset.answer);
  const runs = (element.dataset.runs || "").split("|").filter(Boolean);
  const ended = new Map();
  let prediction = null;
  const button = element.querySelector(".il-quiz-check");
  const compare = runs.length ? null : Object.assign(window.document.createElement("button"),
    { type: "button", className: "il-quiz-compare", textContent: "Compare with the result", disabled: true });
  compare && button.after(" ", compare);
  function readBack() {
    const numbers = runs.map((name) => `${name}: loss ${finalLoss(ended.get(name))}${accuracyText(ended.get(name))}`);
    const right = element.querySelectorAll("input[type=radio]")[answer];
    const verdict = prediction === null ? "You made no prediction."
      : Number(prediction.value) === answer ? `You predicted “${choiceText(prediction)}”: the result bears it out.`
        : `You predicted “${choiceText(prediction)}”; the result says “${choiceText(right)}”.`;
    element.dataset.verdict = prediction === null ? "none" : Number(prediction.value) === answer ? "right" : "wrong";
    say(element, [numbers.length ? `Your runs: ${numbers.join("; ")}.` : "", verdict,
      "Open “What the experiment shows” for what to look for."].filter(Boolean).join(" "));
    element.querySelector(".il-quiz-solution").open = true;
  }
  button.addEventListener("click", () => {
    const input = chosen(element);
    if (!input) return say(element, "Choose what you expect first.");
    prediction = input;
    element.dataset.predicted = input.value;
    say(element, `Your prediction: “${choiceText(input)}”. Now run the experiment` +
      (runs.length ? "; this line reads your runs back when they end." : ", then compare."));
    if (compare) compare.disabled = false;
  });
  compare?.addEventListener("click", readBack);
  if (!runs.length) return;
  window.document.addEventListener(RUN_END, (event) => {
    const detail = event.detail ?? {};
    const parts = String(detail.runName ?? "").split(", ");
    const name = runs.find((r) => parts.includes(r));
    if (!name) return;
    ended.set(name, detail);
    if (runs.every((r) => ended.has(r))) readBack();
  });
}

export function mountQuizzes(root) {
  for (const element of (root ?? window.document).querySelectorAll("[data-il-quiz]:not([data-mounted])")) {
    element.dataset.mounted = "";
    (element.dataset.ilQuiz === "predict" ? mountPrediction : mountQuestion)(element);
  }
}

mountQuizzes();
