"""What a compiled training step is made of: ours against nn.Transformer, counted on a CPU.

Issue 34: at the tiny size a step captured as one CUDA graph costs about one kernel's time per
operation, so the operations of the compiled step say where ours and torch's differ before a GPU
measures them. Each model's tiny training step (d_model 64, 2+2 layers, dropout 0) is traced as
``illustrated.training.captured_step.CapturedStep`` traces it, by AOTAutograd (the graphs inductor would
compile), in fp32 and under bf16 autocast, and the ATen operations of its forward and backward
graphs are counted by kind: matrix products, casts, softmax or fused attention, layout (views,
transposes, copies that reorder) and the rest (element-wise and reductions, which inductor fuses).
The attention kernel is the one a GPU takes (``F.scaled_dot_product_attention``; a CPU's
key-first kernel would add two batched products per attention).

    python benchmarks/step_ops.py

Writes benchmarks/results/step_ops.json. Counts, not time: a GPU run (benchmarks/gpu.py) decides.
"""
from __future__ import annotations

import collections
import json
import sys
from dataclasses import replace
from pathlib import Path

import torch
from functorch.compile import aot_module_simplified, make_boxed_func
from torch.nn import functional as F

import illustrated as il
import illustrated.modules.multi_head as multi_head
from illustrated.training.captured_step import CapturedStep, padded_batch
from illustrated.data import encode_pairs
from illustrated.data.pairs_file import build_vocab

sys.path.insert(0, str(Path(__file__).parent))
from torch_reference import TorchTransformer  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "step_ops.json"
PAIRS = [("a b c d", "w"), ("a b", "w x y z"), ("c", "x y"), ("d a", "z w x")]
LAYOUT = ("aten.view", "aten._unsafe_view", "aten.permute", "aten.transpose", "aten.t.",
          "aten.expand", "aten.clone", "aten.reshape", "aten.split", "aten.slice", "aten.select",
          "aten.squeeze", "aten.unsqueeze", "aten.alias", "aten.cat")


def kind(op: str) -> str:
    """The kind of an ATen operation's name."""
    if op.startswith(("aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm")):
        return "matrix products"
    if "convert_element_type" in op or "_to_copy" in op:
        return "casts"
    if "scaled_dot_product" in op or "softmax" in op:
        return "softmax or fused attention"
    return "layout" if op.startswith(LAYOUT) else "element-wise and other"


def count_step(model: torch.nn.Module, bf16: bool) -> dict:
    """Operations by kind in the forward and backward graphs of one compiled training step."""
    counts = {}

    def backend(graph_module, example_inputs):
        def counter(name):
            def compile_graph(graph, inputs):
                ops = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
                counts[name] = dict(sorted(collections.Counter(map(kind, ops)).items()),
                                    total=len(ops))
                return make_boxed_func(graph.forward)
            return compile_graph
        return aot_module_simplified(graph_module, example_inputs, fw_compiler=counter("forward"),
                                     bw_compiler=counter("backward"))

    src_vocab, tgt_vocab = (build_vocab([pair[i] for pair in PAIRS]) for i in (0, 1))
    step = CapturedStep(model, src_vocab, tgt_vocab, device=torch.device("cpu"), backend=backend,
                        bf16=bf16)
    loss, _ = step.compiled(*padded_batch(encode_pairs(PAIRS, src_vocab, tgt_vocab), src_vocab,
                                          tgt_vocab))
    loss.backward()
    return counts


def main() -> None:
    src_vocab, tgt_vocab = (build_vocab([pair[i] for pair in PAIRS]) for i in (0, 1))
    cfg = replace(il.TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                  dropout=0.0)
    multi_head.batched_kernel = lambda device: F.scaled_dot_product_attention  # a GPU's kernel
    report = {"sizes": "tiny: d_model 64, 4 heads, d_ff 128, 2+2 layers, dropout 0",
              "torch": torch.__version__, "steps": {}}
    for precision in ("fp32", "bf16"):
        for impl, cls in (("ours", il.modules.Transformer), ("torch", TorchTransformer)):
            torch._dynamo.reset()
            il.set_seed(0)
            counts = count_step(cls(cfg).train(), bf16=precision == "bf16")
            report["steps"][f"{precision} {impl}"] = counts
            print(precision, impl, json.dumps(counts), flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
