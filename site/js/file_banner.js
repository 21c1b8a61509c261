// A classic script, not a module: opened from file://, a browser runs none of the book's modules,
// so this says how to read the book with its widgets instead of leaving them dead.
if (window.location.protocol === "file:") {
  window.addEventListener("DOMContentLoaded", () => {
    const banner = window.document.createElement("div");
    banner.className = "il-file-banner";
    banner.setAttribute("role", "alert");
    banner.textContent = "This page was opened as a file, so its widgets cannot run. Serve the " +
      "book instead: run `make serve` in the repository, then open http://127.0.0.1:8000/";
    window.document.body.prepend(banner);
  });
}
