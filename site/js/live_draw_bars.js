// The decoder's output distribution at every step as bars: the topK most probable next words,
// the chosen one in red; data-prob keeps each full probability (the tests read it).
import { h } from "./live_dom.js";

/**
 * @param {Array<Array<{token: string, prob: number}>>} steps [step][rank], best first
 * @param {string[]} chosen the word each step produced
 * @returns {HTMLElement}
 */
export function stepBars(steps, chosen) {
  return h("div", { class: "il-dists", "data-role": "distributions" }, steps.map((ranks, t) =>
    h("div", { class: "il-dist", "data-step": String(t + 1) },
      h("h5", { text: `step ${t + 1}: ${chosen[t]}` }),
      ranks.map(({ token, prob }) => h("div", {
        class: token === chosen[t] ? "il-bar il-chosen" : "il-bar",
        "data-token": token, "data-prob": String(prob) },
      h("span", { text: token }), h("div", { style: `width: ${(100 * prob).toFixed(1)}%` }),
      h("span", { text: prob.toFixed(3) }))))));
}
