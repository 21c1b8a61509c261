"""Time of window.illustrated.translate in headless Chromium (onnxruntime-web, WebAssembly, one
thread): the first translation of a page (runtime and model fetched and compiled) and then each
test sentence, greedy and beam 4, and as the live widgets ask (greedy with the top 5 words per
step, beam 4 with its tree), for every corpus; plus the bytes a reader fetches.

    python benchmarks/browser_translate.py [--site _build/html] [--sentences 50]

Needs the built book (`make book`) and Debian's chromium + chromium-driver. Writes
benchmarks/results/browser_translate.json.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import math
import os
import shutil
import socketserver
import statistics
import tempfile
import threading
from pathlib import Path

import illustrated as il
from illustrated.commands.shipped import SHIPPED

ROOT = Path(__file__).resolve().parents[1]

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-extensions", "--window-size=1280,1000",
         "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1"]

#: In the page: the first call (cold), then every sentence timed, for each options object.
TIMING = """
const [corpus, sentences, settings] = arguments, done = arguments[arguments.length - 1];
(async () => {
  await window.illustrated.ready;
  let t = performance.now();
  await window.illustrated.translate(corpus, sentences[0], {});
  const first = performance.now() - t;
  const out = { first_ms: first };
  for (const [name, options] of settings) {
    const times = [];
    for (const sentence of sentences) {
      t = performance.now();
      await window.illustrated.translate(corpus, sentence, options);
      times.push(performance.now() - t);
    }
    out[name] = times;
  }
  return out;
})().then(done, (e) => done({ error: String(e.stack || e) }));
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass


def _summary(times: list[float]) -> dict:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(ordered), 2),
            "p90_ms": round(ordered[math.ceil(0.9 * len(ordered)) - 1], 2),  # nearest rank
            "max_ms": round(ordered[-1], 2), "sentences": len(ordered)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--sentences", type=int, default=50)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "browser_translate.json")
    args = parser.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    httpd = type("Server", (socketserver.ThreadingMixIn, http.server.HTTPServer),
                 {"daemon_threads": True})(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(args.site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM") or shutil.which("chromium")
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(
        executable_path=os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")))
    driver.set_script_timeout(600)
    results = {}
    try:
        for corpus in SHIPPED:
            driver.get(f"{base}/index.html")  # a fresh page: the runtime from the cache after the first
            sentences = []  # the test split (the post's 2 sentences: then its training ones)
            for split in ("test", "train"):
                pairs, _, _ = il.data.load_corpus(corpus, split)
                sentences += [s for s, _ in pairs if s not in sentences]
            sentences = sentences[:args.sentences]
            timing = driver.execute_async_script(
                TIMING, corpus, sentences, [["greedy", {}], ["beam_4", {"beamSize": 4}],
                                            # what the live widgets ask for on every change
                                            ["greedy_top_5", {"topK": 5}],
                                            ["beam_4_steps", {"beamSize": 4, "returnSteps": True}]])
            if "error" in timing:
                raise RuntimeError(timing["error"])
            results[corpus] = {"first_translation_ms": round(timing["first_ms"], 1),
                               "greedy": _summary(timing["greedy"]),
                               "beam_4": _summary(timing["beam_4"]),
                               "greedy_top_5": _summary(timing["greedy_top_5"]),
                               "beam_4_steps": _summary(timing["beam_4_steps"])}
            print(corpus, json.dumps(results[corpus]), flush=True)
    finally:
        driver.quit()
        httpd.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    index = json.loads((args.site / "_illustrated" / "models" / "index.json").read_text("utf-8"))
    runtime = args.site / "_vendor" / "onnxruntime-web"
    report = {
        "browser": "headless Chromium (selenium), onnxruntime-web WebAssembly, 1 thread",
        "cpus": os.cpu_count(),
        "runtime_bytes": {f.name: f.stat().st_size for f in sorted(runtime.iterdir())},
        "model_bytes": {c: sum(index["models"][c]["bytes"].values()) for c in SHIPPED},
        "note": "first_translation_ms: the first translate() of a page, with the corpus's "
                "models fetched and the runtime compiled (the first corpus also fetches the "
                "runtime; later ones find it in the browser's cache)",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
