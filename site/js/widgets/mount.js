// The one way the book's widgets are mounted: every <div data-il-widget=KIND> of the page
// (src/illustrated/book/interactive.py) is handed to ./KIND.js's mount(element, api).
const KINDS = new Set(["frames", "translate", "beam", "selfattention", "wholemodel", "train"]);

export function mountWidgets(api) {
  const containers = [...window.document.querySelectorAll("[data-il-widget]:not([data-mounted])")];
  return containers.map(async (element) => {
    element.dataset.mounted = "";
    element.querySelector(".il-noscript")?.remove();
    const kind = element.dataset.ilWidget;
    try {
      if (!KINDS.has(kind)) throw new Error(`unknown widget ${JSON.stringify(kind)}`);
      const module = await import(`./${kind}.js`);
      await module.mount(element, api);
    } catch (error) {
      element.append(window.document.createTextNode(`This widget could not start: ${error.message}`));
    }
  });
}
