"""Throughput of illustrated.modules.Transformer vs torch.nn.Transformer, side by side.

Same sizes (d_model 64, 4 heads, d_ff 128, 2+2 layers, batch 64 of 10 source and 10 target
tokens, dropout 0 unless ``--dropout`` says otherwise), same data, same initialisation; both get
our embeddings, positions and final linear (``torch_reference.TorchTransformer``). Three
measurements, each in alternating rounds (ours first in one round, torch's first in the next) so
that a neighbour's load falls on both alike. Each measurement records wall-clock time and the
process's CPU time: on a machine shared with other work (ours had 2 cores and a load average
near 16) the CPU time is the fair clock, since the time a process waits for a core is not its
own; with one thread (the default here) it is the work done. Medians over rounds are reported,
with the ratio of the medians and the median of the per-round ratios:

* training: forward, cross-entropy, backward and a fused Adam step (the optimizer ``il.train``
  uses) per batch;
* inference: ``model(src, tgt_in)`` in eval mode under ``torch.no_grad()`` (our batched
  attention path on a CPU; torch's encoder takes its native "fast path" there);
* optimizer: our training step with ``torch.optim.Adam`` as a Python loop over parameters
  (``foreach=False``), with ``foreach=True`` and with ``fused=True``.

Then the training and inference measurements are repeated under ``ATEN_CPU_CAPABILITY=avx2`` and
``=default`` (how a machine without AVX-512, or without vector kernels, computes) and with two
threads, each in a subprocess, and their ratios recorded too (with more than one thread, by the
wall clock: CPU time counts every thread). Last, training and inference at each dropout rate of
``--also-dropouts`` (0.1 by default, as the ``small`` and ``base`` presets train), on one thread,
under each capability and with each number of threads above. ``torch_reference`` gives torch's
stacks our embeddings without the dropout on their sum, so at dropout > 0 ours does one dropout
more per side. Writes benchmarks/results/throughput.json.

    python benchmarks/throughput.py [--steps 10] [--rounds 21] [--threads 1] [--device cpu]
                                    [--dropout 0] [--also-capabilities avx2 default]
                                    [--also-threads 2] [--also-dropouts 0.1]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
from torch import nn

import illustrated as il

sys.path.insert(0, str(Path(__file__).parent))
from torch_reference import TorchTransformer  # noqa: E402

#: Measured before this benchmark ran side by side with inference (issue 14 and the README).
EARLIER = {
    "issue_14_avx512_machine": {"ms_per_step_ours": 28.8, "ms_per_step_torch": 26.6,
                                "training_ratio": 0.92,
                                "note": "another AVX-512 machine, before the fused attention path"},
    "readme_earlier_machine": {"training_ratio": 1.26, "note": "the README's first machine"},
    "this_machine_before": {"ms_per_step_ours": 13.3, "ms_per_step_torch": 13.64,
                            "training_ratio": 1.026,
                            "note": "this 2-core AVX-512 machine, explicit attention only"},
    "this_machine_sdpa": {"ms_per_step_ours": 15.2, "ms_per_step_torch": 16.1,
                          "training_ratio": 1.06, "inference_ratio": 1.27,
                          "note": "this machine, F.scaled_dot_product_attention when no weights "
                                  "are asked for (before the batched key-first path)"},
}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def make_optimizer(model: nn.Module, kind: str) -> torch.optim.Optimizer:
    """Adam as ``il.train`` builds it (betas, eps), in one of three implementations."""
    options = {"loop": {"foreach": False}, "foreach": {"foreach": True},
               "fused": {"fused": True}}[kind]
    return torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9, **options)


def train_steps(model: nn.Module, opt: torch.optim.Optimizer, batches, device) -> tuple:
    """(wall-clock, CPU) milliseconds per training step over ``batches``."""
    model.train()
    sync(device)
    start, cpu = time.perf_counter(), time.process_time()
    for src, tgt_in, tgt_out in batches:
        logits = model(src, tgt_in)  # (batch, tgt_len, tgt_vocab_size)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    sync(device)
    return (1e3 * (time.perf_counter() - start) / len(batches),
            1e3 * (time.process_time() - cpu) / len(batches))


def infer_steps(model: nn.Module, batches, device) -> tuple:
    """(wall-clock, CPU) milliseconds per forward pass (eval mode, no gradients) over ``batches``."""
    model.eval()
    sync(device)
    start, cpu = time.perf_counter(), time.process_time()
    with torch.no_grad():
        for src, tgt_in, _ in batches:
            model(src, tgt_in)
    sync(device)
    return (1e3 * (time.perf_counter() - start) / len(batches),
            1e3 * (time.process_time() - cpu) / len(batches))


def alternate(runs: dict, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Call each of ``runs`` (name -> function returning (wall ms, CPU ms)) once per round,
    rotating the order every round; return every name's per-round times by clock."""
    names = list(runs)
    times = {name: {"wall": [], "cpu": []} for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            wall, cpu = runs[name]()
            times[name]["wall"].append(wall)
            times[name]["cpu"].append(cpu)
    return times


def summary(times: dict[str, dict[str, list[float]]]) -> dict:
    return {name: {f"median_{clock}_ms": round(statistics.median(t[clock]), 3)
                   for clock in ("cpu", "wall")}
            | {f"rounds_{clock}_ms": [round(x, 3) for x in t[clock]] for clock in ("cpu", "wall")}
            for name, t in times.items()}


def ratios(times: dict, slow: str, fast: str) -> dict:
    """``slow``'s time over ``fast``'s, by clock: the ratio of the medians, and the median of
    the per-round ratios (each round's two measurements ran back to back, under one load)."""
    out = {}
    for clock in ("cpu", "wall"):
        a, b = times[slow][clock], times[fast][clock]
        out[f"{clock}_ratio_of_medians"] = round(statistics.median(a) / statistics.median(b), 3)
        out[f"{clock}_median_paired_ratio"] = round(
            statistics.median(x / y for x, y in zip(a, b)), 3)
    return out


def rerun(args, threads: int, env: dict, dropout: float | None = None) -> dict:
    """This script's training and inference ratios, rerun in a subprocess with ``threads``
    threads under the environment ``env`` (the same steps and rounds; the same dropout unless
    ``dropout`` is given), without the optimizer comparison."""
    clock = "wall" if threads > 1 else "cpu"
    dropout = args.dropout if dropout is None else dropout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "throughput.json"
        subprocess.run([sys.executable, __file__, "--steps", str(args.steps), "--rounds",
                        str(args.rounds), "--device", args.device, "--threads", str(threads),
                        "--dropout", str(dropout), "--out", str(path), "--no-optimizer",
                        "--also-capabilities", "--also-threads", "--also-dropouts"],
                       env=dict(os.environ, **env), check=True, capture_output=True)
        run = json.loads(path.read_text())
    return {"capability": run["machine"]["capability"], "threads": threads, "clock": clock,
            "dropout": dropout, "load_average_1min_before_after":
                run["machine"]["load_average_1min_before_after"]} | {
        key: run[key][f"{clock}_ratio_of_medians"]
        for key in ("training_ratio_ours_over_torch", "inference_ratio_ours_over_torch")} | {
        "training_ms_ours_torch": [run["training_ms_per_step"][m][f"median_{clock}_ms"]
                                   for m in ("ours", "torch")]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="batches per model and round")
    parser.add_argument("--rounds", type=int, default=21, help="alternating rounds; medians kept")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dropout", type=float, default=0.0, help="the models' dropout rate")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "throughput.json"))
    parser.add_argument("--also-capabilities", nargs="*", default=["avx2", "default"],
                        help="after the run, rerun under these ATEN_CPU_CAPABILITY values (how "
                             "a machine with other vector instructions computes) and record "
                             "their ratios too")
    parser.add_argument("--also-threads", nargs="*", type=int, default=[2],
                        help="after the run, rerun with these numbers of threads too")
    parser.add_argument("--also-dropouts", nargs="*", type=float, default=[0.1],
                        help="after the run, rerun at these dropout rates too (one thread, then "
                             "each capability and number of threads above)")
    parser.add_argument("--no-optimizer", action="store_true",
                        help="skip the comparison of Adam's implementations")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cfg = replace(il.TINY, src_vocab_size=20, tgt_vocab_size=20, d_model=64, n_heads=4, d_ff=128,
                  n_layers=2, dropout=args.dropout)
    g = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(args.steps):
        src = torch.randint(4, 20, (64, 10), generator=g).to(device)
        tgt = torch.randint(4, 20, (64, 11), generator=g).to(device)
        batches.append((src, tgt[:, :-1], tgt[:, 1:]))
    il.set_seed(0)
    models = {"ours": il.modules.Transformer(cfg).to(device),
              "torch": TorchTransformer(cfg).to(device)}
    load_before = os.getloadavg()

    # Training, both with fused Adam (as il.train); 5 warm-up steps each first.
    opts = {name: make_optimizer(m, "fused") for name, m in models.items()}
    for name, m in models.items():
        train_steps(m, opts[name], batches[:5], device)
    training = alternate({name: (lambda name=name: train_steps(models[name], opts[name],
                                                               batches, device))
                          for name in models}, args.rounds)

    # Inference: forward without gradients in eval mode.
    for m in models.values():
        infer_steps(m, batches[:5], device)
    inference = alternate({name: (lambda name=name: infer_steps(models[name], batches, device))
                           for name in models}, args.rounds)

    # The optimizer's implementation, on our model (a fresh copy per kind, same weights).
    optimizer = {}
    if not args.no_optimizer:
        copies = {kind: il.modules.Transformer(cfg).to(device)
                  for kind in ("loop", "foreach", "fused")}
        for m in copies.values():
            m.load_state_dict(models["ours"].state_dict())
        kind_opts = {kind: make_optimizer(m, kind) for kind, m in copies.items()}
        for kind, m in copies.items():
            train_steps(m, kind_opts[kind], batches[:5], device)
        optimizer = alternate({kind: (lambda kind=kind: train_steps(copies[kind], kind_opts[kind],
                                                                    batches, device))
                               for kind in copies}, args.rounds)

    result = {
        "machine": {"cpu": platform.processor() or platform.machine(),
                    "capability": torch.backends.cpu.get_cpu_capability(),
                    "cores": os.cpu_count(), "threads": args.threads, "device": str(device),
                    "torch": torch.__version__,
                    "load_average_1min_before_after": [round(load_before[0], 2),
                                                       round(os.getloadavg()[0], 2)]},
        "config": {"batch": 64, "src_len": 10, "tgt_len": 10, "d_model": 64, "n_heads": 4,
                   "d_ff": 128, "n_layers": 2, "dropout": args.dropout,
                   "steps_per_round": args.steps,
                   "rounds": args.rounds},
        "training_ratio_ours_over_torch": ratios(training, "torch", "ours"),
        "inference_ratio_ours_over_torch": ratios(inference, "torch", "ours"),
        "training_ms_per_step": summary(training),
        "inference_ms_per_batch": summary(inference),
    }
    if optimizer:
        result |= {"optimizer_speedup_fused_over_loop": ratios(optimizer, "loop", "fused"),
                   "optimizer_speedup_foreach_over_loop": ratios(optimizer, "loop", "foreach"),
                   "optimizer_ms_per_step_ours": summary(optimizer)}
    result |= {
        "earlier": EARLIER,
        "other_capabilities": {capability: rerun(args, args.threads,
                                                 {"ATEN_CPU_CAPABILITY": capability})
                               for capability in args.also_capabilities},
        "other_threads": {str(threads): rerun(args, threads, {})
                          for threads in args.also_threads},
        "other_dropouts": {str(p): {"native": rerun(args, args.threads, {}, p)}
                           | {capability: rerun(args, args.threads,
                                                {"ATEN_CPU_CAPABILITY": capability}, p)
                              for capability in args.also_capabilities}
                           | {f"{threads} threads": rerun(args, threads, {}, p)
                              for threads in args.also_threads}
                           for p in args.also_dropouts},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items()
                      if "ratio" in k or "speedup" in k or k.startswith("other_")}
                     | {"load": result["machine"]["load_average_1min_before_after"]}, indent=2))


if __name__ == "__main__":
    main()
