// ESLint (pinned in package.json) over our browser modules in js/: `npx eslint js` here, run by
// tests/site/test_browser_js.py. The recommended rules, plus what keeps modules small and plain.
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
        performance: "readonly", setTimeout: "readonly", WebAssembly: "readonly" },
    },
    rules: {
      eqeqeq: "error",
      "no-var": "error",
      "prefer-const": "error",
      "no-implicit-globals": "error",
      "max-lines": ["error", { max: 150, skipBlankLines: true, skipComments: true }],
      "max-depth": ["error", 3],
      complexity: ["error", 12],
    },
  },
  // The training worker (api.js starts it): a worker's global scope.
  { files: ["js/trainer.js"], languageOptions: { globals: { self: "readonly" } } },
];
