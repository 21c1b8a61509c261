"""Decoding with the KV cache against without it, and beam search against greedy decoding.

    python benchmarks/decoding.py [--corpus fr-en] [--lengths 10 50 200] [--beam 4] [--threads 1]

Part 1, the cache: the shipped model greedy-decodes and beam-searches one test sentence, and
greedy-decodes a batch of ``--batch`` test sentences at once (as ``exact_match`` does), with and
without the KV cache (``use_cache=True`` / ``False``), side by side in one run, at each output
length. The length is forced: a copy of the shipped model whose <eos> logit is lowered by 10^4
never ends a hypothesis, so every call generates exactly ``max_len`` tokens; its positional
table is extended to the longest length (the table is a function of the sizes, not a weight).
The shipped model is so small (d_model 64) that a step costs mostly Python and module calls,
which the cache does not remove; a wider untrained model (d_model 256, d_ff 1024, 3+3 layers,
seeded, the same forced length) shows the cache where the arithmetic counts. It runs in float64:
its flat untrained distributions hold near-ties that float32 rounding, summed in another order
with and without the cache, can flip after a hundred steps of beam search (seen at 200 tokens).
Tokens and scores are asserted identical (scores to 1e-4 in float32) before any time is kept.
Both paths are the same model under the same policy (decoding's: inputs checked once per call,
``decode_unchecked`` at each step, ``torch.inference_mode``); cached and uncached calls
alternate, and the fastest of each is kept.
Part 1b, ``--profile``: where one greedy decode's time goes at the longest length, with and
without the cache (cProfile's own time per function, summed by kind), written beside.
Part 2, the test split: median milliseconds per sentence and exact match for greedy and each beam
size, one sentence at a time as a reader translates (cached), each sentence by each in turn.
Writes benchmarks/results/decoding.json (``--out``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

import illustrated as il


def endless_copy(model: il.modules.Transformer, max_len: int, eos_id: int):
    """The model with room for ``max_len`` positions and an <eos> it never chooses."""
    longer = il.modules.Transformer(replace(model.cfg, max_len=max(max_len, model.cfg.max_len)))
    longer.load_state_dict(model.state_dict())
    with torch.no_grad():
        longer.generator.proj.bias[eos_id] -= 1e4
    return longer.eval()


def wider_model(src_vocab_size: int, tgt_vocab_size: int, max_len: int, eos_id: int):
    """A seeded untrained model four times as wide as the shipped one, <eos> never chosen, float64."""
    cfg = replace(il.PAPER_BASE, src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size,
                  d_model=256, n_heads=4, d_ff=1024, n_layers=3, dropout=0.0, max_len=max_len)
    torch.manual_seed(0)
    model = il.modules.Transformer(cfg).double().eval()
    with torch.no_grad():
        model.generator.proj.bias[eos_id] -= 1e4
    return model


def best_of_pair(first, second, repeats: int) -> tuple[float, object, float, object]:
    """The fastest of ``repeats`` calls of each, in ms, and their last results; the calls
    alternate, so that a machine whose load changes slows both alike."""
    times, results = ([], []), [None, None]
    for _ in range(repeats):
        for i, run in enumerate((first, second)):
            start = time.perf_counter()
            results[i] = run()
            times[i].append(1e3 * (time.perf_counter() - start))
    return min(times[0]), results[0], min(times[1]), results[1]


def cache_part(model, ids, special, lengths, beam_size, repeats, long_repeats,
               batch: torch.Tensor) -> dict:
    """ms per call with and without the cache at each length: one sentence greedy and beam
    search, and a batch of sentences greedy (``batch``, padded ids, as ``exact_match``
    decodes a test split); outputs asserted identical."""
    results = {}
    for length in lengths:
        n = repeats if length <= 50 else long_repeats
        for method in ("greedy", f"beam_{beam_size}", f"greedy_batch_{len(batch)}"):
            def run(use_cache, method=method, length=length):
                if method == "greedy":
                    return il.greedy_decode(model, ids, max_len=length, use_cache=use_cache,
                                            **special)
                if method.startswith("greedy_batch"):
                    return il.inference.decoding.greedy_decode_batch(model, batch, max_len=length,
                                                           use_cache=use_cache, **special)
                return il.beam_search(model, ids, beam_size=beam_size, max_len=length,
                                      use_cache=use_cache, **special)
            cached_ms, cached, plain_ms, plain = best_of_pair(lambda: run(True),
                                                              lambda: run(False), n)
            if method == "greedy":
                assert cached == plain and len(cached) == length, (length, method)
            elif method.startswith("greedy_batch"):
                assert cached == plain and all(len(r) == length for r in cached), (length, method)
            else:
                assert [h for h, _ in cached] == [h for h, _ in plain], (length, method)
                assert len(cached[0][0]) == length
                assert all(abs(a - b) < 1e-4 * max(1, abs(b))
                           for (_, a), (_, b) in zip(cached, plain))
            results[f"{method}_{length}"] = {
                "tokens": length, "ms_cached": round(cached_ms, 2),
                "ms_uncached": round(plain_ms, 2), "speedup": round(plain_ms / cached_ms, 2),
                "identical_outputs": True}
            print(method, length, results[f"{method}_{length}"], flush=True)
    return results


#: cProfile's functions by kind: (kind, test on "file:function"), the first that matches
KINDS = [
    ("nn.Module calls (hooks looked up, submodules and parameters fetched)",
     lambda f: "torch/nn/modules/module.py" in f),
    ("torch.nn's Python (Linear, LayerNorm, Dropout, Embedding forward, functional)",
     lambda f: "torch/nn/" in f),
    ("nn.Linear's matrix products", lambda f: f.endswith("torch._C._nn.linear>")),
    ("attention kernels", lambda f: any(k in f for k in ("scaled_dot_product", "bmm", "'softmax'"))),
    ("layer norms", lambda f: f.endswith("torch.layer_norm>")),
    ("the layers' own Python (illustrated/modules)",
     lambda f: "illustrated/modules/" in f and "_checks" not in f and "kv_cache" not in f),
    ("the KV cache's bookkeeping", lambda f: "kv_cache.py" in f),
    ("input checks", lambda f: "_checks.py" in f or "_args.py" in f),
    ("the decoding loop's Python", lambda f: "illustrated/inference/decoding.py" in f),
    ("other tensor operations (views, adds, copies, argmax...)", lambda f: True),
]


def profile_part(model, ids, special, length: int, runs: int = 3) -> dict:
    """Where one greedy decode's time goes, with and without the cache: cProfile's own time
    per function summed by kind, as a share of the whole (cProfile's overhead inflates the
    Python kinds, so shares, not times) and the number of calls per step."""
    import cProfile
    import pstats
    report = {}
    for use_cache in (True, False):
        il.greedy_decode(model, ids, max_len=length, use_cache=use_cache, **special)  # warm
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(runs):
            il.greedy_decode(model, ids, max_len=length, use_cache=use_cache, **special)
        profiler.disable()
        stats = pstats.Stats(profiler).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
        kinds = {kind: 0.0 for kind, _ in KINDS}
        calls = 0
        for (file, _, name), (_, n_calls, own, _, _) in stats.items():
            kind = next(k for k, test in KINDS if test(f"{file}:{name}"))
            kinds[kind] += own
            calls += n_calls
        total = sum(kinds.values())
        report["cached" if use_cache else "uncached"] = {
            "share_of_time": {k: round(v / total, 3) for k, v in
                              sorted(kinds.items(), key=lambda kv: -kv[1])},
            "python_and_torch_calls_per_step": round(calls / (runs * length))}
    return report


def test_split_part(model, src_vocab, tgt_vocab, corpus, beams) -> dict:
    """Median ms per sentence and exact match on the test split, greedy and each beam size:
    each sentence decoded by each in turn, so that a machine whose load changes slows them alike."""
    pairs, _, _ = il.data.load_corpus(corpus, "test")
    sources = [src_vocab.encode(s) for s, _ in pairs]
    targets = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]
    special = dict(bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)

    def decode(ids, beam):
        return il.greedy_decode(model, ids, **special) if beam == 1 else \
            il.beam_search(model, ids, beam_size=beam, **special)[0][0]

    for beam in beams:
        decode(sources[0], beam)  # warm-up
    times, right = {beam: [] for beam in beams}, dict.fromkeys(beams, 0)
    for ids, target in zip(sources, targets):  # one sentence at a time, as a reader translates
        for beam in beams:
            start = time.perf_counter()
            output = decode(ids, beam)
            times[beam].append(time.perf_counter() - start)
            right[beam] += tgt_vocab.decode(output) == target
    results = {f"beam_{beam}" if beam > 1 else "greedy": {
        "ms_per_sentence": round(1e3 * statistics.median(times[beam]), 2),
        "exact_match": round(right[beam] / len(targets), 4)} for beam in beams}
    if "greedy" in results and "beam_4" in results:
        results["beam_4_over_greedy"] = round(results["beam_4"]["ms_per_sentence"]
                                              / results["greedy"]["ms_per_sentence"], 3)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="fr-en")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--beam", type=int, default=4, help="beam size of part 1")
    parser.add_argument("--beams", type=int, nargs="+", default=[1, 2, 4, 8],
                        help="beam sizes of part 2 (1: greedy)")
    parser.add_argument("--batch", type=int, default=8,
                        help="test sentences greedy-decoded at once in part 1")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--profile", action="store_true",
                        help="also profile greedy decoding at the longest length")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "decoding.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, src_vocab, tgt_vocab = il.pretrained(args.corpus)
    pairs, _, _ = il.data.load_corpus(args.corpus, "test")
    sentence = pairs[0][0]
    special = dict(bos_id=tgt_vocab.bos_id, eos_id=tgt_vocab.eos_id)
    ids = src_vocab.encode(sentence)
    endless = endless_copy(model, max(args.lengths), tgt_vocab.eos_id)
    wide = wider_model(model.cfg.src_vocab_size, model.cfg.tgt_vocab_size, max(args.lengths),
                       tgt_vocab.eos_id)
    sources = [src_vocab.encode(s) for s, _ in pairs[:args.batch]]
    batch = torch.full((len(sources), max(map(len, sources))), model.cfg.pad_id)
    for row, source in enumerate(sources):  # padded at the end, as exact_match pads
        batch[row, :len(source)] = torch.tensor(source)
    # the longest calls of the shipped model run 15 times: the machine's speed changes by up to 1.8x
    # for seconds at a time, and the fastest of 7 was sometimes still a slow one
    cache = {"shipped": cache_part(endless, ids, special, args.lengths, args.beam, 7, 15, batch),
             "wider": cache_part(wide, ids, special, args.lengths, args.beam, 2, 1, batch)}
    split = test_split_part(model, src_vocab, tgt_vocab, args.corpus, args.beams)
    report = {"corpus": args.corpus, "threads": args.threads, "sentence": sentence,
              "torch": torch.__version__, "machine": platform.processor() or platform.machine(),
              "load_average": round(os.getloadavg()[0], 2),
              "how_the_length_is_forced": "a copy of the shipped model whose <eos> logit is "
                                          "lowered by 1e4 (never chosen); positional table "
                                          f"extended to {max(args.lengths)} positions",
              "models": {"shipped": f"{args.corpus}: {endless.cfg.d_model=}, "
                                    f"{endless.cfg.n_layers=}, {endless.cfg.d_ff=}",
                         "wider": f"untrained, float64: {wide.cfg.d_model=}, "
                                  f"{wide.cfg.n_layers=}, {wide.cfg.d_ff=}"},
              "cache": cache, "test_split": split}
    if args.profile:
        report["profile_greedy"] = {"tokens": max(args.lengths), **profile_part(
            endless, ids, special, max(args.lengths))}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
