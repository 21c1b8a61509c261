"""Where a captured training step's time goes on a GPU: torch.profiler over ``il.train``.

Issue 34's companion to ``benchmarks/gpu.py``: for the tiny and base sizes of that benchmark,
ours and torch's, it profiles a few steps of ``il.train(compile=True)`` after the warm-up and
writes, per setting, the step's wall time, the GPU's busy time a step (the kernels' summed
time), the parts of the training loop (labelled with ``record_function``), the operators that
cost the CPU most and the kernels that cost the GPU most, and torch.compile's counters (graph
breaks, CUDA graph skips). Run on a GPU:

    python benchmarks/gpu_profile.py [--only tiny] [--out DIR]
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch
from torch._dynamo.utils import counters
from torch.profiler import ProfilerActivity, profile, record_function

import illustrated as il
from illustrated.training import captured_step, graphed_step, loop

sys.path.insert(0, str(Path(__file__).parent))
from gpu import SIZES, corpus  # noqa: E402
from torch_reference import TorchTransformer  # noqa: E402


def labelled(module, name: str, label: str) -> None:
    """Wrap ``module.name`` so that the profiler shows its calls as ``label``."""
    inner = getattr(module, name)

    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        with record_function(label):
            return inner(*args, **kwargs)
    setattr(module, name, wrapper)


labelled(captured_step.PaddedPairs, "batch", "loop: padded batch")
labelled(loop, "_loss_and_accuracy", "loop: forward+backward+totals")
labelled(graphed_step.GraphedStep, "__call__", "loop: the step, one CUDA graph")
labelled(loop, "_read_step", "loop: read loss (the one wait)")
labelled(torch.nn.utils, "clip_grad_norm_", "loop: clip_grad_norm_")
labelled(loop.History, "record", "loop: history (loss.item)")


def profiled(size_name: str, impl: str, precision: str, steps: int, out: Path,
             device: str = "cuda") -> dict:
    size = SIZES[size_name]
    pairs, vocab = corpus(size)
    cfg = replace(il.TINY, src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), max_len=64,
                  **size["cfg"])
    il.set_seed(0)
    model = (il.modules.Transformer if impl == "ours" else TorchTransformer)(cfg)
    warm = 8
    cuda = device == "cuda"
    prof = profile(activities=[ProfilerActivity.CPU] + [ProfilerActivity.CUDA] * cuda)

    def callback(step, history):
        if step in (warm, warm + steps) and cuda:
            torch.cuda.synchronize()
        if step == warm:
            prof.start()
        elif step == warm + steps:
            prof.stop()

    counters.clear()
    history = il.train(model, pairs, vocab, vocab, steps=warm + steps + 2, lr=1e-4, warmup=0,
                       batch_size=size["batch"], device=device, precision=precision,
                       compile=True if cuda else "aot_eager", progress=False, callback=callback)
    gaps = [b - a for a, b in zip(history.seconds[warm:warm + steps],
                                  history.seconds[warm + 1:warm + steps + 1])]
    events = prof.key_averages()
    device_us = sum(e.self_device_time_total for e in events) / steps
    name = f"{size_name}_{precision}_{impl}"
    with open(out / "profile_tables.txt", "a") as f:
        f.write(f"\n===== {name}: step {1e3 * statistics.median(gaps):.3f} ms (profiled), "
                f"GPU busy {device_us / 1e3:.3f} ms a step =====\n")
        f.write(events.table(sort_by="self_cpu_time_total", row_limit=28, max_name_column_width=60))
        f.write(events.table(sort_by="self_device_time_total", row_limit=18,
                             max_name_column_width=60))
    loop = {e.key: round(e.cpu_time_total / steps / 1e3, 3) for e in events
            if e.key.startswith("loop:") or e.key.startswith("Optimizer.step")
            or e.key in ("cudaGraphLaunch", "cudaStreamSynchronize", "cudaDeviceSynchronize",
                         "aten::item", "aten::_local_scalar_dense", "cudaMemcpyAsync",
                         "CompiledFunction", "CompiledFunctionBackward", "Torch-Compiled Region")}
    row = {"setting": name, "ms_per_step_profiled": round(1e3 * statistics.median(gaps), 3),
           "gpu_busy_ms_per_step": round(device_us / 1e3, 3), "cpu_ms_per_step_by_part": loop,
           "launches_per_step": round(sum(e.count for e in events if e.key in (
               "cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx"))
               / steps, 1),
           "graph_launches_per_step": round(sum(e.count for e in events
                                                if e.key == "cudaGraphLaunch") / steps, 2),
           "counters": {k: dict(v) for k, v in counters.items()
                        if k in ("graph_break", "stats", "inductor") and v}}
    row["counters"].get("inductor", {}).pop("fxgraph_cache_miss", None)
    print(json.dumps(row), flush=True)
    del model
    torch._dynamo.reset()
    if cuda:
        torch.cuda.empty_cache()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("tiny", "base"))
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--device", default="cuda", help="cuda; cpu for a smoke run")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else args.device
    (out / "profile_tables.txt").write_text(f"{gpu}, torch {torch.__version__}\n")
    plan = [("tiny", "fp32", 20), ("tiny", "bf16", 20), ("base", "bf16", 3)]
    rows, began = [], time.perf_counter()
    for size_name, precision, steps in plan:
        if args.only and size_name != args.only:
            continue
        for impl in ("ours", "torch"):
            rows.append(profiled(size_name, impl, precision, steps, out, args.device))
    (out / "gpu_profile.json").write_text(json.dumps(
        {"gpu": gpu, "torch": torch.__version__, "rows": rows,
         "seconds": round(time.perf_counter() - began, 1)}, indent=2) + "\n")


if __name__ == "__main__":
    main()
