"""Padding of batches by sentences against batches by tokens (paper §5.1), per toy corpus.

One epoch of each corpus's training split, cut two ways: 64 shuffled pairs a batch (il.train's
default), and ``tokens_per_batch`` = 64 x the longest pair's positions (so that the longest
pairs still come 64 to a batch), sentences of one length together
(:func:`illustrated.data.batching.token_epoch`). Reports the share of padded positions (source
and target) and the pairs per batch. No training: it counts positions.

    python benchmarks/token_batches.py

Writes benchmarks/results/token_batches.json and prints a Markdown table.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch

import illustrated as il
from illustrated.data import encode_pairs
from illustrated.data.batching import pair_widths, token_epoch, tokens_fit

RESULTS = Path(__file__).parent / "results" / "token_batches.json"
PAIRS_A_BATCH = 64


def padding(batches: list, widths: list) -> dict:
    """Share of padded positions, and pairs per batch, of an epoch's batches."""
    real = sum(sum(widths[i]) for b in batches for i in b)
    padded = sum(len(b) * (max(widths[i][0] for i in b) + max(widths[i][1] for i in b))
                 for b in batches)
    return {"padding": round(1 - real / padded, 4),
            "pairs_a_batch": round(sum(map(len, batches)) / len(batches), 1)}


def corpus_row(corpus: str) -> dict:
    pairs, src_vocab, tgt_vocab = il.data.load_corpus(corpus, "train")
    widths = pair_widths(encode_pairs(pairs, src_vocab, tgt_vocab))
    generator = torch.Generator().manual_seed(0)
    order = torch.randperm(len(widths), generator=generator).tolist()
    by_pairs = [order[i:i + PAIRS_A_BATCH] for i in range(0, len(order), PAIRS_A_BATCH)]
    tokens = PAIRS_A_BATCH * max(max(w) for w in widths)
    order, by_tokens = token_epoch(widths, tokens, generator), []
    while order:
        taken = tokens_fit(order, widths, tokens)
        by_tokens.append(order[:taken])
        order = order[taken:]
    return {"corpus": corpus, "pairs": len(widths), "tokens_per_batch": tokens,
            "by_pairs": padding(by_pairs, widths), "by_tokens": padding(by_tokens, widths)}


def main() -> None:
    rows = [corpus_row(c) for c in il.data.CORPORA]
    RESULTS.write_text(json.dumps({"pairs_a_batch": PAIRS_A_BATCH, "rows": rows}, indent=1)
                       + "\n")
    print("| corpus | pairs | padding, 64 pairs | tokens_per_batch | padding, by tokens "
          "| pairs a batch |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['corpus']} | {r['pairs']} | {100 * r['by_pairs']['padding']:.1f} % | "
              f"{r['tokens_per_batch']} | {100 * r['by_tokens']['padding']:.1f} % | "
              f"{r['by_tokens']['pairs_a_batch']} |")


if __name__ == "__main__":
    main()
