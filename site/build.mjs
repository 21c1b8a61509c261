// Copies the browser assets the rendered book serves itself into ../_build/site-assets/_vendor/.
// (onnxruntime-web stays a devDependency: benchmarks/browser_translate.py runs it beside jax-js.)
//
// `npm ci` (in this folder) installs them from the npm registry at the versions of
// package-lock.json; this script then copies only what the pages load. Sphinx copies _build/site-assets/ into
// the site root (`html_extra_path: [_build/site-assets]` in _config.yml), so pages find them under
// `_vendor/`: deliberately not under `_static/`, whose every script Jupyter Book 1 injects into
// every page. Our own modules (js/: the models in the browser, window.illustrated) go beside it,
// into _illustrated/js/ (the models into _illustrated/models/ are written by
// `python -m illustrated.commands.web_export`, see the Makefile's site-assets).
// Usage: node build.mjs [destination]   (default: ../_build/site-assets/_vendor)
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync }
  from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, "node_modules");
const dest = process.argv[2] ?? join(here, "..", "_build", "site-assets", "_vendor");
const ours = join(dirname(dest), "_illustrated", "js");

const version = (name) =>
  JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")).version;

// [source inside node_modules, destination inside _vendor, optional file-name filter]
const copies = [
  // MathJax 3 as components (_config.yml's mathjax3_config loads them): the loader, the core,
  // TeX input, CommonHTML output with its font and the assistive MathML, without the context
  // menu that the combined tex-chtml.js carries (400 of its 1,160 kB); the TeX extensions are
  // loaded on demand by the autoload extension (\boldsymbol, \cancel, ...).
  ["mathjax/es5/startup.js", "mathjax/startup.js"],
  ["mathjax/es5/core.js", "mathjax/core.js"],
  ["mathjax/es5/input/tex.js", "mathjax/input/tex.js"],
  ["mathjax/es5/output/chtml.js", "mathjax/output/chtml.js"],
  ["mathjax/es5/output/chtml/fonts/tex.js", "mathjax/output/chtml/fonts/tex.js"],
  ["mathjax/es5/a11y/assistive-mml.js", "mathjax/a11y/assistive-mml.js"],
  ["mathjax/es5/output/chtml/fonts/woff-v2", "mathjax/output/chtml/fonts/woff-v2"],
  ["mathjax/es5/input/tex/extensions", "mathjax/input/tex/extensions"],
  // jax-js (@jax-js/jax): its ES modules (the WebGPU and WebGL backends are imported only when
  // asked for), fetched by a page when a reader first uses a live widget (js/models.js).
  ["@jax-js/jax/dist", "jax-js", (name) => name.endsWith(".js")],
];

const packages = ["mathjax", "@jax-js/jax", "esbuild"];
for (const name of packages) {
  if (!existsSync(join(modules, name, "package.json"))) {
    console.error(`site/build.mjs: ${name} is not installed; run \`npm ci\` in site/ first`);
    process.exit(1);
  }
}

const { transformSync } = await import("esbuild");  // installed: checked above

rmSync(dest, { recursive: true, force: true });
mkdirSync(dest, { recursive: true });
// Our ES modules, loaded on every page from _illustrated/js/api.js (html_js_files in _config.yml),
// written without their comments and indentation (esbuild, whitespace only: every name is kept, so
// an error still names its function): a third less for every page to fetch (issue 20's weight).
rmSync(ours, { recursive: true, force: true });
mkdirSync(ours, { recursive: true });
let bytes = 0;
// js/ and its folders (engine/, widgets/), the same paths under _illustrated/js/.
for (const name of readdirSync(join(here, "js"), { recursive: true }).filter((f) => f.endsWith(".js"))) {
  const source = readFileSync(join(here, "js", name), "utf8");
  const { code } = transformSync(source, { minifyWhitespace: true, format: "esm", legalComments: "none",
    sourcefile: name });
  mkdirSync(dirname(join(ours, name)), { recursive: true });
  writeFileSync(join(ours, name), code);
  bytes += code.length;
}

for (const [from, to, keep] of copies) {
  const source = from.startsWith(here) ? from : join(modules, from);
  const target = join(dest, to);
  if (statSync(source).isDirectory()) {
    mkdirSync(target, { recursive: true });
    for (const name of readdirSync(source, { recursive: true })) {
      const file = join(source, name);
      if (statSync(file).isDirectory() || (keep && !keep(name))) continue;
      mkdirSync(dirname(join(target, name)), { recursive: true });
      cpSync(file, join(target, name));
      bytes += statSync(file).size;
    }
  } else {
    mkdirSync(dirname(target), { recursive: true });
    cpSync(source, target);
    bytes += statSync(source).size;
  }
}
const versions = Object.fromEntries(packages.filter((n) => n !== "esbuild").map((n) => [n, version(n)]));
writeFileSync(join(dest, "VERSIONS.json"), JSON.stringify(versions, null, 2) + "\n");
console.log(`site/build.mjs: ${(bytes / 1e6).toFixed(1)} MB into ${relative(process.cwd(), dest) || "."}`,
  JSON.stringify(versions));
