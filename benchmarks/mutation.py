"""A small mutation run over modules/ and decoding.py: which hand-written bugs do the tests catch?

Each mutant is one source-text replacement applied to a temporary copy of ``src/`` (never to the
tree itself); a fast subset of the tests then runs against the copy (``PYTHONPATH`` points at it,
checked before the run). A mutant is killed when the subset fails, survives when it passes.
Survivors are written to ``benchmarks/results/mutation.json`` with the note that explains them.
A benchmark-style tool, kept out of CI: ``.venv/bin/python benchmarks/mutation.py [--only NAME]``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "mutation.json"
TESTS = ["tests/modules", "tests/test_decoding.py", "tests/test_beam_exhaustive.py",
         "tests/test_padding_equivalence.py", "tests/reference/test_encoder.py",
         "tests/reference/test_decoder.py"]

# (name, file under src/illustrated, original text, mutated text); each original occurs once.
MUTANTS = [
    ("residual: dropout after the norm", "modules/residual.py",
     "return norm(x + dropout(sublayer_out))", "return dropout(norm(x + sublayer_out))"),
    ("residual: pre-LN dropout deleted", "modules/residual.py",
     "return x + dropout(sublayer_out)", "return x + sublayer_out"),
    ("residual: post-LN without the residual", "modules/residual.py",
     "return norm(x + dropout(sublayer_out))", "return norm(dropout(sublayer_out))"),
    ("positional: dropout deleted", "modules/positional.py",
     "return self.dropout(x + self.pe[:seq].to(x.dtype))", "return x + self.pe[:seq].to(x.dtype)"),
    ("transformer: positional encoding built without dropout", "modules/transformer.py",
     "PositionalEncoding(cfg.d_model, cfg.max_len, cfg.pe_layout, cfg.dropout)",
     "PositionalEncoding(cfg.d_model, cfg.max_len, cfg.pe_layout)"),
    ("positional: concatenated timescales over half instead of half - 1", "modules/positional.py",
     "increment = math.log(10000.0) / max(half - 1, 1)", "increment = math.log(10000.0) / half"),
    ("embeddings: no sqrt(d_model) scale", "modules/embeddings.py",
     "return self.lut(ids) * self.scale", "return self.lut(ids)"),
    ("attention: scores divided by d_k, not sqrt(d_k)", "modules/self_attention.py",
     "scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)", "scores = q @ k.transpose(-2, -1) / d_k"),
    ("attention: dropout on the weights deleted", "modules/self_attention.py",
     "weights = dropout(weights)", "weights = weights"),
    ("feed-forward: dropout after the ReLU deleted", "modules/feed_forward.py",
     "self.linear2(self.dropout(torch.relu(self.linear1(x))))",
     "self.linear2(torch.relu(self.linear1(x)))"),
    ("decoder: cross attention without the source mask", "modules/decoder.py",
     "self.cross_attn(h, memory, memory, src_mask, return_attention=True)",
     "self.cross_attn(h, memory, memory, None, return_attention=True)"),
    ("beam: stop bound uses length_penalty(step)", "decoding.py",
     "bound = max(kept_scores) / length_penalty(max_len, alpha)",
     "bound = max(kept_scores) / length_penalty(step, alpha)"),
    ("beam: length penalty (6 + len) / 6", "decoding.py",
     "return ((5.0 + length) / 6.0) ** alpha", "return ((6.0 + length) / 6.0) ** alpha"),
    ("beam: only beam_size candidates a step", "decoding.py",
     "n_cand = min(2 * beam_size, int(torch.isfinite(totals).sum()))",
     "n_cand = min(beam_size, int(torch.isfinite(totals).sum()))"),
    ("decoding: <pad> may be generated", "decoding.py",
     "log_probs[:, [bos_id, model.cfg.tgt_pad_id]] = float(\"-inf\")",
     "log_probs[:, [bos_id]] = float(\"-inf\")"),
    ("greedy batch: source padding mask dropped", "decoding.py",
     "        memory = model.encode(src, src_mask)  # (batch, src_len, d_model)\n        tgt = ",
     "        memory = model.encode(src, src_mask)  # (batch, src_len, d_model)\n"
     "        src_mask = None\n        tgt = "),
    ("greedy batch: stops at the first <eos> of any row", "decoding.py",
     "if bool(done.all()):", "if bool(done.any()):"),
    ("beam: <eos> ranked below beam_size also finishes", "decoding.py",
     "if rank < beam_size:", "if True:"),
    ("EvalMode: the model's mode not restored", "decoding.py",
     "self.model.train(self.was_training)", "self.model.eval()"),
    ("attention: masked scores -1e4 instead of -inf", "modules/self_attention.py",
     "scores = scores.masked_fill(~mask, float(\"-inf\"))",
     "scores = scores.masked_fill(~mask, -1e4)"),
    ("encoder: pre-LN stack without its final LayerNorm", "modules/encoder.py",
     "self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()",
     "self.norm = nn.Identity()"),
    ("transformer: decoder without the causal mask", "modules/transformer.py",
     "return self.decoder(y, memory, src_mask, tgt_mask, return_attention=return_attention)",
     "return self.decoder(y, memory, src_mask, None, return_attention=return_attention)"),
    ("batched attention: softmax over queries, not keys", "modules/batched_attention.py",
     "weights = scores.transpose(0, 1).softmax(dim=0).transpose(0, 1)",
     "weights = scores.softmax(dim=-1)"),
    ("batched attention: no 1/sqrt(d_k) folded into W_Q", "modules/batched_attention.py",
     "scale = 1.0 / math.sqrt(d_k)", "scale = 1.0"),
    ("batched attention: the mask's bias not added", "modules/batched_attention.py",
     "torch.bmm(k, kq) if bias is None else torch.baddbmm(bias, k, kq)", "torch.bmm(k, kq)"),
    ("batched attention: dropout on the weights deleted", "modules/batched_attention.py",
     "weights = F.dropout(weights, dropout_p)", "weights = weights"),
    ("batched attention: heads concatenated in the wrong order", "modules/batched_attention.py",
     ".permute(1, 2, 0, 3).reshape(batch, seq, n_heads * d_k)",
     ".permute(1, 2, 3, 0).reshape(batch, seq, n_heads * d_k)"),
    ("batched attention: dropout also in eval mode", "modules/multi_head.py",
     "z = attend_keys_first(q, k, v, bias, self.dropout.p if self.training else 0.0)",
     "z = attend_keys_first(q, k, v, bias, self.dropout.p)"),
    ("batched attention: cross-attention values projected by W_K", "modules/multi_head.py",
     "k, v = project_heads(key, [wk, wv], [bk, bv], self.n_heads)",
     "k, v = project_heads(key, [wk, wk], [bk, bk], self.n_heads)"),
    ("encoder: the feed-forward's residual dropout is dropout1", "modules/encoder.py",
     "x = add_and_norm(x, r, self.norm2, self.dropout2, self.norm_first)",
     "x = add_and_norm(x, r, self.norm2, self.dropout1, self.norm_first)"),
]

# Why a survivor is allowed to survive (filled in after a run; see the report in mutation.json).
EXPLAINED: dict[str, str] = {
    "encoder: the feed-forward's residual dropout is dropout1":
        "an equivalent mutant: dropout1 and dropout2 are stateless nn.Dropout(cfg.dropout) "
        "modules of one rate, so either draws the same mask from the same random stream; no "
        "test can tell them apart (the two exist so that a reader sees one per sub-layer)",
}


def run_tests(src: Path, timeout: float) -> tuple[bool, float, str]:
    """Run the subset against ``src``; (passed, seconds, last line of output)."""
    env = dict(os.environ, PYTHONPATH=str(src), MPLBACKEND="Agg")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                           *TESTS], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode == 0, time.perf_counter() - start, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the mutants whose name contains this")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    mutants = [m for m in MUTANTS if not args.only or args.only in m[0]]
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
        probe = subprocess.run([sys.executable, "-c", "import illustrated; print(illustrated.__file__)"],
                               env=dict(os.environ, PYTHONPATH=str(src)), capture_output=True,
                               text=True, check=True).stdout.strip()
        if not probe.startswith(str(src)):
            sys.exit(f"the tests would import {probe}, not the copy under {src}")
        passed, seconds, line = run_tests(src, args.timeout)
        if not passed:
            sys.exit(f"the unmutated copy fails the subset: {line}")
        print(f"baseline: passes in {seconds:.1f} s ({line})", flush=True)
        results = []
        for name, rel, old, new in mutants:
            path = src / "illustrated" / rel
            original = path.read_text()
            if original.count(old) != 1:
                sys.exit(f"{name}: the original text occurs {original.count(old)} times in {rel}")
            path.write_text(original.replace(old, new))
            try:
                passed, seconds, line = run_tests(src, args.timeout)
            finally:
                path.write_text(original)
                shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)
            status = "survived" if passed else "killed"
            print(f"{status:8s} {seconds:6.1f} s  {name}: {line}", flush=True)
            results.append({"mutant": name, "file": f"src/illustrated/{rel}", "status": status,
                            "seconds": round(seconds, 1), "last_line": line})
    survivors = [r for r in results if r["status"] == "survived"]
    for r in survivors:
        r["note"] = EXPLAINED.get(r["mutant"], "unexplained")
    report = {"tests": TESTS, "mutants": len(results),
              "killed": len(results) - len(survivors), "survived": len(survivors),
              "survivors": survivors, "all": results}
    if not args.only:
        RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"{report['killed']} killed, {report['survived']} survived of {len(results)}")


if __name__ == "__main__":
    main()
