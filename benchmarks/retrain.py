"""Retraining each corpus's shipped recipe from scratch under several CPU instruction sets.

The weights the package ships (``il.pretrained``) were trained once, on one machine. A CPU with
other vector instructions sums floating-point numbers in another order, so retraining there gives
other bits. What must hold everywhere is the quality of the recipe: every seed reaches the
corpus's target. This script retrains every corpus with its shipped settings (``il.SETTINGS``)
for each seed, in a fresh process per CPU capability (``ATEN_CPU_CAPABILITY``: "default" = no
vector instructions, "avx2", and the machine's own), on one thread, like ``make models``.

    python benchmarks/retrain.py [--capabilities default avx2 native] [--seeds 0 1 2]
                                 [--corpora post copy ...] [--jobs 2]
                                 [--overrides '{"steps": 500}'] [--out FILE]

Writes benchmarks/results/retrain.json and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "retrain.json"


def worker(corpora: list[str], seed: int, overrides: dict | None = None) -> None:
    """Train every corpus once with ``seed`` in this process; print one JSON line per corpus.
    ``overrides`` replace entries of the corpus's training settings (e.g. {"steps": 500})."""
    import torch

    import illustrated as il
    from illustrated.commands.shipped import TARGETS, meets_target

    torch.set_num_threads(1)
    il.training.loop.preload_optimizer()
    for corpus in corpora:
        start = time.perf_counter()
        model, src_vocab, tgt_vocab, _ = il.train_corpus(corpus, seed=seed, device="cpu",
                                                         progress=False, **(overrides or {}))
        seconds = time.perf_counter() - start
        metrics = il.evaluate(model, corpus, src_vocab, tgt_vocab)
        print(json.dumps({"corpus": corpus, "seed": seed, "seconds": round(seconds, 2),
                          "capability": torch.backends.cpu.get_cpu_capability(),
                          "target": TARGETS[corpus],
                          "meets_target": meets_target(corpus, metrics),
                          **({"overrides": overrides} if overrides else {}),
                          **{k: round(v, 4) for k, v in metrics.items()}}), flush=True)


def run_worker(capability: str, seed: int, corpora: list[str], overrides: str) -> list[dict]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if capability != "native":
        env["ATEN_CPU_CAPABILITY"] = capability
    else:
        env.pop("ATEN_CPU_CAPABILITY", None)
    out = subprocess.run([sys.executable, __file__, "--worker", "--seed", str(seed),
                          "--corpora", *corpora, "--overrides", overrides], env=env, check=True,
                         capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for row in rows:
        row["asked"] = capability
        print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capabilities", nargs="+", default=["default", "avx2", "native"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--corpora", nargs="+",
                        default=["post", "copy", "reverse", "fr-en", "coreference"])
    parser.add_argument("--jobs", type=int, default=2, help="processes at a time (1 thread each)")
    parser.add_argument("--overrides", default="{}",
                        help='JSON object replacing training settings, e.g. \'{"steps": 500}\'')
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.corpora, args.seed, json.loads(args.overrides))
        return
    import torch

    jobs = [(c, s) for c in args.capabilities for s in args.seeds]
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = [r for rs in pool.map(lambda job: run_worker(*job, args.corpora, args.overrides),
                                     jobs) for r in rs]
    meta = {"torch": torch.__version__, "threads_per_run": 1,
            "machine_capability": torch.backends.cpu.get_cpu_capability(),
            "all_meet_targets": all(r["meets_target"] for r in rows),
            **({"overrides": json.loads(args.overrides)} if json.loads(args.overrides) else {})}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"meta": meta, "runs": rows}, indent=2) + "\n")
    print("\n| corpus | capability | seed | exact match | il/elle | target met | seconds |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["corpus"], r["capability"], r["seed"])):
        print(f"| {r['corpus']} | {r['capability']} | {r['seed']} | {r['exact_match']:.0%} | "
              f"{r.get('pronoun_accuracy', float('nan')):.0%} | {r['meets_target']} | "
              f"{r['seconds']} |")
    print(f"\nall runs meet their targets: {meta['all_meet_targets']}")


if __name__ == "__main__":
    main()
