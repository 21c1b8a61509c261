// After a run with the "it" objective offered (on or off), the training widget shows where each encoder head of the
// model just trained sends "it" in both of chapter 03's sentences side by side: "too tired" ("it" is the animal) and
// "too wide" ("it" is the street). A head that reads the adjective picks the animal in the first and the street in
// the second; one that says "animal" in both only looks right on the first sentence.
import { h } from "./dom.js";

export const SENTENCES = [["too tired", "the animal didn't cross the street because it was too tired", "animal"],
  ["too wide", "the animal didn't cross the street because it was too wide", "street"]];

// "animal 0.78 · street 0.10", the larger in bold, for one head's row of "it".
function cell(row, tokens, right) {
  const [a, s] = ["animal", "street"].map((w) => row[tokens.indexOf(w)]);
  const picked = a >= s ? "animal" : "street";
  return h("td", { "data-picked": picked, class: picked === right ? "il-it-right" : "il-it-wrong" },
    ...["animal", "street"].flatMap((w, i) => [i ? " · " : "", w === picked
      ? h("strong", { text: `${w} ${(w === "animal" ? a : s).toFixed(2)}` })
      : `${w} ${(w === "animal" ? a : s).toFixed(2)}`]));
}

/** A figure: per encoder layer and head, the weight "it" gives "animal" and "street" in each sentence, from
 * illustrated.translate("trained", ...)'s encoderAttention [layer][head][query][key]; `run`: the run's name. */
export async function itPair(api, run) {
  const results = await Promise.all(SENTENCES.map(([, sentence]) => api.translate("trained", sentence)));
  const tokens = results[0].sourceTokens;
  const it = tokens.indexOf("it");
  const rows = results[0].encoderAttention.flatMap((layer, l) => layer.map((_, head) => {
    const cells = results.map((r, i) => cell(r.encoderAttention[l][head][it], r.sourceTokens, SENTENCES[i][2]));
    const reads = cells.every((c) => c.className === "il-it-right");
    return h("tr", { "data-role": "it-head", "data-reads": String(reads) },
      h("th", { scope: "row", text: `layer ${l}, head ${head}${reads ? " ✓" : ""}` }), ...cells);
  }));
  const reading = rows.filter((r) => r.dataset.reads === "true").map((r) => r.firstChild.textContent.slice(0, -2));
  return h("figure", { class: "il-it-pair", "data-role": "it-pair" },
    h("figcaption", { text: `Your ${run} model: where each encoder head sends “it”, both sentences side by side. ` +
      "“It” is the animal when it was too tired, the street when it was too wide; a head that reads the adjective " +
      `picks each (✓). ${reading.length ? `Here: ${reading.join("; ")}.`
        : "Here no head does: each says the same noun in both sentences, or the wrong one."}` }),
    h("div", { class: "il-scroll" }, h("table", {},
      h("thead", {}, h("tr", {}, h("th", { text: "head" }),
        ...SENTENCES.map(([short]) => h("th", { scope: "col", text: `“…it was ${short}”` })))),
      h("tbody", {}, rows))));
}
