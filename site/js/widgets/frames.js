// An interactive figure of the static book (src/illustrated/book/interactive.py): every picture
// was drawn at build time; the controls choose which one shows, and "play" steps the first one. A line
// a screen reader announces (aria-live) says what the picture shown now is (its alt text).
import { h, select, slider } from "./dom.js";

export function mount(element) {
  const { controls, frames, play } = JSON.parse(element.dataset.params);
  const state = controls.map((c) => c.value);
  const images = [...element.querySelectorAll(".il-frame")];
  const said = h("p", { class: "il-said", "data-role": "said", "aria-live": "polite" });
  const show = (announce = true) => {
    const frame = frames[state.join("-")];
    for (const img of images) img.hidden = Number(img.dataset.frame) !== frame;
    element.dataset.shown = state.join("-");
    const shown = images.find((img) => !img.hidden)?.querySelector("img");
    if (announce) said.textContent = shown?.alt ?? "";
  };
  const inputs = controls.map((c, k) => {
    const set = (v) => {
      state[k] = Number(v);
      show();
    };
    return c.kind === "select"
      ? select(c.name, c.labels.map((text, i) => [String(i), text]), c.value, set, c.name)
      : steadyReadout(slider(c.name, c.labels, c.value, set, c.name), c.labels);
  });
  const row = h("div", { class: "il-controls" }, inputs);
  if (play) row.prepend(player(controls[0], inputs[0].querySelector("input, select")));
  element.prepend(row);
  element.append(said);
  show(false);
}

/** A slider's readout holding the room of its widest label (every label laid in one grid cell,
 * the others invisible, none wrapped), so the controls row keeps its height as the slider moves. */
export function steadyReadout(control, labels) {
  const readout = control.querySelector("output");
  const room = h("span", { style: "display: inline-grid; white-space: nowrap" },
    labels.map((text) => h("span", { "aria-hidden": "true", style: "visibility: hidden", text })));
  readout.replaceWith(room);
  room.prepend(readout);
  for (const cell of room.children) cell.style.gridArea = "1 / 1";
  return control;
}

/** A ▶ button that steps control's input to its end (from the start if it is there); ⏸ stops. */
export function player(control, input) {
  let timer = null;
  const button = h("button", { type: "button", class: "il-play", text: "▶ play",
    "aria-label": `play through ${control.name}` });
  const stop = () => {
    window.clearInterval(timer);
    timer = null;
    button.textContent = "▶ play";
  };
  const set = (value) => {
    input.value = String(value);
    input.dispatchEvent(new window.Event(input.tagName === "SELECT" ? "change" : "input"));
  };
  const step = () => {
    if (Number(input.value) + 1 >= control.labels.length) stop();
    else set(Number(input.value) + 1);
  };
  button.addEventListener("click", () => {
    if (timer !== null) return stop();
    if (Number(input.value) >= control.labels.length - 1) set(0);
    button.textContent = "‖ pause";  // U+2016: in every common font (U+23F8 is not)
    timer = window.setInterval(step, 900);
  });
  return button;
}
