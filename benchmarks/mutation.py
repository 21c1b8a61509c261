"""A small mutation run: which hand-written bugs do the tests catch?

Each mutant is one source-text replacement applied to a temporary copy of ``src/`` (never to the
tree itself); the fast subset of tests of its area then runs against the copy (``PYTHONPATH``
points at it, checked before the run). A mutant is killed when the subset fails, survives when
it passes. Areas: the modules and decoding; training (schedule, label smoothing and padding in
the loss, accumulation, resume); checkpoints and the shipped weights; the atomic writer; the
ONNX export; data (tokenizer, vocabulary, pairs files, batching); tracing; files (a set's
lock and kind, the package's own files, the safetensors reader); the book (a figure's layer).
Survivors are written to ``benchmarks/results/mutation.json`` with the note that explains them.
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
    "modules": ["tests/modules", "tests/inference/test_decoding.py",
                "tests/inference/test_beam_length_penalty.py",
                "tests/test_padding.py", "tests/reference/test_encoder.py",
                "tests/reference/test_decoder.py"],
    "training": ["tests/training/test_schedules.py", "tests/training/test_training_options.py",
                 "tests/files/test_training_state.py", "tests/training/test_training.py",
                 "tests/test_recipe.py", "tests/training/test_training_tokens.py",
                 "tests/test_api_arguments.py", "tests/commands/test_train_pairs.py"],
    "checkpoint": ["tests/files/test_checkpoint.py", "tests/commands/test_shipped.py",
                   "tests/files/test_training_state.py", "tests/commands/test_cli.py"],
    "atomic": ["tests/files/test_atomic.py", "tests/files/test_bounded.py", "tests/files/test_file_set.py",
               "tests/files/test_checkpoint.py", "tests/commands/test_cli.py"],
    "onnx": ["tests/commands/test_onnx_export.py"],
    "data": ["tests/data", "tests/data/test_pairs_file.py", "tests/commands/test_train_pairs.py"],
    "tracing": ["tests/inference/test_tracing.py", "tests/inference/test_tracing_probabilities.py"],
    "files": ["tests/files/test_file_set_lock.py", "tests/files/test_safetensors_crafted.py",
              "tests/files/test_atomic.py", "tests/files/test_bounded.py",
              "tests/files/test_file_set.py"],
    "book": ["tests/book/test_figure_titles.py"],
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
     "return self.dropout(x + self.pe[start:start + seq].to(x.dtype))",
     "return x + self.pe[start:start + seq].to(x.dtype)"),
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
     "self.cross_attn(h, memory, memory, src_mask, cache=cross_cache)",
     "self.cross_attn(h, memory, memory, None, cache=cross_cache)"),
    ("beam: stop bound uses length_penalty(step)", "inference/decoding.py",
     "bound = max(kept_scores) / length_penalty(max_len, alpha)",
     "bound = max(kept_scores) / length_penalty(step, alpha)"),
    ("beam: length penalty (6 + len) / 6", "inference/decoding.py",
     "return ((5.0 + length) / 6.0) ** alpha", "return ((6.0 + length) / 6.0) ** alpha"),
    ("beam: only beam_size candidates a step", "inference/decoding.py",
     "n_cand = min(2 * beam_size, int(torch.isfinite(totals).sum()))",
     "n_cand = min(beam_size, int(torch.isfinite(totals).sum()))"),
    ("decoding: <pad> may be generated", "inference/decoding.py",
     "self.banned = torch.tensor([bos_id, model.cfg.tgt_pad_id], device=src.device)",
     "self.banned = torch.tensor([bos_id], device=src.device)"),
    ("greedy batch: source padding mask dropped", "inference/decoding.py",
     "self.src_mask = None if bool(src_mask.all()) else src_mask",
     "self.src_mask = None"),
    ("greedy batch: stops at the first <eos> of any row", "inference/decoding.py",
     "if all(done):", "if any(done):"),
    ("beam: <eos> ranked below beam_size also finishes", "inference/decoding.py",
     "if rank < beam_size:", "if True:"),
    ("EvalMode: the model's mode not restored", "inference/decoding.py",
     "self.model.train(self.was_training)", "self.model.eval()"),
    ("attention: masked scores -1e4 instead of -inf", "modules/self_attention.py",
     "scores = scores.masked_fill(~mask, float(\"-inf\"))",
     "scores = scores.masked_fill(~mask, -1e4)"),
    ("encoder: pre-LN stack without its final LayerNorm", "modules/encoder.py",
     "self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()",
     "self.norm = nn.Identity()"),
    ("transformer: decoder without the causal mask", "modules/transformer.py",
     "return self.decoder(y, memory, src_mask, tgt_mask, cache=cache)",
     "return self.decoder(y, memory, src_mask, None, cache=cache)"),
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
    ("batched attention: dropout also in eval mode", "modules/attend.py",
     "p = dropout.p if dropout is not None and dropout.training else 0.0",
     "p = dropout.p if dropout is not None else 0.0"),
    ("kernel: torch's fused kernel (CUDA, MPS) called without the mask", "modules/attend.py",
     "return kernel(q, k, v, mask, p), None",
     "return kernel(q, k, v, mask if kernel is attend_keys_first else None, p), None"),
    ("kernel: torch's fused kernel on a CPU too", "modules/attend.py",
     'return attend_keys_first if device.type == "cpu" else fused_attention',
     "return fused_attention"),
    ("kernel: keys-first on every device", "modules/attend.py",
     'return attend_keys_first if device.type == "cpu" else fused_attention',
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
     "x = layer(x, mask)  # (batch", "x = layer.forward(x, mask)  # (batch"),
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
    ("beam: early stop compares with the best finished hypothesis, not the top_beams-th",
     "inference/decoding.py",
     "kth_best = sorted((s for _, s in finished), reverse=True)[top_beams - 1]",
     "kth_best = max(s for _, s in finished)"),
]
AREA_OF = {name: "modules" for name, *_ in MUTANTS}


def _area(area: str, mutants: list) -> None:
    """Add ``mutants`` to MUTANTS under ``area``."""
    MUTANTS.extend(mutants)
    AREA_OF.update({name: area for name, *_ in mutants})


_area("training", [
    # the schedules, at their edges
    ("schedule: noam decays as 1/step, not 1/sqrt(step)", "training/schedules.py",
     "return lr * math.sqrt(warmup / step)", "return lr * warmup / step"),
    ("schedule: warm-up one step late", "training/schedules.py",
     "return lr * step / warmup", "return lr * (step - 1) / warmup"),
    ("schedule: cosine without its 1/2", "training/schedules.py",
     "return lr * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))",
     "return lr * (1.0 + math.cos(math.pi * min(progress, 1.0)))"),
    ("schedule: cosine rises again past the end", "training/schedules.py",
     "math.cos(math.pi * min(progress, 1.0))", "math.cos(math.pi * progress)"),
    ("schedule: cosine's length counts the warm-up", "training/schedules.py",
     "progress = (step - warmup) / max(total_steps - warmup, 1)",
     "progress = (step - warmup) / max(total_steps, 1)"),
    ("schedule: cosine divides by zero when warm-up takes every step", "training/schedules.py",
     "progress = (step - warmup) / max(total_steps - warmup, 1)",
     "progress = (step - warmup) / (total_steps - warmup)"),
    ("schedule: noam without warm-up gives a rate of 0", "training/schedules.py",
     'if schedule == "noam" and warmup > 0:', 'if schedule == "noam":'),
    ("train: the schedule told one step more than the run has", "training/loop.py",
     "rate = learning_rate(step, recipe.lr, recipe.warmup, recipe.schedule, steps)",
     "rate = learning_rate(step, recipe.lr, recipe.warmup, recipe.schedule, steps + 1)"),
    # the one loss-and-accuracy function
    ("loss: label smoothing dropped", "training/objective.py",
     "ignore_index=pad_id,\n                               label_smoothing=label_smoothing)",
     "ignore_index=pad_id)"),
    ("loss: <pad> positions counted", "training/objective.py",
     "tgt_out.flatten(), ignore_index=pad_id,\n",
     "tgt_out.flatten(),\n"),
    ("accuracy: every target token counted right", "training/loop.py",
     "totals += torch.stack([loss.detach().double() * n_tokens, correct.double()])",
     "totals += torch.stack([loss.detach().double() * n_tokens, keep.sum().double()])"),
    ("accumulation: the batch's tokens counted without <eos>", "training/loop.py",
     "return sum(len(self.encoded[i][1]) + 1 for i in idx)",
     "return sum(len(self.encoded[i][1]) for i in idx)"),
    ("accumulation: a micro-batch's tokens counted without <eos>", "training/loop.py",
     "n_tokens = sum(len(tgt) + 1 for _, tgt in micro)",
     "n_tokens = sum(len(tgt) for _, tgt in micro)"),
    ("accumulation: micro-batches overlap", "training/loop.py",
     "rows = shard[m::accum]",
     "rows = shard[m:m + len(shard) // accum]"),
    ("Adam: beta2 0.999 instead of the paper's 0.98", "recipe.py",
     "adam_betas: tuple = _spec((0.9, 0.98),", "adam_betas: tuple = _spec((0.9, 0.999),"),
    ("clipping: never clips", "training/loop.py",
     "params, clip_grad if clip_grad > 0 else math.inf)", "params, math.inf)"),
    ("divergence: the weights not restored", "training/loop.py",
     "            torch._foreach_copy_(params, before)\n",
     "            pass\n"),
    ("divergence: the newer weights restored", "training/loop.py",
     "params, kept[0],", "params, kept[1],"),
    ("checkpoint_every: no checkpoint after the last step", "training/loop.py",
     "(step % checkpoint_every == 0\n                                                           "
     "or step == steps)",
     "(step % checkpoint_every == 0)"),
    # the saved state of a run, and --resume's checks
    ("resume: repeats the checkpoint's step", "files/training_state.py",
     'return resumed["step"] + 1, list(resumed["order"])',
     'return resumed["step"], list(resumed["order"])'),
    ("resume: global RNG states not restored", "files/training_state.py",
     '    _set_rng_state(resumed["rng"], device)\n', ""),
    ("resume: the epoch's batch order dropped", "files/training_state.py",
     'return resumed["step"] + 1, list(resumed["order"])', 'return resumed["step"] + 1, []'),
    ("resume: another config accepted", "files/training_state.py",
     "    if cfg != model.cfg:\n", "    if False:\n"),
    ("resume: other data accepted", "files/training_state.py",
     "    if differ:\n", "    if False:\n"),
    ("resume: the target sentences fingerprinted as the source ones", "files/training_state.py",
     '"targets": ids(1)', '"targets": ids(0)'),
    ("resume: the source vocabulary fingerprinted as the target one", "files/training_state.py",
     '"src_vocab": tokens(src_vocab)', '"src_vocab": tokens(tgt_vocab)'),
    ("resume: another seed accepted", "files/training_state.py",
     'if training["recipe"][key] != value:',
     'if key != "seed" and training["recipe"][key] != value:'),
    ("resume: a saved recipe il.train would refuse accepted", "files/training_state.py",
     "        check_recipe(recipe)\n    except ValueError as error:",
     "        pass\n    except ValueError as error:"),
    ("resume: a finished run resumed with no step left", "files/training_state.py",
     'if training["step"] >= steps:', 'if training["step"] > steps:'),
    ("resume: Adam's betas and amsgrad not compared", "files/training_state.py",
     'if key not in ("params", "lr", "fused", "foreach") and (',
     'if key not in ("params", "lr", "fused", "foreach", "betas", "amsgrad") and ('),
    ("resume: checksums not compared", "files/training_state.py",
     "if digest.get(key) != _digest(value):", "if False:"),
    ("resume: checksums blind to tensor contents", "files/training_state.py",
     'h.update(t.view(torch.uint8).numpy() if t.numel() else b"")', "pass"),
    ("resume: NaN in the history accepted", "files/training_state.py",
     "                    or not math.isfinite(value):", "                    or False:"),
    ("resume: repeated batch-order indices accepted", "files/training_state.py",
     "            or len(set(order)) != len(order):", "            or False:"),
    ("resume: Adam moments of another shape accepted", "files/training_state.py",
     "if not isinstance(value, torch.Tensor) or value.shape != params[index] \\",
     "if not isinstance(value, torch.Tensor) \\"),
    ("resume: the 'it' objective's read-out not restored", "files/training_state.py",
     "        readout.load_state_dict(resumed[REFERENT_KEY])", "        pass"),
    # inference
    ("exact match: references cut to the vocabulary", "inference/translate.py",
     "targets = [expected_translation(t) for _, t in pairs]",
     "targets = [tgt_vocab.decode(tgt_vocab.encode(t)) for _, t in pairs]"),
    ("translate: one sentence answered with a list", "inference/translate.py",
     "                         max_len=max_len)[0]\n", "                         max_len=max_len)\n"),
])

_area("checkpoint", [
    ("save: non-finite weights written", "files/checkpoint.py",
     "if not bool(torch.isfinite(value).all()):", "if False:"),
    ("load: the model left in training mode", "files/checkpoint.py",
     "    model.load_state_dict(state)\n    model.eval()\n",
     "    model.load_state_dict(state)\n"),
    ("load: vocabulary and config may disagree", "files/checkpoint.py",
     '            check_vocab_fits(f"{side} vocabulary", vocab, size, pad)\n',
     "            pass\n"),
    ("load: the file's size not bounded", "files/checkpoint.py",
     'limit=MAX_CHECKPOINT_BYTES)', "limit=None)"),
    ("load: a vocabulary in two Unicode forms refused again", "files/checkpoint.py",
     "vocab = Vocab(tokens, merge_forms=True)", "vocab = Vocab(tokens)"),
    ("size estimate: without Adam's moments", "files/checkpoint.py",
     "size += 8 * weights + 3 * 512 * tensors", "size += 3 * 512 * tensors"),
    ("vocabularies: the fit checks the size only", "data/vocab.py",
     "    if vocab.pad_id != pad_id:\n", "    if False:\n"),
    ("shipped: manifest entries without a sha256 accepted", "pretrained_models.py",
     '                or not isinstance(entry.get("sha256"), str) or len(entry["sha256"]) != 64 \\\n',
     ""),
    ("pretrained: the seed checked only when retraining", "pretrained_models.py",
     "    seed = check_int(\"seed\", seed, low=0, high=MAX_SEED)  # np.int64(1) becomes 1\n"
     "    chosen", "    chosen"),
])

_area("atomic", [
    ("writer: no fsync before the rename", "files/atomic.py",
     "                os.fsync(file.fileno())\n", ""),
    ("writer: read-only files replaced", "files/atomic.py",
     "if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):", "if False:"),
    ("writer: a read-only file system named as a file mode", "files/atomic.py",
     "        if _read_only_mount(parent):\n", "        if False:\n"),
    ("writer: a symbolic link replaced by a file", "files/atomic.py",
     "    if target.is_symlink():  # write", "    if False:  # write"),
    ("writer: free space not required", "files/atomic.py",
     "if free < need_bytes:", "if free < 0:"),
    ("writer: the temporary file left behind", "files/atomic.py",
     "            with contextlib.suppress(OSError):\n                os.unlink(tmp)",
     "            with contextlib.suppress(OSError):\n                pass"),
    ("writer: a new file private (mkstemp's 0600)", "files/atomic.py",
     "        with contextlib.suppress(OSError):\n            os.chmod(",
     "        with contextlib.suppress(OSError):\n            (lambda *a: None)("),
    ("writer: torch's wrapped Ctrl-C left a RuntimeError", "files/atomic.py",
     "                raise KeyboardInterrupt from None", "                break"),
    ("writer: a failed write is an OSError with no file named", "files/atomic.py",
     "        except OSError as error:\n            raise _failed(name, shown, error) from error\n"
     "        except KeyboardInterrupt:",
     "        except OSError:\n            raise\n        except KeyboardInterrupt:"),
    ("writer: Ctrl-C after the rename said to leave the old file", "files/atomic.py",
     "            if _in_place(tmp, target, written):", "            if False:"),
    ("writer: Ctrl-C at the directory's fsync said to leave the old file", "files/atomic.py",
     "            _fsync_directory(target.parent)\n        except KeyboardInterrupt:\n"
     "            raise InterruptedAfterWrite(target) from None",
     "            _fsync_directory(target.parent)\n        except KeyboardInterrupt:\n"
     "            raise"),
    ("writer: the temporary name not cut to fit the file system", "files/atomic.py",
     'prefix=_temporary_prefix(target, ".tmp")', 'prefix=f".{target.name}."'),
    # several files as one transaction
    ("set: members written over the old set's names", "files/file_set.py",
     "path = self.directory / hashed_name(member, digest)", "path = self.directory / member"),
    ("set: new members left behind when the set fails", "files/file_set.py",
     "        if not self.committed:\n", "        if False:\n"),
    ("set: a member in place taken for the set in place", "files/file_set.py",
     "            raise KeyboardInterrupt from None\n", "            raise\n"),
    ("set: the new members removed after Ctrl-C at the index's rename", "files/file_set.py",
     "        except InterruptedAfterWrite:\n            self.committed = True\n            raise",
     "        except InterruptedAfterWrite:\n            raise"),
    ("set: the clean-up removes the new members too", "files/file_set.py",
     "keep = {self.index, *members}", "keep = {self.index}"),
    ("set: the clean-up removes files it does not own", "files/file_set.py",
     "for file in sorted(self.old - keep):",
     "for file in sorted({p.name for p in self.directory.iterdir()} - keep):"),
    ("set: readers do not check a member's sha256", "files/file_set.py",
     'if size != entry["bytes"] or sha256_bytes(data) != entry["sha256"]:',
     'if size != entry["bytes"]:'),
    # readers bounded, inputs never outputs, Ctrl-C at any moment
    ("reader: JSON depth not checked before parsing", "files/bounded.py",
     "if json_depth(text, max_depth) > max_depth:", "if False:"),
    ("reader: a file's size not checked", "files/bounded.py",
     "    if limit is not None and size > limit:\n", "    if False:\n"),
    ("reader: devices and FIFOs read as files", "files/bounded.py",
     "    if not stat.S_ISREG(info.st_mode):\n        os.close(fd)",
     "    if False:\n        os.close(fd)"),
    ("clash: an output never compared with the inputs", "files/clash.py",
     "            if same_file(inp, out):", "            if False:"),
    ("clash: a hard link to an input passes", "files/clash.py",
     "        return os.path.samefile(a, b)", "        return False"),
    ("clash: --out over --resume allowed without --checkpoint-every", "commands/cli.py",
     "            and same_file(args.resume, args.out):", "            and False:"),
    ("start: Ctrl-C while importing is a traceback", "__init__.py",
     "    _interrupt.guard_start()", "    pass"),
])

_area("files", [  # issue 35: two writers, kinds of set, the package's files, safetensors
    ("writer: the temporary file in the system's temporary folder", "files/atomic.py",
     "fd, tmp = tempfile.mkstemp(dir=target.parent,", "fd, tmp = tempfile.mkstemp(dir=None,"),
    ("reader: read without its limit", "files/bounded.py",
     "data = file.read(limit + 1)", "data = file.read()"),
    ("clash: only a corpus's training split listed", "files/clash.py",
     'for corpus in corpora for split in ("train", "test")]',
     'for corpus in corpora for split in ("train",)]'),
    ("clash: a new file in the package's folders allowed", "files/clash.py",
     "            if where == os.path.realpath(folder):", "            if False:"),
    ("set: no lock taken", "files/file_set.py",
     "self.lock = _lock(self.directory, self.name, self.wait)", "self.lock = None"),
    ("set: the lock never released", "files/file_set.py",
     "os.close(self.lock)  # closing", "(lambda fd: None)(self.lock)  # closing"),
    ("set: --wait ignored", "files/file_set.py",
     "deadline = time.monotonic() + wait", "deadline = time.monotonic()"),
    ("set: the kind of the folder not checked", "files/file_set.py",
     "            if self.kind is not None:\n                found",
     "            if False:\n                found"),
    ("safetensors: overlapping offsets allowed", "files/safetensors.py",
     "        if start < end:\n", "        if False:\n"),
    ("safetensors: a gap between tensors allowed", "files/safetensors.py",
     "        if start > end:\n", "        if False:\n"),
    ("safetensors: metadata JSON depth not checked", "files/safetensors.py",
     "    if json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:", "    if False:"),
    ("safetensors: NaN and Infinity parsed", "files/safetensors.py",
     "return json.loads(text, parse_constant=constant)", "return json.loads(text)"),
    ("safetensors: a .safetensors file not starting with '{' read by torch", "files/safetensors.py",
     'return str(path).endswith(".safetensors") or head[8:9] == b"{"',
     'return head[8:9] == b"{"'),
    ("safetensors: the header length's upper bound dropped", "files/safetensors.py",
     "if not 2 <= length <= MAX_HEADER:\n", "if not 2 <= length:\n"),
    ("safetensors: shapes not checked against the config before reading", "files/checkpoint.py",
     "_safetensors.read_checkpoint_dict(path, _shapes)",
     "_safetensors.read_checkpoint_dict(path)"),
])

_area("book", [
    ("ch10: the cross-attention figure drawn from decoder layer 0", "book/ch10.py",
     "weights = t.cross_attention()[-1].mean(axis=0)",
     "weights = t.cross_attention()[0].mean(axis=0)"),
])

_area("onnx", [
    ("onnx: the decoder step's causal mask upper-triangular", "commands/onnx_export.py",
     "causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()",
     "causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).triu()"),
    ("onnx: encoder embeddings without sqrt(d_model)", "commands/onnx_export.py",
     "x = m.positional(m.src_embed(src))",
     "x = m.positional(m.src_embed.lut(src))"),
    ("onnx: log_probs are probabilities", "commands/onnx_export.py",
     "return (logits, logits.log_softmax(dim=-1),", "return (logits, logits.softmax(dim=-1),"),
    ("onnx: the vocabulary file's bos_id is <eos>", "commands/onnx_export.py",
     '"bos_id": tgt_vocab.bos_id,', '"bos_id": tgt_vocab.eos_id,'),
    ("onnx: debugging records kept", "commands/onnx_export.py",
     "    return _strip_metadata(proto).SerializeToString()",
     "    return proto.SerializeToString()"),
    ("onnx: index.json sizes of another file", "files/file_set.py",
     '(("files", "file"), ("bytes", "bytes"),', '(("files", "file"), ("bytes", "file"),'),
])

# A mutant whose text is gone from the code must be re-targeted (tests/test_mutation_targets.py).
_area("data", [
    ("token batches: one token over the budget", "data/batching.py",
     "(taken + 1) * wider > tokens_per_batch", "(taken + 1) * wider > tokens_per_batch + 1"),
    ("token batches: lengths mixed", "data/batching.py",
     "\n                                  or max(widths[i]) != max(widths[order[0]]))", ")"),
    ("token batches: the batches in sorted order", "data/batching.py",
     "for b in torch.randperm(len(batches), generator=generator).tolist()",
     "for b in range(len(batches))"),
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
    ("vocabulary: a word in two forms read as its last id", "data/vocab.py",
     "append(i)  # the first id reads it\n                continue\n",
     "append(i)  # the first id reads it\n"),
    ("pairs file: byte-order mark kept", "data/pairs_file.py",
     r'text = text.removeprefix("\ufeff")', "text = text"),
    ("pairs file: a test split of 0 pairs", "data/pairs_file.py",
     "n_test = min(max(round(test_fraction * len(pairs)), 1), len(pairs) - 1)",
     "n_test = min(round(test_fraction * len(pairs)), len(pairs) - 1)"),
    ("pairs file: sentences not bounded in tokens", "data/pairs_file.py",
     "        if len(tokens) > MAX_SENTENCE_TOKENS:\n", "        if False:\n"),
    ("batching: targets without <eos>", "data/batching.py",
     "out_rows = [[*t, tgt_vocab.eos_id,", "out_rows = [[*t, tgt_vocab.pad_id,"),
])

_area("tracing", [
    ("trace: scores divided by d_k", "inference/tracing.py",
     "scaled = (scores / math.sqrt(mha.d_k))", "scaled = (scores / mha.d_k)"),
    ("trace: Add & Norm's sum read from the sub-layer's input", "inference/tracing.py",
     'stream[j + 1] if norm_first else norms[j][0]["input"], stream[j + 1]',
     'stream[j + 1] if norm_first else stream[j], stream[j + 1]'),
    ("trace: positions one off", "inference/tracing.py",
     "to_numpy(positions[:x.shape[1]])", "to_numpy(positions[1:x.shape[1] + 1])"),
    ("trace: hidden layer read before the ReLU", "inference/tracing.py",
     'calls[f"{name}.feed_forward.linear2"][0]["input"]',
     'calls[f"{name}.feed_forward.linear1"][1]'),
    ("trace: memory keys projected by W_V", "inference/tracing.py",
     "memory_keys=[_np(a.split_heads(a.w_k(memory)))", "memory_keys=[_np(a.split_heads(a.w_v(memory)))"),
    ("trace: queries read from W_K's call", "inference/tracing.py",
     'q, k, v = (mha.split_heads(calls[f"{name}.w_{x}"][1]) for x in "qkv")',
     'q, k, v = (mha.split_heads(calls[f"{name}.w_{x}"][1]) for x in "kkv")'),
    ("trace: the W_O input read as W_O's output", "inference/tracing.py",
     'concat = calls[f"{name}.w_o"][0]["input"]', 'concat = calls[f"{name}.w_o"][1]'),
    ("trace: softmax without subtracting the max", "inference/tracing.py",
     "shifted = np.exp(self.logits - self.logits.max(axis=-1, keepdims=True))",
     "shifted = np.exp(self.logits)"),
])

# Why a survivor is allowed to survive (filled in after a run; see the report in mutation.json).
EXPLAINED: dict[str, str] = {}  # "encoder: ... dropout1" is killed since the hooks test


def run_tests(src: Path, area: str, timeout: float) -> tuple[bool, float, str]:
    """Run the area's subset against ``src``; (passed, seconds, last line of output)."""
    env = dict(os.environ, PYTHONPATH=str(src), MPLBACKEND="Agg")
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                               "no:cacheprovider", *AREAS[area]], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # a mutant that makes the tests hang is caught too
        return False, time.perf_counter() - start, f"timed out after {timeout:g} s"
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
