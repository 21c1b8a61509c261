"""How long ``il.pretrained(corpus)`` takes in a fresh process: the shipped weights, no training.

Each corpus is loaded in a new Python process (nothing cached in memory, no cache on disk:
the package keeps none), timing the import of the package apart from the call itself.

    python benchmarks/pretrained_load.py [--repeats 3]

Writes benchmarks/results/pretrained_load.json and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "pretrained_load.json"

PROBE = """
import json, time
start = time.perf_counter()
import illustrated as il
imported = time.perf_counter() - start
start = time.perf_counter()
model, src_vocab, tgt_vocab = il.pretrained({corpus!r})
loaded = time.perf_counter() - start
print(json.dumps({{"import_s": imported, "pretrained_s": loaded}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per corpus")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    import torch

    import illustrated as il

    results = {}
    for corpus in il.shipped.SHIPPED:
        runs = [json.loads(subprocess.run([sys.executable, "-c", PROBE.format(corpus=corpus)],
                                          check=True, capture_output=True, text=True).stdout)
                for _ in range(args.repeats)]
        results[corpus] = {key: round(statistics.median(r[key] for r in runs), 4)
                           for key in ("import_s", "pretrained_s")}
        results[corpus]["bytes"] = il.shipped.weights_path(corpus).stat().st_size
        print(corpus, json.dumps(results[corpus]), flush=True)
    meta = {"torch": torch.__version__, "repeats": args.repeats, "statistic": "median",
            "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print("\n| corpus | weights | `import illustrated` | `il.pretrained(corpus)` |")
    print("|---|---|---|---|")
    for corpus, r in results.items():
        print(f"| {corpus} | {r['bytes'] / 1e3:.0f} kB | {r['import_s']:.2f} s | "
              f"{r['pretrained_s'] * 1e3:.0f} ms |")


if __name__ == "__main__":
    main()
