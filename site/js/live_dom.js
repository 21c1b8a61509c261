// Small DOM builders for the live widgets: elements, SVG elements, labelled selects and sliders.
const document = window.document;
const SVG_NS = "http://www.w3.org/2000/svg";

function fill(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) element.setAttribute(name, value);
  }
  element.append(...children.flat().filter((c) => c !== null && c !== undefined));
  return element;
}

/** An HTML element: h("p", {class: "x", text: "hi", onclick: f}, child, ...). */
export function h(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, same arguments as h. */
export function s(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/**
 * A labelled <select>.
 * @param {string|Node} label @param {Array<[string, string]>} options [value, text]
 * @param {string} value the selected one @param {function(string): void} onChange
 * @param {string} name its data-control name (the tests find controls by it)
 */
export function select(label, options, value, onChange, name) {
  const control = h("select", { "data-control": name, onchange: () => onChange(control.value) },
    options.map(([v, text]) => h("option", { value: v, text, selected: v === String(value) })));
  control.value = String(value);
  return h("label", {}, label, control);
}

/**
 * A labelled range slider with its value shown beside it.
 * @param {string|Node} label @param {{min: number, max: number, step: number, value: number}} range
 * @param {function(number): void} onChange @param {string} name its data-control name
 */
export function slider(label, { min, max, step, value }, onChange, name) {
  const readout = h("output", { text: String(value) });
  const control = h("input", { type: "range", min, max, step, value, "data-control": name });
  control.value = String(value);
  control.addEventListener("input", () => {
    readout.textContent = control.value;
    onChange(Number(control.value));
  });
  return h("label", {}, label, control, readout);
}

/** Calls fn after `ms` of quiet (the last call wins); .cancel() drops a pending call. */
export function debounce(fn, ms) {
  let timer = null;
  const later = (...args) => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => fn(...args), ms);
  };
  later.cancel = () => window.clearTimeout(timer);
  return later;
}
