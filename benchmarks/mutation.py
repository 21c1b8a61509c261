"""A small mutation run: which hand-written bugs do the tests catch?

Each mutant is one source-text replacement applied to a temporary copy of ``src/`` (never to the
tree itself); the fast subset of tests of its area then runs against the copy (``PYTHONPATH``
points at it, checked before the run). A mutant is killed when the subset fails, survives when
it passes. Areas: the modules and decoding; training (schedule, label smoothing and padding in
the loss, accumulation, resume); checkpoints and the shipped weights; the atomic writer; the
ONNX export; data (tokenizer, vocabulary, pairs files, batching); tracing. Survivors are written
to ``benchmarks/results/mutation.json`` with the note that explains them.
A benchmark-style tool, kept out of CI (102 mutants; the modules area, 43 of them, took 6 minutes
on 2 cores):
``.venv/bin/python benchmarks/mutation.py [--only NAME] [--area AREA]``.
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
#: The tests each area's mutants run against (-x: the first failure kills).
AREAS = {
    "modules": ["tests/modules", "tests/test_decoding.py", "tests/test_beam_exhaustive.py",
                "tests/test_padding_equivalence.py", "tests/reference/test_encoder.py",
                "tests/reference/test_decoder.py"],
    "training": ["tests/test_training_resume_accum.py", "tests/test_resume_fingerprint.py",
                 "tests/test_training.py", "tests/test_cli_pairs.py"],
    "checkpoint": ["tests/test_checkpoint_faults.py", "tests/test_shipped.py",
                   "tests/test_resume_fingerprint.py", "tests/test_cli_faults.py"],
    "atomic": ["tests/test_atomic.py", "tests/test_checkpoint_faults.py",
               "tests/test_cli_faults.py"],
    "onnx": ["tests/test_onnx_export.py"],
    "data": ["tests/data", "tests/test_pairs_file.py", "tests/test_cli_pairs.py"],
    "tracing": ["tests/test_trace.py", "tests/test_trace_probs.py"],
}

# (name, file under src/illustrated, original text, mutated text); each original occurs once.
# The modules and decoding (area "modules"):
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
     "self.cross_attn(h, memory, memory, src_mask, check=False)",
     "self.cross_attn(h, memory, memory, None, check=False)"),
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
     "return self.decoder(y, memory, src_mask, tgt_mask, return_attention, check=False)",
     "return self.decoder(y, memory, src_mask, None, return_attention, check=False)"),
    ("batched attention: softmax over queries, not keys", "modules/batched_attention.py",
     "weights = keys_outermost.softmax(dim=0)", "weights = keys_outermost.softmax(dim=3)"),
    ("batched attention: no 1/sqrt(d_k)", "modules/batched_attention.py",
     "scores = torch.add(mask_bias(mask, scores.dtype), scores, alpha=1.0 / math.sqrt(d_k))",
     "scores = torch.add(mask_bias(mask, scores.dtype), scores)"),
    ("batched attention: the mask's bias not added", "modules/batched_attention.py",
     "scores = torch.add(mask_bias(mask, scores.dtype), scores, alpha=1.0 / math.sqrt(d_k))",
     "scores = scores.mul(1.0 / math.sqrt(d_k))"),
    ("batched attention: the mask's bias laid out query-first", "modules/batched_attention.py",
     "key_first = mask.transpose(-2, -1)", "key_first = mask"),
    ("batched attention: dropout on the weights deleted", "modules/batched_attention.py",
     "weights = F.dropout(weights, dropout_p)", "weights = weights"),
    ("batched attention: weights times values of the wrong query", "modules/batched_attention.py",
     "weights = weights.view(seq_k, batch * n_heads, seq_q).permute(1, 2, 0)",
     "weights = weights.view(seq_k, batch * n_heads, seq_q).permute(1, 0, 2)"),
    ("batched attention: dropout also in eval mode", "modules/multi_head.py",
     "z = kernel(q, k, v, mask, self.dropout.p if self.training else 0.0)",
     "z = kernel(q, k, v, mask, self.dropout.p)"),
    ("kernel: torch's fused kernel on a CPU too", "modules/multi_head.py",
     'return attend_keys_first if device.type == "cpu" else F.scaled_dot_product_attention',
     "return F.scaled_dot_product_attention"),
    ("kernel: keys-first on every device", "modules/multi_head.py",
     'return attend_keys_first if device.type == "cpu" else F.scaled_dot_product_attention',
     "return attend_keys_first"),
    ("attention: heads concatenated in the wrong order", "modules/multi_head.py",
     "concat = z.transpose(1, 2).reshape(batch, seq_q, self.d_model)",
     "concat = z.transpose(2, 3).reshape(batch, seq_q, self.d_model)"),
    ("attention: values projected by W_K", "modules/multi_head.py",
     "v = self.split_heads(self.w_v(value))", "v = self.split_heads(self.w_k(value))"),
    ("hooks: W_K's weight read instead of W_K called", "modules/multi_head.py",
     "k = self.split_heads(self.w_k(key))",
     "k = self.split_heads(F.linear(key, self.w_k.weight, self.w_k.bias))"),
    ("hooks: W_O's weight read instead of W_O called", "modules/multi_head.py",
     "out = self.w_o(concat)", "out = F.linear(concat, self.w_o.weight, self.w_o.bias)"),
    ("hooks: the feed-forward's linear1 read, not called", "modules/feed_forward.py",
     "self.linear2(self.dropout(torch.relu(self.linear1(x))))",
     "self.linear2(self.dropout(torch.relu(torch.nn.functional.linear(x, self.linear1.weight, "
     "self.linear1.bias))))"),
    ("hooks: the encoder stack calls its layers' forward", "modules/encoder.py",
     "x = layer(x, mask, check=False)", "x = layer.forward(x, mask, check=False)"),
    ("hooks: the decoder layer calls its norm's forward", "modules/decoder.py",
     "h = sublayer_input(x, self.norm3, self.norm_first)",
     "h = sublayer_input(x, self.norm3.forward, self.norm_first)"),
    ("residual: post-LN dropout deleted", "modules/residual.py",
     "return norm(x + dropout(sublayer_out))", "return norm(x + sublayer_out)"),
    ("residual: post-LN Add & Norm without the norm", "modules/residual.py",
     "return norm(x + dropout(sublayer_out))", "return x + dropout(sublayer_out)"),
    ("checks: a source of padding only accepted", "modules/_checks.py",
     "if bool(only_padding.any()):  # one read of the values", "if False:"),
    ("checks: a mask row with no key accepted", "modules/_checks.py",
     "if not bool(mask.any(dim=-1).all()):  # one read of the values", "if False:"),
    ("encoder: the feed-forward's residual dropout is dropout1", "modules/encoder.py",
     "x = add_and_norm(x, r, self.norm2, self.dropout2, self.norm_first)",
     "x = add_and_norm(x, r, self.norm2, self.dropout1, self.norm_first)"),
]
AREA_OF = {name: "modules" for name, *_ in MUTANTS}


def _area(area: str, mutants: list) -> None:
    """Add ``mutants`` to MUTANTS under ``area``."""
    MUTANTS.extend(mutants)
    AREA_OF.update({name: area for name, *_ in mutants})


_area("training", [
    ("schedule: noam decays as 1/step, not 1/sqrt(step)", "training.py",
     "return lr * math.sqrt(warmup / step)", "return lr * warmup / step"),
    ("schedule: warm-up one step late", "training.py",
     "return lr * step / warmup", "return lr * (step - 1) / warmup"),
    ("schedule: cosine without its 1/2", "training.py",
     "return lr * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))",
     "return lr * (1.0 + math.cos(math.pi * min(progress, 1.0)))"),
    ("loss: label smoothing dropped", "training.py",
     "ignore_index=tgt_vocab.pad_id,\n                                           "
     "label_smoothing=label_smoothing)",
     "ignore_index=tgt_vocab.pad_id)"),
    ("loss: <pad> positions counted", "training.py",
     "loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),\n"
     "                                           ignore_index=tgt_vocab.pad_id,",
     "loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),\n"
     "                                           "),
    ("accumulation: <pad> positions counted", "training.py",
     'reduction="sum", ignore_index=tgt_vocab.pad_id,', 'reduction="sum",'),
    ("accumulation: tokens counted without <eos>", "training.py",
     "tokens = sum(len(encoded[i][1]) + 1 for i in idx)",
     "tokens = sum(len(encoded[i][1]) for i in idx)"),
    ("accumulation: micro-batches overlap", "training.py",
     "for i in shard[m::accum]]", "for i in shard[m:m + len(shard) // accum]]"),
    ("Adam: beta2 0.999 instead of the paper's 0.98", "training.py",
     "betas=(0.9, 0.98), eps=1e-9,", "betas=(0.9, 0.999), eps=1e-9,"),
    ("clipping: never clips", "training.py",
     "clip_grad if clip_grad > 0 else math.inf)", "math.inf)"),
    ("resume: repeats the checkpoint's step", "training.py",
     'first = resumed["step"] + 1', 'first = resumed["step"]'),
    ("resume: global RNG states not restored", "training.py",
     '_set_rng_state(resumed["rng"], device)', "pass"),
    ("resume: the epoch's batch order dropped", "training.py",
     'order = list(resumed["order"])', "order = []"),
    ("resume: other data accepted", "training.py",
     'if training["data"] != data:', "if False:"),
    ("resume: the data fingerprint ignores the vocabularies", "training.py",
     '        h.update(("\\x1f".join(tokens) + "\\x1e").encode("utf-8"))\n', ""),
    ("exact match: references cut to the vocabulary", "training.py",
     "targets = [reference(t) for _, t in pairs]",
     "targets = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]"),
    ("divergence: the weights not restored", "training.py",
     "                    for p, old in zip(params, before):\n                        "
     "p.copy_(old)\n", "                    pass\n"),
])

_area("checkpoint", [
    ("save: non-finite weights written", "checkpoint.py",
     "if not bool(torch.isfinite(value).all()):", "if False:"),
    ("load: the model left in training mode", "checkpoint.py",
     "    model.load_state_dict(state)\n    model.eval()\n",
     "    model.load_state_dict(state)\n"),
    ("load: vocabulary and config may disagree", "checkpoint.py",
     "        if len(vocab) != size or vocab.pad_id != pad:\n            raise ValueError(f\"has a",
     "        if False:\n            raise ValueError(f\"has a"),
    ("resume: checksums not compared", "checkpoint.py",
     "if digest.get(key) != _digest(value):", "if False:"),
    ("resume: checksums blind to tensor contents", "checkpoint.py",
     'h.update(t.view(torch.uint8).numpy() if t.numel() else b"")', "pass"),
    ("resume: NaN in the history accepted", "checkpoint.py",
     "                    or not math.isfinite(value):", "                    or False:"),
    ("resume: repeated batch-order indices accepted", "checkpoint.py",
     "            or len(set(order)) != len(order):", "            or False:"),
    ("resume: Adam moments of another shape accepted", "checkpoint.py",
     "if not isinstance(value, torch.Tensor) or value.shape != params[index].shape \\",
     "if not isinstance(value, torch.Tensor) \\"),
    ("size estimate: without Adam's moments", "checkpoint.py",
     "size += 8 * weights + 3 * 512 * tensors", "size += 3 * 512 * tensors"),
    ("shipped: sha256 not checked", "presets.py",
     'if sha256(path) != entry["sha256"]:', "if False:"),
    ("shipped: manifest entries without a sha256 accepted", "presets.py",
     'or not isinstance(entry.get("sha256"), str) or len(entry["sha256"]) != 64:',
     "or False:"),
    ("pretrained: the seed checked only when retraining", "presets.py",
     "    check_int(\"seed\", seed, low=0, high=MAX_SEED)\n    chosen", "    chosen"),
])

_area("atomic", [
    ("writer: no fsync before the rename", "_atomic.py",
     "                os.fsync(file.fileno())\n", ""),
    ("writer: read-only files replaced", "_atomic.py",
     "if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):", "if False:"),
    ("writer: a symbolic link replaced by a file", "_atomic.py",
     "    if target.is_symlink():  # write", "    if False:  # write"),
    ("writer: free space not required", "_atomic.py",
     "if free < need_bytes:", "if free < 0:"),
    ("writer: the temporary file left behind", "_atomic.py",
     "            with contextlib.suppress(OSError):\n                os.unlink(tmp)",
     "            with contextlib.suppress(OSError):\n                pass"),
    ("writer: a new file private (mkstemp's 0600)", "_atomic.py",
     "        with contextlib.suppress(OSError):\n            os.chmod(",
     "        with contextlib.suppress(OSError):\n            (lambda *a: None)("),
    ("writer: torch's wrapped Ctrl-C left a RuntimeError", "_atomic.py",
     "                raise KeyboardInterrupt from None", "                break"),
    ("writer: a failed write is an OSError with no file named", "_atomic.py",
     "        except OSError as error:\n            raise _failed(name, shown, error) from error\n"
     "        done = True",
     "        except OSError:\n            raise\n        done = True"),
])

_area("onnx", [
    ("onnx: the decoder step's causal mask upper-triangular", "onnx_export.py",
     "causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()",
     "causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).triu()"),
    ("onnx: encoder embeddings without sqrt(d_model)", "onnx_export.py",
     "x = m.positional(m.src_embed.lut(src) * m.src_embed.scale)",
     "x = m.positional(m.src_embed.lut(src))"),
    ("onnx: log_probs are probabilities", "onnx_export.py",
     "return (logits, logits.log_softmax(dim=-1),", "return (logits, logits.softmax(dim=-1),"),
    ("onnx: the vocabulary file's bos_id is <eos>", "onnx_export.py",
     '"bos_id": tgt_vocab.bos_id,', '"bos_id": tgt_vocab.eos_id,'),
    ("onnx: debugging records kept", "onnx_export.py",
     "    return _strip_metadata(proto).SerializeToString()",
     "    return proto.SerializeToString()"),
    ("onnx: index.json sizes of another file", "onnx_export.py",
     'return {"files": files, "bytes": {k: len(contents[k]) for k in files}}',
     'return {"files": files, "bytes": {k: len(contents["encoder"]) for k in files}}'),
])

# A mutant whose text is gone from the code must be re-targeted (tests/test_mutation_targets.py).
_area("data", [
    ("tokenizer: no lower-casing", "data/tokenizer.py",
     r"""normalize(text.replace("\u2019", "'").lower())""",
     r"""normalize(text.replace("\u2019", "'"))"""),
    ("tokenizer: typographic apostrophe kept", "data/tokenizer.py",
     r"""normalize(text.replace("\u2019", "'").lower())""",
     """normalize(text.lower())"""),
    ("vocabulary: min_count exclusive", "data/pairs_file.py",
     "if c >= min_count)", "if c > min_count)"),
    ("vocabulary: ties in file order", "data/pairs_file.py",
     "key=lambda w: (-counts[w], w))", "key=lambda w: -counts[w])"),
    ("vocabulary: unknown words encoded as <pad>", "data/vocab.py",
     "return [self._ids.get(t, self.unk_id) for t in tokenize(sentence)]",
     "return [self._ids.get(t, self.pad_id) for t in tokenize(sentence)]"),
    ("pairs file: byte-order mark kept", "data/pairs_file.py",
     r'text = text.removeprefix("\ufeff")', "text = text"),
    ("pairs file: a test split of 0 pairs", "data/pairs_file.py",
     "n_test = min(max(round(test_fraction * len(pairs)), 1), len(pairs) - 1)",
     "n_test = min(round(test_fraction * len(pairs)), len(pairs) - 1)"),
    ("batching: targets without <eos>", "data/batching.py",
     "out_rows = [[*t, tgt_vocab.eos_id,", "out_rows = [[*t, tgt_vocab.pad_id,"),
])

_area("tracing", [
    ("trace: scores divided by d_k", "tracing.py",
     "scaled = (scores / math.sqrt(mha.d_k))", "scaled = (scores / mha.d_k)"),
    ("trace: Add & Norm's sum read from the sub-layer's input", "tracing.py",
     'stream[j + 1] if norm_first else norms[j][0]["input"], stream[j + 1]',
     'stream[j + 1] if norm_first else stream[j], stream[j + 1]'),
    ("trace: positions one off", "tracing.py",
     "to_numpy(positions[:x.shape[1]])", "to_numpy(positions[1:x.shape[1] + 1])"),
    ("trace: hidden layer read before the ReLU", "tracing.py",
     'calls[f"{name}.feed_forward.linear2"][0]["input"]',
     'calls[f"{name}.feed_forward.linear1"][1]'),
    ("trace: memory keys projected by W_V", "tracing.py",
     "memory_keys=[_np(a.split_heads(a.w_k(memory)))", "memory_keys=[_np(a.split_heads(a.w_v(memory)))"),
    ("trace: queries read from W_K's call", "tracing.py",
     'q, k, v = (mha.split_heads(calls[f"{name}.w_{x}"][1]) for x in "qkv")',
     'q, k, v = (mha.split_heads(calls[f"{name}.w_{x}"][1]) for x in "kkv")'),
    ("trace: the W_O input read as W_O's output", "tracing.py",
     'concat = calls[f"{name}.w_o"][0]["input"]', 'concat = calls[f"{name}.w_o"][1]'),
    ("trace: softmax without subtracting the max", "tracing.py",
     "shifted = np.exp(self.logits - self.logits.max(axis=-1, keepdims=True))",
     "shifted = np.exp(self.logits)"),
])

# Why a survivor is allowed to survive (filled in after a run; see the report in mutation.json).
EXPLAINED: dict[str, str] = {}  # "encoder: ... dropout1" is killed since the hooks test


def run_tests(src: Path, area: str, timeout: float) -> tuple[bool, float, str]:
    """Run the area's subset against ``src``; (passed, seconds, last line of output)."""
    env = dict(os.environ, PYTHONPATH=str(src), MPLBACKEND="Agg")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                           *AREAS[area]], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode == 0, time.perf_counter() - start, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the mutants whose name contains this")
    parser.add_argument("--area", choices=tuple(AREAS), help="run only this area's mutants")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    mutants = [m for m in MUTANTS if (not args.only or args.only in m[0])
               and (not args.area or AREA_OF[m[0]] == args.area)]
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
        probe = subprocess.run([sys.executable, "-c", "import illustrated; print(illustrated.__file__)"],
                               env=dict(os.environ, PYTHONPATH=str(src)), capture_output=True,
                               text=True, check=True).stdout.strip()
        if not probe.startswith(str(src)):
            sys.exit(f"the tests would import {probe}, not the copy under {src}")
        for name, rel, old, _ in mutants:  # every mutant applies, before anything runs
            count = (src / "illustrated" / rel).read_text().count(old)
            if count != 1:
                sys.exit(f"{name}: the original text occurs {count} times in {rel}")
        for area in dict.fromkeys(AREA_OF[m[0]] for m in mutants):
            passed, seconds, line = run_tests(src, area, args.timeout)
            if not passed:
                sys.exit(f"the unmutated copy fails the {area} subset: {line}")
            print(f"baseline {area}: passes in {seconds:.1f} s ({line})", flush=True)
        results = []
        for name, rel, old, new in mutants:
            path = src / "illustrated" / rel
            original = path.read_text()
            path.write_text(original.replace(old, new))
            try:
                passed, seconds, line = run_tests(src, AREA_OF[name], args.timeout)
            finally:
                path.write_text(original)
                shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)
            status = "survived" if passed else "killed"
            print(f"{status:8s} {seconds:6.1f} s  {name}: {line}", flush=True)
            results.append({"mutant": name, "area": AREA_OF[name],
                            "file": f"src/illustrated/{rel}", "status": status,
                            "seconds": round(seconds, 1), "last_line": line})
    survivors = [r for r in results if r["status"] == "survived"]
    for r in survivors:
        r["note"] = EXPLAINED.get(r["mutant"], "unexplained")
    areas = {}
    for area in AREAS:
        mine = [r for r in results if r["area"] == area]
        if mine:
            killed = sum(r["status"] == "killed" for r in mine)
            explained = sum(r["status"] == "survived" and r["mutant"] in EXPLAINED for r in mine)
            areas[area] = {"mutants": len(mine), "killed": killed,
                           "survived_equivalent": explained,
                           "score": round(killed / (len(mine) - explained), 3)}
    report = {"tests": AREAS, "mutants": len(results),
              "killed": len(results) - len(survivors), "survived": len(survivors),
              "areas": areas, "survivors": survivors, "all": results}
    if not args.only and not args.area:  # a partial run leaves the report of the full one
        RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"{report['killed']} killed, {report['survived']} survived of {len(results)}")


if __name__ == "__main__":
    main()
