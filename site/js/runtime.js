// onnxruntime-web, loaded on first use only: the site serves it from _vendor/onnxruntime-web/
// (site/build.mjs copies it from the npm package), never from a CDN. Single-threaded WebAssembly:
// GitHub Pages cannot send the headers that cross-origin isolation (and so WASM threads) needs.

/** Where the runtime's files are served: _vendor/ beside this folder's _illustrated/. */
export const RUNTIME_URL = new URL("../../_vendor/onnxruntime-web/", import.meta.url);

let runtime = null;  // Promise of the ort module, once asked for

/**
 * The onnxruntime-web module, imported once (about 14 MB of WebAssembly, then in the browser's
 * cache); a failed load is forgotten so that a later call tries again.
 * @returns {Promise<object>} the `ort` namespace
 */
export function loadRuntime() {
  runtime ??= import(new URL("ort.wasm.min.mjs", RUNTIME_URL).href).then((ort) => {
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmPaths = RUNTIME_URL.href;
    return ort;
  }, (error) => {
    runtime = null;
    throw new Error(`onnxruntime-web could not be loaded from ${RUNTIME_URL.href}: ${error.message}`);
  });
  return runtime;
}
