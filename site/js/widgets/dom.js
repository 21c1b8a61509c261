// The one DOM toolkit of the book's widgets: elements, SVG elements, labelled controls.
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

/** How wide `t` is drawn `size` units high (bold or not) in the page's font, in units. */
export const measure = (() => {
  let context;
  return (t, size, weight = "normal") => {
    context ??= document.createElement("canvas").getContext("2d");
    context.font = `${weight} ${size}px ${window.getComputedStyle(document.body).fontFamily}`;
    return context.measureText(t).width;
  };
})();

/** An SVG element, same arguments as h; a fill or stroke given as a CSS custom property (the page's
 * palette, "var(--il-value)") is set as a style, which, unlike SVG's attributes, reads it. */
export function s(tag, attrs = {}, ...children) {
  const paint = ["fill", "stroke"].filter((name) => String(attrs[name]).startsWith("var("));
  const style = paint.map((name) => `${name}: ${attrs[name]}`).concat(attrs.style ?? []).join("; ");
  const rest = Object.fromEntries(Object.entries(attrs).filter(([name]) => !paint.includes(name)));
  return fill(document.createElementNS(SVG_NS, tag), style ? { ...rest, style } : rest, children);
}

/** A labelled <select> over [value, text] options, onChange(value) on every change; the control keeps
 * its element (and the keyboard focus) when the widget redraws around it. */
export function select(label, options, value, onChange, name) {
  const control = h("select", { "data-control": name, onchange: () => onChange(control.value) });
  const element = h("label", {}, label, control);
  setOptions(element, options, value);
  return element;
}

/** New [value, text] options for a select() (a model with more heads): the same element. */
export function setOptions(label, options, value) {
  const control = label.querySelector("select");
  control.replaceChildren(...options.map(([v, text]) => h("option", { value: v, text })));
  control.value = String(value);
}

/** A labelled range slider over 0..labels.length-1 that shows labels[index] beside it. */
export function slider(label, labels, index, onChange, name) {
  const readout = h("output", { text: labels[index], "aria-live": "polite" });
  const control = h("input", { type: "range", min: 0, max: labels.length - 1, step: 1,
    "data-control": name, "aria-valuetext": labels[index] });
  control.value = String(index);
  control.addEventListener("input", () => {
    const i = Number(control.value);
    readout.textContent = labels[i];
    control.setAttribute("aria-valuetext", labels[i]);
    onChange(i);
  });
  return h("label", {}, label, control, readout);
}
