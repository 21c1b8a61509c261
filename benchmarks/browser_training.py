"""Training in the page (jax-js, WebAssembly, in a Web Worker) in headless Chromium, side by side
with PyTorch on one thread on the same recipe (presets.SETTINGS), and the page's one model engine
(jax-js) against the onnxruntime-web path it replaced, on this machine in one run.

    python benchmarks/browser_training.py [--corpora post copy ...] [--no-onnx] [--quick]
    python benchmarks/browser_training.py --pairs 30 300 3000

With --pairs: the reader's own pairs (illustrated.train's `pairs`, as the widget's box hands them
over) of a toy copy language, N of them, with the recipe the page gives them (the tiny preset):
seconds from the pairs handed over to the trained model (reading, split, vocabularies,
compilation, every step and the exact match), and pairs per second of training in the page
beside PyTorch's one thread on the same split, vocabularies, model and recipe (il.train).
Writes benchmarks/results/browser_training_pairs.json.

For each corpus: time to the end of the recipe in the page (compilation and the final exact
match included) and the exact match reached, ms per step (median of the steps after the first)
beside PyTorch's one-thread step, the Chromium process tree's memory at step 50 and at the end,
and where a step's time goes (benchmarks/jax_profile.mjs, in Node: kernels and their time).
For translation (--no-onnx skips the old path): the first translation after navigation,
the first beam-4 translation (jax-js compiles the beam's shapes then), ms per translation after
those (greedy, beam 4; median over up to 10 test sentences) and the bytes a reader downloads,
for jax-js and for onnxruntime-web 1.30 with the ONNX graphs (site/js at commit ONNX_COMMIT,
the last one with it).
Needs `npm ci` in site/ and Debian's chromium + chromium-driver; builds its own small site in a
temporary folder (no `make book`). Writes benchmarks/results/browser_training.json.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
#: The last commit whose pages ran onnxruntime-web (its site/js, for the side-by-side).
ONNX_COMMIT = "8d616a9"
TARGETS = {"post": 5, "copy": 20, "reverse": 20, "fr-en": 60, "coreference": 60}  # seconds
GOALS = {"post": 1.0, "copy": 1.0, "reverse": 1.0, "fr-en": 0.95, "coreference": 0.95}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-extensions", "--window-size=1280,1000",
         "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1"]


def build_site(out: Path, widgets: str = "") -> Path:
    """A small site as the book serves it: _vendor/ (site/build.mjs), _illustrated/models/
    (illustrated.commands.web_export) and page.html loading api.js, with `widgets` (HTML) in it."""
    subprocess.run(["node", str(SITE / "build.mjs"), str(out / "_vendor")], check=True,
                   capture_output=True)
    from illustrated.commands import web_export
    web_export.export_site(out / "_illustrated" / "models")
    (out / "chapters").mkdir(exist_ok=True)
    (out / "chapters" / "page.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="../_static/illustrated.css">'
        '<script type="module" src="../_illustrated/js/api.js"></script></head>'
        f'<body><main style="max-width: 46em; margin: auto">{widgets}</main></body></html>',
        encoding="utf-8")
    (out / "_static").mkdir(exist_ok=True)
    shutil.copy(ROOT / "_static" / "illustrated.css", out / "_static")
    return out


def build_onnx_site(out: Path) -> Path:
    """The same page with the previous engine: site/js at ONNX_COMMIT, onnxruntime-web, ONNX."""
    js = out / "_illustrated" / "js"
    js.mkdir(parents=True)
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{ONNX_COMMIT}:site/js"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout.split()
    for name in names:
        (js / name).write_bytes(subprocess.run(["git", "show", f"{ONNX_COMMIT}:site/js/{name}"],
                                               cwd=ROOT, check=True, capture_output=True).stdout)
    ort = out / "_vendor" / "onnxruntime-web"
    ort.mkdir(parents=True)
    for name in ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"):
        shutil.copy(SITE / "node_modules" / "onnxruntime-web" / "dist" / name, ort)
    subprocess.run([sys.executable, "-m", "illustrated.commands.onnx_export", "--out",
                    str(out / "_illustrated" / "models")], check=True, capture_output=True)
    (out / "chapters").mkdir()
    (out / "chapters" / "page.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<script type="module" src="../_illustrated/js/api.js"></script></head><body></body></html>')
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass


def serve(folder: Path):
    """(server, base URL) serving folder on 127.0.0.1 from a thread."""
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
    httpd = Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def chromium(width: int = 1280):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag.replace("1280,1000", f"{width},1000"))
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    driver.set_script_timeout(600)
    return driver


#: Starts illustrated.train(options) and keeps its progress and result on window.
START = """
const options = arguments[0];
window.__progress = [];
window.__result = null;
window.illustrated.train(options, (r) => window.__progress.push({step: r.step, ms: r.msPerStep,
  t: performance.now()})).then(
  (r) => { window.__result = {exactMatch: r.exactMatch, steps: r.steps, msPerStep: r.msPerStep,
    seconds: r.seconds, losses: r.losses, bytes: r.weights.length, end: performance.now()}; },
  (e) => { window.__result = {error: String(e.message)}; });
window.__start = performance.now();
"""


def _rss_mb(driver) -> float:
    """Resident memory of the Chromium processes under this driver, in MB (the page's worker
    runs in its renderer process)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [driver.service.process.pid]
    while todo:
        p = todo.pop()
        todo += parents.get(p, [])
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total / 1e6


def train_in_page(driver, base: str, corpus: str) -> dict:
    driver.get(f"{base}/chapters/page.html")
    driver.execute_async_script("window.illustrated.ready.then(arguments[arguments.length - 1])")
    driver.execute_script(START, {"corpus": corpus})
    memory, result = {}, None
    while result is None:
        time.sleep(0.25)
        result = driver.execute_script("return window.__result")
        step = driver.execute_script("return window.__progress.length ? window.__progress.at(-1).step : 0")
        if step >= 50 and "step_50" not in memory:
            memory["step_50"] = _rss_mb(driver)
    memory["end"] = _rss_mb(driver)
    if "error" in result:
        raise RuntimeError(f"{corpus}: {result['error']}")
    progress = driver.execute_script("return window.__progress")
    start = driver.execute_script("return window.__start")
    steps = [b["t"] - a["t"] for a, b in zip(progress, progress[1:])]
    return {"seconds_to_end": round((result["end"] - start) / 1000, 2),
            "train_seconds": round(result["seconds"], 2),
            "first_step_ms": round(progress[0]["t"] - start, 1),
            "ms_per_step_median": round(statistics.median(steps), 2) if steps else None,
            "exact_match": result["exactMatch"], "steps": result["steps"],
            "model_bytes": result["bytes"], "memory_mb": {k: round(v, 1) for k, v in memory.items()},
            "final_loss": round(result["losses"][-1], 4)}


def pytorch_step_ms(corpus: str, steps: int = 60) -> float:
    """Median ms per step of il.train on one thread, the same recipe (after 10 warm-up steps)."""
    import torch

    import illustrated as il
    torch.set_num_threads(1)
    times: list[float] = []
    last = [time.perf_counter()]

    def tick(step, history):
        now = time.perf_counter()
        if step > 10:
            times.append(1000 * (now - last[0]))
        last[0] = now
    il.train_corpus(corpus, steps=steps, callback=tick, progress=False)
    return round(statistics.median(times), 2)


#: The first translation (ms since the navigation started), then each sentence (greedy and
#: beam 4), and the bytes fetched.
TRANSLATE = """
const [corpus, sentences] = arguments, done = arguments[arguments.length - 1];
(async () => {
  while (!window.illustrated) await new Promise((r) => setTimeout(r, 10));  // the module's turn
  await window.illustrated.ready;
  await window.illustrated.translate(corpus, sentences[0], {});
  const out = { first_ms: performance.now(), greedy: [], beam_4: [] };  // since navigation
  const before = performance.now();  // the first beam compiles its shapes (jit): timed apart
  await window.illustrated.translate(corpus, sentences[0], { beamSize: 4 });
  out.beam_first_ms = performance.now() - before;
  for (const s of sentences) {
    let t = performance.now();
    await window.illustrated.translate(corpus, s, {});
    out.greedy.push(performance.now() - t);
    t = performance.now();
    await window.illustrated.translate(corpus, s, { beamSize: 4 });
    out.beam_4.push(performance.now() - t);
  }
  out.bytes = performance.getEntriesByType("resource").reduce((n, e) => n + e.encodedBodySize, 0);
  return out;
})().then(done, (e) => done({ error: String(e.stack || e) }));
"""


def translate_in_page(driver, base: str, corpus: str, sentences: list[str]) -> dict:
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(f"{base}/chapters/page.html")
    out = driver.execute_async_script(TRANSLATE, corpus, sentences)
    if "error" in out:
        raise RuntimeError(out["error"])
    return {"first_translation_ms": round(out["first_ms"], 1),
            "greedy_median_ms": round(statistics.median(out["greedy"]), 2),
            "beam_4_median_ms": round(statistics.median(out["beam_4"]), 2),
            "beam_4_first_ms": round(out["beam_first_ms"], 1),
            "bytes_downloaded": out["bytes"]}


def profile(models: Path, corpus: str) -> dict:
    """benchmarks/jax_profile.mjs: where one training step's time goes, kernel by kernel."""
    out = subprocess.run(["node", str(ROOT / "benchmarks" / "jax_profile.mjs"), str(models), corpus],
                         check=True, capture_output=True, text=True, timeout=600)
    return json.loads(out.stdout.splitlines()[-1])


def toy_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """n pairs of a copy language: 3 to 8 words of 40, the target the source."""
    import random
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    return [(s, s) for s in (" ".join(rng.choice(words) for _ in range(rng.randint(3, 8)))
                             for _ in range(n))]


def pytorch_pairs_per_second(pairs, steps: int = 40) -> float:
    """Pairs per second of il.train on one thread, built as `train --pairs` builds its model."""
    import torch
    from dataclasses import replace

    import illustrated as il
    from illustrated.config import TINY
    from illustrated.data import pairs_file, tokenize
    torch.set_num_threads(1)
    train, _ = pairs_file.split_pairs(pairs, seed=0)
    src, tgt = (pairs_file.build_vocab([p[i] for p in train]) for i in (0, 1))
    longest = max(max(len(tokenize(s)), len(tokenize(t)) + 1) for s, t in pairs)
    cfg = replace(TINY, max_len=max(TINY.max_len, longest + 1), src_vocab_size=len(src),
                  tgt_vocab_size=len(tgt), pad_id=src.pad_id, tgt_pad_id=tgt.pad_id)
    times, last = [], [time.perf_counter()]

    def tick(step, history):
        now = time.perf_counter()
        if step > 10:
            times.append(now - last[0])
        last[0] = now
    recipe = il.Recipe()
    from illustrated.modules import Transformer
    il.train(Transformer(cfg), train, src, tgt, steps=steps, callback=tick, progress=False)
    return round(min(recipe.batch_size, len(train)) / statistics.median(times), 1)


def pairs_in_page(driver, base: str, pairs) -> dict:
    """illustrated.train({pairs}) from the call to the trained model, in the page."""
    driver.get(f"{base}/chapters/page.html")
    driver.execute_async_script("window.illustrated.ready.then(arguments[arguments.length - 1])")
    driver.execute_script(START, {"pairs": [list(p) for p in pairs]})
    result = None
    while result is None:
        time.sleep(0.25)
        result = driver.execute_script("return window.__result")
    if "error" in result:
        raise RuntimeError(result["error"])
    progress = driver.execute_script("return window.__progress")
    start = driver.execute_script("return window.__start")
    steps = [b["t"] - a["t"] for a, b in zip(progress, progress[1:])]
    train = len(pairs) - min(max(round(0.1 * len(pairs)), 1), len(pairs) - 1)
    batch = min(64, train)  # the tiny preset's batch_size
    return {"seconds_paste_to_model": round((result["end"] - start) / 1000, 2),
            "steps": result["steps"], "exact_match_test_split": result["exactMatch"],
            "ms_per_step_median": round(statistics.median(steps), 2),
            "pairs_per_second": round(batch * 1000 / statistics.median(steps), 1),
            "final_loss": round(result["losses"][-1], 4)}


def main_pairs(sizes, out: Path) -> int:
    results = {"machine": f"{os.cpu_count()} CPUs (shared), headless Chromium, jax-js WebAssembly",
               "recipe": "the tiny preset (d_model 32, 2 layers, 300 steps, batch 64), seed 0",
               "load_average_1min_before_after": [round(os.getloadavg()[0], 2)], "pairs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        httpd, base = serve(build_site(Path(tmp) / "jax"))
        driver = chromium()
        try:
            for n in sizes:
                pairs = toy_pairs(n)
                page = pairs_in_page(driver, base, pairs)
                torch_rate = pytorch_pairs_per_second(pairs)
                page.update(pytorch_one_thread_pairs_per_second=torch_rate,
                            page_to_pytorch=round(page["pairs_per_second"] / torch_rate, 2))
                results["pairs"][str(n)] = page
                print(n, json.dumps(page), flush=True)
        finally:
            driver.quit()
            httpd.shutdown()
    results["load_average_1min_before_after"].append(round(os.getloadavg()[0], 2))
    out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--no-onnx", action="store_true", help="skip the onnxruntime-web side")
    parser.add_argument("--quick", action="store_true", help="CI: post and copy, no onnx")
    parser.add_argument("--pairs", nargs="+", type=int, metavar="N",
                        help="time N of the reader's own pairs instead (e.g. 30 300 3000)")
    parser.add_argument("--out", type=Path, help="default: benchmarks/results/"
                        "browser_training.json (browser_training_ci.json with --quick)")
    args = parser.parse_args(argv)
    if args.pairs:
        return main_pairs(args.pairs, args.out or ROOT / "benchmarks" / "results" /
                          "browser_training_pairs.json")
    args.out = args.out or ROOT / "benchmarks" / "results" / \
        f"browser_training{'_ci' if args.quick else ''}.json"
    corpora = ["post", "copy"] if args.quick else args.corpora
    import illustrated as il
    results = {"machine": f"{os.cpu_count()} CPUs, headless Chromium, jax-js WebAssembly "
                          "(no WebGPU: no GPU lent to this run)", "training": {}, "translation": {},
               # the machine's load before and after: a neighbour's work slows the page, not PyTorch alone
               "load_average_1min_before_after": [round(os.getloadavg()[0], 2)]}
    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(Path(tmp) / "jax")
        httpd, base = serve(site)
        driver = chromium()
        try:
            for corpus in corpora:
                page = train_in_page(driver, base, corpus)
                torch_ms = pytorch_step_ms(corpus)
                page.update(pytorch_one_thread_ms_per_step=torch_ms,
                            ratio_to_pytorch=round(page["ms_per_step_median"] / torch_ms, 2),
                            target_seconds=TARGETS[corpus], target_exact_match=GOALS[corpus])
                results["training"][corpus] = page
                print(corpus, json.dumps(page), flush=True)
            results["profile_node_wasm"] = {c: profile(site / "_illustrated" / "models", c)
                                            for c in corpora}
            args.out.write_text(json.dumps(results, indent=1) + "\n")  # training, in case
            sentences = {c: [s for s, _ in il.data.load_corpus(c, "test")[0][:10]] for c in corpora}
            engines = [("jax-js", base)]
            if not (args.no_onnx or args.quick):
                onnx_httpd, onnx_base = serve(build_onnx_site(Path(tmp) / "onnx"))
                engines.append(("onnxruntime-web", onnx_base))
            for name, url in engines:
                results["translation"][name] = {c: translate_in_page(driver, url, c, sentences[c])
                                                for c in corpora}
                print(name, json.dumps(results["translation"][name]), flush=True)
        finally:
            driver.quit()
            httpd.shutdown()
    results["load_average_1min_before_after"].append(round(os.getloadavg()[0], 2))
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
