"""Data-parallel training throughput: target tokens per second with 1 and 2 processes (torchrun).

    python benchmarks/distributed.py [--nprocs 1 2] [--steps 40] [--batch-size 64]

Each run is ``torchrun --standalone --nproc_per_node=N`` on this file with ``--worker``: the
"small" preset of ``train --pairs`` (d_model 128, 3+3 layers) on the fr-en corpus's training
pairs, gloo on the CPU (NCCL on CUDA), one thread per process, the same global batch for every N.
The first 5 steps are not timed. The training loop is ``il.train``'s (DDP under the process
group, also with N = 1). Writes benchmarks/results/distributed.json with the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "distributed.json"
SKIP = 5


def worker(args: argparse.Namespace) -> None:
    """One process of a torchrun run: train, and on rank 0 print tokens per second as JSON."""
    import torch

    import illustrated as il
    from illustrated.training import distributed
    from illustrated.commands.cli import PRESETS
    from illustrated.data.pairs_file import build_vocab
    torch.set_num_threads(1)
    device = distributed.init("auto")
    pairs, _, _ = il.data.load_corpus("fr-en", "train")
    src, tgt = build_vocab([s for s, _ in pairs]), build_vocab([t for _, t in pairs])
    sizes, recipe = PRESETS["small"]
    cfg = replace(il.TINY, **sizes, src_vocab_size=len(src), tgt_vocab_size=len(tgt))
    il.set_seed(0)
    model = il.modules.Transformer(cfg).to(device)
    # il.train wraps the model in DDP: torchrun's process group is running (also for N = 1)
    history = il.train(model, pairs, src, tgt, progress=False, **{
        **recipe, "steps": args.steps, "batch_size": args.batch_size})
    per_pair = sum(len(il.data.tokenize(t)) + 1 for _, t in pairs) / len(pairs)
    timed = history.seconds[-1] - history.seconds[SKIP - 1]
    tokens = per_pair * args.batch_size * (args.steps - SKIP)
    if distributed.is_main():
        print(json.dumps({"processes": torch.distributed.get_world_size(),
                          "device": str(device), "seconds": round(timed, 3),
                          "tokens_per_second": round(tokens / timed),
                          "final_loss": round(history.loss[-1], 4)}))
    torch.distributed.destroy_process_group()


def main() -> None:
    """Run the workers for each process count, print a table, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nprocs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    rows = []
    for n in args.nprocs:
        out = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone",
             f"--nproc_per_node={n}", __file__, "--worker", "--steps", str(args.steps),
             "--batch-size", str(args.batch_size)],
            capture_output=True, text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"| {n} | {rows[-1]['device']} | {rows[-1]['tokens_per_second']} tokens/s |",
              flush=True)
    RESULTS.write_text(json.dumps({"machine": f"{platform.processor() or platform.machine()}, "
                                              f"{os.cpu_count()} CPUs",
                                   "load_average_1min_at_end": round(os.getloadavg()[0], 1),
                                   "steps": args.steps, "batch_size": args.batch_size,
                                   "preset": "small", "corpus": "fr-en", "runs": rows},
                                  indent=2) + "\n")


if __name__ == "__main__":
    main()
