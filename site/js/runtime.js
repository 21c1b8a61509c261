// jax-js (@jax-js/jax), loaded on first use only from _vendor/jax-js/ (site/build.mjs copies it
// from the npm package), never a CDN: 0.6 MB of JavaScript that compiles WebAssembly kernels.

/** Where the runtime's files are served: _vendor/ beside this folder's _illustrated/. */
export const RUNTIME_URL = new URL("../../_vendor/jax-js/", import.meta.url);
let runtime = null;  // Promise of the jax module, once asked for

/** The `jax` namespace (numpy, nn, jit, ...), imported and started once; a failed load is forgotten. */
export function loadRuntime() {
  runtime ??= import(new URL("index.js", RUNTIME_URL).href).then(async (jax) => {
    await jax.init("wasm");
    jax.defaultDevice("wasm");
    return jax;
  }, (error) => {
    runtime = null;
    throw new Error(`jax-js could not be loaded from ${RUNTIME_URL.href}: ${error.message}`);
  });
  return runtime;
}
