"""The test command's wall time in one process and with pytest-xdist's workers, side by side in one
run (CI's time, issue: CI under 20 minutes).

    python benchmarks/test_workers.py                      # make test's paths, 1 process vs 2 workers
    python benchmarks/test_workers.py tests/book chapters  # some paths only (..._subset.json)
    python benchmarks/test_workers.py --browser            # make browser-test's (needs the built book)

Each configuration runs the same pytest command, one after the other, the order alternated over
``--repeats``: ``-n 0`` as `make test` ran before the workers (one process, torch's own thread
count), the others as the Makefile runs them now (OMP_NUM_THREADS=1, a thread per worker). The
machine's load average is recorded beside each run: on a shared machine it moves the seconds
more than anything.
Writes benchmarks/results/test_workers[_browser].json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MAKE_TEST = ["tests", "chapters", "closing", "--nbval-lax", "--nbval-current-env",
             "--ignore=tests/browser"]
BROWSER = ["--confcutdir=tests/browser", "tests/browser"]


def run(args: list[str], workers: str) -> dict:
    """One pytest run: wall seconds, the summary line, the load average before and after."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers,
               "--dist", "loadfile", "--no-loadscope-reorder", *args]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if workers != "0":
        env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    summary = next((line for line in reversed(done.stdout.splitlines())
                    if re.search(r"\d+ (passed|failed)", line)), done.stdout[-300:])
    return {"workers": workers, "seconds": round(seconds, 1), "returncode": done.returncode,
            "summary": summary.strip("= "), "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="test paths (default: make test's)")
    parser.add_argument("--browser", action="store_true", help="make browser-test's paths")
    parser.add_argument("--workers", default="0,2", help="comma-separated -n values (default 0,2)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each (default 1)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: expected a count of at least 1, got {args.repeats}")
    if args.browser:
        paths = ["--confcutdir=tests/browser", *args.paths] if args.paths else BROWSER
    else:
        paths = ([*args.paths, "--nbval-lax", "--nbval-current-env", "--ignore=tests/browser"]
                 if args.paths else MAKE_TEST)
    workers = args.workers.split(",")
    runs = []
    for repeat in range(args.repeats):
        for n in (workers if repeat % 2 == 0 else workers[::-1]):
            runs.append(run(paths, n))
            print(json.dumps(runs[-1]), flush=True)
    report = {"paths": paths, "cpus": os.cpu_count(), "runs": runs,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "test_workers_browser.json" if args.browser else "test_workers.json"
    name = name.replace(".json", "_subset.json") if args.paths else name
    (RESULTS / name).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS / name}")
    return 0 if all(r["returncode"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
