// ESLint (pinned in package.json) over our browser modules in js/ (js/engine/: the model, training and decoding;
// js/widgets/: the DOM widgets; js/: the page's entry points): `npx eslint js` here, run by
// tests/site/test_browser_js.py. The recommended rules, plus what keeps modules small and plain: lines of at most
// 120 characters (comments too; a URL may run over) with one statement each, no function (closures included) over
// 60 lines, and no import circle.
import js from "@eslint/js";

export default [
  js.configs.recommended,
  {
    files: ["js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      // The browser globals the modules use (the `globals` package would list them all).
      globals: { window: "readonly", fetch: "readonly", URL: "readonly", TextDecoder: "readonly",
        TextEncoder: "readonly", AbortController: "readonly", Blob: "readonly",
        performance: "readonly", setTimeout: "readonly", WebAssembly: "readonly", URLSearchParams: "readonly" },
    },
    rules: {
      eqeqeq: "error",
      "no-var": "error",
      "prefer-const": "error",
      "no-implicit-globals": "error",
      "max-lines": ["error", { max: 150, skipBlankLines: true, skipComments: true }],
      "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
      "max-depth": ["error", 3],
      complexity: ["error", 12],
      "max-len": ["error", { code: 120, ignoreUrls: true }],
      "max-statements-per-line": ["error", { max: 1 }],
      // A parameter's default is a constant, never a local computed from the other parameters.
      "no-restricted-syntax": ["error", ...[
        ":function > AssignmentPattern[right.type=/Call|New|Binary|Logical|Conditional|Member|Template/]",
        ":function > AssignmentPattern[right.type='ArrowFunctionExpression'][right.params.length>0]",
      ].map((selector) => ({ selector, message: "compute it in the function's body, not as a parameter's default" }))],
    },
  },
  // The training worker (api.js starts it): a worker's global scope.
  { files: ["js/engine/trainer.js"], languageOptions: { globals: { self: "readonly" } } },
];
