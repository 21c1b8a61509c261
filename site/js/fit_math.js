// A displayed formula too wide for a phone's column even wrapped (a matrix) is scaled to fit.
window.addEventListener("DOMContentLoaded", () => window.MathJax?.startup?.promise.then(() => {
  for (const m of window.document.querySelectorAll("mjx-container[display=true]")) if (m.scrollWidth > m.clientWidth)
    m.style.fontSize = `${(parseFloat(window.getComputedStyle(m).fontSize) * m.clientWidth) / m.scrollWidth}px`;
}));
