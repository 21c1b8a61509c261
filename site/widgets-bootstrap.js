// Loaded on pages with saved widget state, after require.js and before the Jupyter widget
// manager (nb_ipywidgets_js in _config.yml); site/build.mjs copies it to _vendor/.
(function () {
  "use strict";

  // 1. The widget manager's bundle (@jupyter-widgets/html-manager, embed-amd.js) defines its
  //    AMD modules by name, and each module loads its icon fonts from the folder require.js
  //    gives the module's name: without a path, beside the page (chapters/@jupyter-widgets/...).
  //    Point every one of them at _vendor/html-manager/, where site/build.mjs puts the fonts.
  var vendor = document.currentScript.src.replace(/[^/]*$/, "") + "html-manager/";
  var paths = { "@jupyter-widgets/html-manager/dist": vendor.slice(0, -1) };
  ["base", "base7", "controls", "controls7", "html-manager", "output"].forEach(function (name) {
    paths["@jupyter-widgets/" + name] = vendor + name;
  });
  window.requirejs.config({ paths: paths });

  // 2. ipywidgets 8 typesets widget labels with the MathJax 2 API,
  //    MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]), whenever window.MathJax exists;
  //    the book loads MathJax 3, which has no Hub (an uncaught TypeError per widget). Give every
  //    object that window.MathJax becomes (the configuration, then MathJax 3 itself) that one
  //    method, typesetting with MathJax 3 once it has started.
  var hub = {
    Queue: function () {
      Array.prototype.forEach.call(arguments, function (job) {
        if (Array.isArray(job) && job[0] === "Typeset" && job[2]) typeset(job[2]);
      });
    },
  };
  function typeset(element) {
    var mathjax = window.MathJax;
    if (mathjax && mathjax.startup && mathjax.startup.promise && mathjax.typesetPromise) {
      mathjax.startup.promise
        .then(function () { return mathjax.typesetPromise([element]); })
        .catch(function (err) { console.warn("MathJax could not typeset a widget label", err); });
    } // else MathJax has not started yet: its first pass typesets the page, labels included.
  }
  function withHub(value) {
    if (value && typeof value === "object" && !("Hub" in value)) {
      // Not enumerable: MathJax 3 reads its configuration by enumerating keys.
      Object.defineProperty(value, "Hub", { value: hub, configurable: true });
    }
    return value;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
