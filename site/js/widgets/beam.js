// The beam search widget (chapter 09; params {corpus, sentence, beamSize, topBeams, alpha,
// maxBeam, maxLen}): the returned hypotheses with their scores and the beam as a tree, computed
// by window.illustrated.translate (search_beam.js: il.beam_search line by line). As the Python
// widget, a top_beams above beam_size is capped at beam_size, and says so. Its boxes in the page's
// palette (--il-kept, --il-finished, ... as book/ch09.py's figure); the figure's caption follows the
// sliders and the sentence.
import { h, s, slider } from "./dom.js";
import { liveWidget } from "./sentence.js";

const code = (text) => h("code", { text });
const [COL, ROW, W, H, PAD, INDENT] = [104, 40, 76, 32, 6, 18];
const MIN_SCALE = 0.75;  // the tree's 12 px text drawn at 9 px at the least
const LOOK = { kept: ["var(--il-kept)", "var(--il-query)"], finished: ["var(--il-finished)", "var(--il-finished-edge)"],
  dropped: ["var(--il-blank)", "var(--il-dropped-edge)", "4 3"], root: ["var(--il-off)", "var(--il-text)"] };
// A log-probability with two decimals, or as many as its first digit needs (-0.002, not -0.00).
const score = (v) => v.toFixed(Math.max(2, Math.ceil(-Math.log10(Math.abs(v) || 1))));
const key = (tokens) => tokens.join("\u241f");

function node(x, y, tokens, logProb, status, returned) {
  const [fill, stroke, dash] = LOOK[status];
  const middle = { x: x + W / 2, "text-anchor": "middle" };
  return s("g", { "data-role": "node", "data-status": status, "data-tokens": tokens.join(" "),
    "data-log-prob": logProb === null ? null : String(logProb), "data-returned": returned ? "" : null },
  s("rect", { x, y, width: W, height: H, rx: 4, style: `fill: ${fill}; stroke: ${stroke}`,
    "stroke-width": returned ? 3 : 1.2, "stroke-dasharray": dash }),
  s("text", { ...middle, y: y + 13, text: tokens.at(-1) ?? "<bos>" }),
  logProb === null ? null : s("text", { ...middle, y: y + 26, text: score(logProb) }));
}

/** One column per step, one box per candidate scored (its last word, the summed log-probability
 * of its prefix): kept in the beam, ended with <eos>, or dropped; thick: a returned translation.
 * Where the steps do not fit across `room` px (a phone), the tree is an outline: each candidate
 * on its own line below its parent, indented one step further, joined to it by an elbow that
 * runs left of every box in between (so no edge crosses a box). */
function tree(steps, hypotheses, room) {
  const returned = new Set(hypotheses.map((hyp) => key(hyp.tokens)));
  const rows = Math.max(1, ...steps.map((st) => st.candidates.length));
  // Across while it fits: the steps closer together, down to a gap of 10 px, then the whole tree
  // drawn smaller, its 12 px words down to 9 px; an outline beyond that.
  const col = Math.max(W + 10, Math.min(COL, (room - 2 * PAD - W) / steps.length));
  const down = (PAD * 2 + col * steps.length + W) * MIN_SCALE > room;
  const status = new Map();
  const children = new Map([[key([]), []]]);
  for (const st of steps) {
    const finished = new Set(st.finished.map(key));
    const kept = new Set(st.kept.map(key));
    st.candidates.forEach(({ tokens, logProb }, rank) => {
      const k = key(tokens);
      status.set(k, { tokens, logProb, rank, step: st.step,
        status: finished.has(k) ? "finished" : kept.has(k) ? "kept" : "dropped" });
      children.get(key(tokens.slice(0, -1)))?.push(k);
      children.set(k, []);
    });
  }
  const where = new Map();
  let line = 0;
  const place = (k, depth) => {  // the outline: depth-first, a line each
    where.set(k, [PAD + INDENT * depth, PAD + (H + 6) * line]);
    line += 1;
    children.get(k).forEach((child) => place(child, depth + 1));
  };
  if (down) place(key([]), 0);
  else {
    where.set(key([]), [PAD, PAD]);
    status.forEach(({ step, rank }, k) => where.set(k, [PAD + col * step, PAD + ROW * rank]));
  }
  const edges = [];
  const nodes = [node(PAD, PAD, [], null, "root", false)];
  status.forEach(({ tokens, logProb, status: fate }, k) => {
    const [x, y] = where.get(k);
    const [px, py] = where.get(key(tokens.slice(0, -1)));
    const stroke = `var(--il-${fate === "dropped" ? "dropped-edge" : "query"})`;
    const points = down ? [[px + INDENT / 2, py + H], [px + INDENT / 2, y + H / 2], [x, y + H / 2]]
      : [[px + W, py + H / 2], [x, y + H / 2]];
    edges.push(s("polyline", { points: points.map((p) => p.join(",")).join(" "), fill: "none",
      "stroke-width": 1.2, style: `stroke: ${stroke}` }));
    nodes.push(node(x, y, tokens, logProb, fate, returned.has(k)));
  });
  const right = Math.max(...[...where.values()].map(([x]) => x)) + W + PAD;
  const [width, height] = down ? [right, PAD + (H + 6) * line - 6 + PAD]
    : [PAD + col * steps.length + W + PAD, PAD + ROW * (rows - 1) + H + PAD];
  const count = (fate) => [...status.values()].filter((v) => v.status === fate).length;
  const label = `the beam search as a tree: ${steps.length} steps, ${status.size} candidates scored, ` +
    `${count("kept")} kept in the beam, ${count("finished")} finished, ${count("dropped")} dropped; ` +
    `returned: ${hypotheses.map((hyp) => hyp.tokens.join(" ")).join("; ")}`;
  const scale = Math.min(1, room / width);  // 1 for an outline: it fits by construction
  return h("div", { class: "il-scroll" }, s("svg", { class: "il-tree", width: width * scale, height: height * scale,
    viewBox: `0 0 ${width} ${height}`, "data-role": "tree", role: "img", "aria-label": label },
  edges, nodes));
}

function table(hypotheses) {
  return h("table", { class: "il-hyps", "data-role": "hypotheses" },
    h("thead", {}, h("tr", {}, ["translation", "score"].map((t) => h("th", { text: t })))),
    h("tbody", {}, hypotheses.map((hyp) => h("tr", { "data-role": "hypothesis" },
      h("td", { class: "il-tokens", "data-role": "tokens" }, hyp.tokens.map((t) => h("span", { text: t }))),
      h("td", { text: hyp.score.toFixed(4), "data-score": String(hyp.score) })))));
}

/** The enclosing figure's caption says what the widget shows now: each slider's `name` = value
 * after the code element naming it, and the sentence between the caption's quotes. */
function followCaption(element, values, sentence) {
  const caption = element.closest("figure")?.querySelector("figcaption .caption-text");
  if (!caption) return;
  for (const code of caption.querySelectorAll("code")) {
    const value = values[code.textContent.trim()];
    const after = code.nextSibling;
    if (value !== undefined && after?.nodeType === 3) after.data = after.data.replace(/^ = [\d.]+/, ` = ${value}`);
  }
  for (const node of caption.childNodes) {
    if (node.nodeType === 3) node.data = node.data.replace(/\u201c[^\u201d]*\u201d/, `\u201c${sentence}\u201d`);
  }
}

export function mount(element, api) {
  const p = JSON.parse(element.dataset.params);
  const state = { beamSize: p.beamSize, topBeams: p.topBeams, alpha: p.alpha };
  const sizes = Array.from({ length: p.maxBeam }, (_, i) => String(i + 1));
  const alphas = Array.from({ length: 21 }, (_, i) => (i / 10).toFixed(1));
  const set = (name, value) => {
    state[name] = value;
    live.run();
  };
  const live = liveWidget(element, api, p, {
    controls: [
      slider(code("beam_size"), sizes, state.beamSize - 1, (i) => set("beamSize", i + 1), "beam_size"),
      slider(code("top_beams"), sizes, state.topBeams - 1, (i) => set("topBeams", i + 1), "top_beams"),
      slider(code("alpha"), alphas, Math.round(state.alpha * 10), (i) => set("alpha", i / 10), "alpha")],
    settings: () => ({ ...state, topBeams: Math.min(state.topBeams, state.beamSize) }),
    describe: (corpus, sentence, { beamSize, topBeams, alpha }) => `beam search of '${sentence}' ` +
      `(the ${corpus} model) as a tree: beam_size=${beamSize}, top_beams=${topBeams}, alpha=${alpha}`,
    compute: (corpus, sentence, settings) => {
      followCaption(element, { beam_size: settings.beamSize, top_beams: settings.topBeams, alpha: settings.alpha },
        sentence);
      return api.translate(corpus, sentence, { ...settings, maxLen: p.maxLen, returnSteps: true });
    },
    said: ({ hypotheses }, { beamSize }) => `beam_size ${beamSize}: ${hypotheses.length} ` +
      `translation${hypotheses.length === 1 ? "" : "s"} returned, the best "${hypotheses[0].tokens.join(" ")}" ` +
      `scoring ${hypotheses[0].score.toFixed(4)}.`,
    draw(result) {
      const read = state.topBeams <= state.beamSize ? null
        : h("p", {}, code(`top_beams=${state.topBeams}`), " is capped at ", code(`beam_size=${state.beamSize}`),
          `: a beam of ${state.beamSize} holds at most ${state.beamSize} ` +
          `translation${state.beamSize === 1 ? "" : "s"}.`);
      const n = state.beamSize;
      const caption = h("p", { "data-role": "tree-caption", text: `Each step of the tree ranks the best 2 \u00d7 ` +
        `beam_size = ${2 * n} extensions: those among the first ${n} that end with <eos> are finished, the best ` +
        `${n} of the others stay in the beam. The search stops when no hypothesis in the beam can still ` +
        `beat the returned ones, or after ${p.maxLen} tokens: the boxes kept at the last step are not ` +
        "extended." + (state.alpha > 0 ? " The boxes show summed log-probabilities; " +
        "the table's scores are those divided by the length penalty." : "") });
      return [h("p", { text: "The returned translations, best first:" }), table(result.hypotheses), read,
        caption, tree(result.steps, result.hypotheses, element.clientWidth)];
    },
  });
}
