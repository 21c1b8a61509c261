// What every live widget does around a computation: run it when asked, show that it runs, draw
// only the latest result (a reader types faster than a model decodes), show errors by name.
// The container's data-state ("busy", "ready", "error") and data-shown (the input of what is
// drawn) let a test wait for the page as a reader would.

/**
 * @param {HTMLElement} element the widget's container (holds a [data-role=status] element)
 * @param {function(any): Promise<any>} compute @param {function(any): void} draw
 * @returns {function(any): Promise<void>} run(input)
 */
export function runner(element, compute, draw) {
  let latest = 0;
  return async (input) => {
    latest += 1;
    const mine = latest;
    const status = element.querySelector("[data-role=status]");
    element.dataset.state = "busy";
    status.classList.remove("il-error");
    status.textContent = "computing…";
    try {
      const result = await compute(input);
      if (mine !== latest) return;
      draw(result);
      status.textContent = "";
      element.dataset.shown = JSON.stringify(input);
      element.dataset.state = "ready";
    } catch (error) {
      if (mine !== latest) return;
      status.classList.add("il-error");
      status.textContent = error.message;
      element.dataset.state = "error";
    }
  };
}

/** Calls fn once, when element first comes near the screen (the runtime loads on first use). */
export function whenVisible(element, fn) {
  const observer = new window.IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) {
      observer.disconnect();
      fn();
    }
  }, { rootMargin: "300px" });
  observer.observe(element);
}
