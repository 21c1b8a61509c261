"""Training throughput of illustrated.modules.Transformer vs torch.nn.Transformer, side by side.

Same sizes (d_model 64, 4 heads, d_ff 128, 2+2 layers, batch 64, dropout 0), same data, same
optimizer; both get embeddings, positions and a final linear. Writes benchmarks/results/throughput.json.

    python benchmarks/throughput.py [--steps 60] [--device cpu]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch
from torch import nn

import illustrated as il

sys.path.insert(0, str(Path(__file__).parent))
from torch_reference import TorchTransformer


def time_training(model: nn.Module, batches, device: torch.device) -> float:
    """Seconds per training step (forward, cross-entropy, backward, Adam), after 5 warm-up steps."""
    model.to(device).train()
    # The same optimizer as il.train (fused Adam) for both models.
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=device.type in ("cpu", "cuda"))
    def step(src, tgt_in, tgt_out):
        logits = model(src, tgt_in)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    for b in batches[:5]:
        step(*b)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for b in batches[5:]:
        step(*b)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / (len(batches) - 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="timed steps per model and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best is kept")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "throughput.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cfg = replace(il.TINY, src_vocab_size=20, tgt_vocab_size=20, d_model=64, n_heads=4, d_ff=128,
                  n_layers=2, dropout=0.0)
    g = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(args.steps + 5):
        src = torch.randint(4, 20, (64, 10), generator=g).to(device)
        tgt = torch.randint(4, 20, (64, 11), generator=g).to(device)
        batches.append((src, tgt[:, :-1], tgt[:, 1:]))
    il.set_seed(0)
    ours, theirs = il.modules.Transformer(cfg), TorchTransformer(cfg)
    best = {"ours": math.inf, "torch": math.inf}
    for _ in range(args.rounds):
        best["ours"] = min(best["ours"], time_training(ours, batches, device))
        best["torch"] = min(best["torch"], time_training(theirs, batches, device))
    result = {"device": str(device), "threads": args.threads, "batch": 64, "d_model": 64,
              "n_heads": 4, "n_layers": 2, "ms_per_step_ours": round(1e3 * best["ours"], 2),
              "ms_per_step_torch": round(1e3 * best["torch"], 2),
              "throughput_ratio_ours_over_torch": round(best["torch"] / best["ours"], 3)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
