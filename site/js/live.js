// The live widgets of a page: every element with a data-illustrated-live attribute (written by
// src/illustrated/widgets/live.py) is replaced by its widget, drawn from the shipped models
// through window.illustrated. Imported by api.js on every page; the widget modules are imported
// only by pages that have such an element.
import { LIVE_CSS } from "./live_style.js";

const document = window.document;

/** data-illustrated-live value -> the module that mounts it (its export `mount(element, api)`). */
export const WIDGETS = { translate: "./live_translate.js", beam: "./live_beam.js" };

function showError(element, error) {
  const line = document.createElement("p");
  line.className = "illustrated-live-error";
  line.textContent = `The live widget could not start: ${error.message}`;
  element.replaceChildren(line);
}

/**
 * Mount every live widget container of the page (once each).
 * @param {object} api window.illustrated
 * @returns {Promise<void>[]} one per container, settled when it is drawn (or showed its error)
 */
export function mountLiveWidgets(api) {
  const containers = [...document.querySelectorAll("[data-illustrated-live]:not([data-mounted])")];
  if (containers.length && !document.getElementById("illustrated-live-css")) {
    const style = document.createElement("style");
    style.id = "illustrated-live-css";
    style.textContent = LIVE_CSS;
    document.head.append(style);
  }
  return containers.map((element) => {
    element.dataset.mounted = "";
    const kind = element.dataset.illustratedLive;
    if (!Object.hasOwn(WIDGETS, kind)) {
      showError(element, new Error(`unknown widget ${JSON.stringify(kind)}`));
      return Promise.resolve();
    }
    return import(WIDGETS[kind]).then((module) => module.mount(element, api))
      .catch((error) => showError(element, error));
  });
}
