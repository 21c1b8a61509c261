"""Training time and test accuracy per corpus with the default settings of `python -m illustrated
train`, next to torch.nn.Transformer trained with the same sizes, data, loop and schedule.

    python benchmarks/corpora.py [--corpora post copy ...] [--threads 2] [--device cpu]

Writes benchmarks/results/corpora.json and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

import illustrated as il

sys.path.insert(0, str(Path(__file__).parent))
from torch_reference import TorchTransformer  # noqa: E402


def run(corpus: str, model_class, device: str, seed: int = 0) -> dict:
    """Train one model on the corpus's train split; return seconds and test metrics."""
    pairs, src_vocab, tgt_vocab = il.data.load_corpus(corpus, "train")
    cfg = il.pretrained_models.make_config(corpus, src_vocab, tgt_vocab)
    il.set_seed(seed)
    model = model_class(cfg)
    start = time.perf_counter()
    history = il.train(model, pairs, src_vocab, tgt_vocab, device=device, seed=seed,
                       progress=False, **il.SETTINGS[corpus]["train"])
    seconds = time.perf_counter() - start
    metrics = il.evaluate(model, corpus, src_vocab, tgt_vocab)
    return {"seconds": round(seconds, 2), "steps": history.steps, **{k: round(v, 4) for k, v in
                                                                       metrics.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(il.data.CORPORA))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "corpora.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # torch.optim imports torch._dynamo the first time an optimizer is built (about 2 s here),
    # whichever model comes first: pay it before timing, and record it.
    first_optimizer_s = round(il.training.loop.preload_optimizer(), 2)
    results = {}
    for corpus in args.corpora:
        results[corpus] = {"ours": run(corpus, il.modules.Transformer, args.device),
                           "nn.Transformer": run(corpus, TorchTransformer, args.device)}
        print(corpus, json.dumps(results[corpus]), flush=True)
    meta = {"device": args.device, "threads": args.threads, "torch": torch.__version__,
            "first_optimizer_seconds": first_optimizer_s}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print("\n| corpus | ours: s | ours: exact | ours: il/elle | nn.Transformer: s | exact | il/elle |")
    print("|---|---|---|---|---|---|---|")
    for corpus, r in results.items():
        o, t = r["ours"], r["nn.Transformer"]
        print(f"| {corpus} | {o['seconds']} | {o['exact_match']:.0%} | {_pct(o)} | "
              f"{t['seconds']} | {t['exact_match']:.0%} | {_pct(t)} |")
    print(f"\n(one-time import by the first torch.optim optimizer of the process, not counted: "
          f"{first_optimizer_s} s)")


def _pct(result: dict) -> str:
    """The il/elle accuracy as a percentage, or a dash for corpora without one."""
    return f"{result['pronoun_accuracy']:.0%}" if "pronoun_accuracy" in result else "-"


if __name__ == "__main__":
    main()
