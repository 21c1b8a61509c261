// Live widget for pictures computed in advance (a model's attention, a diagram per setting):
// one control per setting, and the page shows the precomputed panel of the chosen combination.
// Nothing is recomputed here; closed_form_live.panels_live embeds the panels as <img hidden
// data-src>, and a panel gets its src when first shown.
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
  images.forEach((img) => root.appendChild(img));
  live(inputs, () => {
    const key = inputs.map((input) => input.value).join("-");
    const shown = String(panels[key]);
    for (const img of images) {
      img.hidden = img.dataset.panel !== shown;
      if (!img.hidden && !img.getAttribute("src")) img.src = img.dataset.src;
    }
    root.dataset.shown = key;
  });
}
