// A link that reproduces an experiment: the training widget's settings in the page's URL fragment as field=value
// pairs named as in recipe.json (#corpus=reverse&steps=300&lr=0.003...), written as the reader changes them
// (history.replaceState: no jump, no new history entry); a page opened with such a fragment restores them, a
// field the widget does not know or a value it refuses left at its default and named in one line; "Copy link".
import { h } from "./dom.js";
import { checkRange } from "../engine/options.js";

/** Whether a fragment holds settings (a heading's anchor, "#the-playground", does not). */
export const isSettings = (hash) => hash.length > 1 && hash.includes("=");

/** The fragment of `values` ({name: value}, recipe.json's names): "#corpus=post&steps=100&...". */
export const linkOf = (values) => `#${new URLSearchParams(Object.entries(values)
  .filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]))}`;

// One value read from the link as its field takes it, or an Error saying what the field expects.
function valueOf(field, text, recipe, corpora) {
  if (field.name === "corpus") {
    if (!corpora.includes(text)) throw new Error(`expected one of ${corpora.join(", ")}`);
    return text;
  }
  if (field.control === "menu") {
    const values = field.options.map(([v]) => v);
    if (!values.includes(text)) throw new Error(`expected ${values.join(" or ")}`);
    return text;
  }
  const value = text.trim() === "" ? NaN : Number(text);
  try {
    checkRange(field.name, value, recipe.limits[field.name]);
  } catch (error) {
    throw new Error(error.message.slice(field.name.length + 2).replace(/, got .*$/, ""), { cause: error });
  }
  return value;
}

/** {values, ignored}: the settings a fragment holds, by recipe.json's fields (the corpus one of `corpora`, a
 * number within the page's limits, a menu's value one it offers), and what was left out, each in words. */
export function readLink(hash, recipe, corpora) {
  const [values, ignored] = [{}, []];
  const byName = Object.fromEntries(recipe.fields.map((f) => [f.name, f]));
  for (const [key, text] of new URLSearchParams(hash.replace(/^#/, ""))) {
    if (!(key in byName)) {
      ignored.push(`unknown field ${JSON.stringify(key)}`);
      continue;
    }
    try {
      values[key] = valueOf(byName[key], text, recipe, corpora);
    } catch (error) {
      ignored.push(`${key}=${text} (${error.message})`);
    }
  }
  return { values, ignored };
}

/** The sentence a link's ignored fields are said in ("" when none). */
export const ignoredLine = (ignored) => (ignored.length
  ? `From the link, ignored (left at the recipe's value): ${ignored.join("; ")}.` : "");

/** {element (Copy link, the link itself and the line about the link), write(values, shownOnly), say(text)}:
 * write puts the settings in the page's address (only in the link shown with `shownOnly`). */
export function linkBox() {
  const note = h("p", { class: "il-notes", "data-role": "link-note", "aria-live": "polite" });
  const shown = h("input", { type: "text", readonly: "", "data-role": "link", "aria-label": "this experiment's link",
    class: "il-link" });
  const copy = h("button", { type: "button", class: "il-button", "data-role": "copy-link", text: "Copy link",
    onclick: async () => {
      shown.select();
      try {
        await window.navigator.clipboard.writeText(shown.value);
        note.textContent = "Link copied: it opens this page with these settings.";
      } catch {
        note.textContent = "Select the link beside the button and copy it (this browser refused the clipboard).";
      }
    } });
  function write(values, shownOnly) {
    const url = new URL(window.location.href);
    url.hash = linkOf(values);
    if (!shownOnly) window.history.replaceState(window.history.state, "", url.hash);
    shown.value = url.href;
  }
  const say = (text) => {
    note.textContent = text;
  };
  return { element: h("div", { class: "il-controls il-link-row" }, copy, shown, note), write, say };
}

/** The page's first training widget (w: train.js's) owns the page's link: opened with one, it takes its
 * settings (what it refuses named in one line); then every change is written into it. */
export function follow(w) {
  w.owner = w.element === window.document.querySelector("[data-il-widget=train]");
  if (w.owner && isSettings(window.location.hash)) {
    const { values, ignored } = readLink(window.location.hash, w.recipe, w.p.corpora);
    if (values.corpus) w.form.fill(values.corpus);
    w.form.set(values);
    w.pairs.show(values.corpus === "pairs");
    w.link.say([values.corpus === "pairs" ? "This link was made with the reader's own pairs, which a link does not " +
      "hold: type or paste them into the box to train." : "", ignoredLine(ignored)].filter(Boolean).join(" "));
  }
  w.link.write(w.form.values(), true);
}

/** A setting changed: its link written (the owner's into the page's address), then onward. */
export const changed = (w, then) => () => {
  w.link.write(w.form.values(), !w.owner);
  then();
};
