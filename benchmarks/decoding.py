"""Time per sentence of greedy decoding vs beam search (batched over the beam) on a test split.

    python benchmarks/decoding.py [--corpus fr-en] [--beams 1 2 4 8] [--threads 2]

Writes benchmarks/results/decoding.json: seconds per sentence and exact match for each beam size.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

import illustrated as il


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="fr-en")
    parser.add_argument("--beams", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "decoding.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, src_vocab, tgt_vocab = il.pretrained(args.corpus)
    pairs, _, _ = il.data.load_corpus(args.corpus, "test")
    sources = [src_vocab.encode(s) for s, _ in pairs]
    targets = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]
    results = {}
    for beam in args.beams:
        start = time.perf_counter()
        outputs = []
        for ids in sources:  # one sentence at a time, as a reader translates
            if beam == 1:
                outputs.append(il.greedy_decode(model, ids, bos_id=tgt_vocab.bos_id,
                                                eos_id=tgt_vocab.eos_id))
            else:
                outputs.append(il.beam_search(model, ids, bos_id=tgt_vocab.bos_id,
                                              eos_id=tgt_vocab.eos_id, beam_size=beam)[0][0])
        seconds = (time.perf_counter() - start) / len(sources)
        exact = sum(tgt_vocab.decode(o) == t for o, t in zip(outputs, targets)) / len(targets)
        results[f"beam_{beam}" if beam > 1 else "greedy"] = {
            "ms_per_sentence": round(1e3 * seconds, 2), "exact_match": round(exact, 4)}
        print(beam, results, flush=True)
    greedy = results.get("greedy", {}).get("ms_per_sentence")
    if greedy and "beam_4" in results:
        results["beam_4_over_greedy"] = round(results["beam_4"]["ms_per_sentence"] / greedy, 3)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"corpus": args.corpus, "threads": args.threads,
                                          "results": results}, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
