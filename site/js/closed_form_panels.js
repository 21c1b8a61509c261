// Live widget for pictures computed in advance (a model's attention, a diagram per setting):
// one control per setting, and the page shows the precomputed panel of the chosen combination.
// Nothing is recomputed here; closed_form_live.panels_live embeds the panels as <img hidden
// data-src>; mounting gives each its src.
import { setup, slider, select, live } from "./closed_form_dom.js";

export function mount(root) {
  const ui = setup(root);
  const { controls, panels } = ui.params;
  const inputs = controls.map((c) => {
    if (c.kind === "select") return select(ui, c.name, c.labels, c.value);
    return slider(ui, { name: c.name, min: 0, max: c.labels.length - 1, step: 1, value: c.value,
      show: (i) => c.labels[i] });
  });
  const images = [...root.querySelectorAll("img.il-live-panel")];
  root.appendChild(ui.controls);
  for (const img of images) {
    img.src = img.dataset.src;  // data: URIs, decoded in the page (nothing is fetched)
    root.appendChild(img);
  }
  live(inputs, () => {
    const key = inputs.map((input) => input.value).join("-");
    const shown = String(panels[key]);
    images.forEach((img) => { img.hidden = img.dataset.panel !== shown; });
    root.dataset.shown = key;
  });
}
