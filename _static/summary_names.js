// A hidden cell's toggle (myst-nb writes <summary aria-label="Toggle hidden content">) is named by
// the words it shows ("Show the code"), as WCAG 2.5.3 asks: a reader who hears a name can say it.
(function () {
  function name() {
    document.querySelectorAll('details > summary[aria-label="Toggle hidden content"]')
      .forEach(function (summary) { summary.removeAttribute("aria-label"); });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", name);
  else name();
})();
