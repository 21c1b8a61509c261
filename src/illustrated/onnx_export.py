"""The shipped models as ONNX graphs, so that the book's static pages can translate in the browser.

A rendered page has no Python kernel, so its live widgets run the shipped models with
onnxruntime-web (site/js/). Each corpus gets two graphs, exported with PyTorch's exporter
(``torch.onnx.export(dynamo=True)``) from the weights that ``il.pretrained`` loads:

* ``{corpus}.encoder.onnx``: ``src`` (1, src_len) int64 -> ``memory`` (1, src_len, d_model),
  ``encoder_attention`` (n_layers, n_heads, src_len, src_len);
* ``{corpus}.decoder.onnx``, one step of decoding for ``n`` hypotheses at once: ``tgt_in``
  (n, tgt_len) int64 and ``memory`` (1, src_len, d_model) -> ``logits`` and ``log_probs`` of the
  last position (n, tgt_vocab_size), ``cross_attention`` (n_layers, n, n_heads, tgt_len,
  src_len) and ``self_attention`` (n_layers, n, n_heads, tgt_len, tgt_len);

plus ``{corpus}.json`` (both vocabularies, special ids, sizes) and ``index.json`` (the corpora
and every file's size). The decoding loops (greedy, beam search) stay outside the graphs: the
browser runs them in JavaScript, line by line as :mod:`illustrated.decoding` does.

The graphs take one unpadded source sentence (no source mask is needed: every position may be
attended to), which is how :func:`~illustrated.decoding.greedy_decode` and
:func:`~illustrated.decoding.beam_search` call the model. tests/test_onnx_export.py checks the
graphs against ``model.encode``/``model.decode`` with onnxruntime (within 1e-5).

Usage: ``python -m illustrated.onnx_export --out DIR [--corpus NAME ...]`` (``make site-assets``
writes them to ``_build/site-assets/_illustrated/models/``).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import time
import warnings
from pathlib import Path

import onnx
import torch
from torch import nn

from .modules._checks import remember_checked
from .modules.transformer import Transformer
from .shipped import SHIPPED, load_shipped

__all__ = ["FORMAT", "OPSET", "EncoderGraph", "DecoderStepGraph", "export_corpus", "export_all",
           "main"]

#: Written into index.json; site/js/ refuses another format.
FORMAT = "illustrated-onnx/1"

#: ONNX opset of the graphs (onnxruntime-web 1.30 runs opsets up to 23).
OPSET = 18


class EncoderGraph(nn.Module):
    """The encoder of a Transformer for one unpadded sentence, returning its attention weights.

    Shapes: src (1, src_len) int64 -> memory (1, src_len, d_model),
    encoder_attention (n_layers, n_heads, src_len, src_len).

    ``Transformer.encode`` reads the ids' values to check them (and to build the padding mask),
    which a graph cannot do: this calls its parts directly, as ``encode`` does, with no mask
    (a sentence without padding may attend everywhere). The tests hold it equal to ``encode``.
    """

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        m = self.model
        x = m.positional(m.src_embed.lut(src) * m.src_embed.scale)  # (1, src_len, d_model)
        memory, weights = m.encoder(x, None, return_attention=True)
        attention = torch.stack([w[0] for w in weights])  # (n_layers, n_heads, src_len, src_len)
        return memory, attention


class DecoderStepGraph(nn.Module):
    """One decoding step for ``n`` hypotheses of equal length: next-token scores and attention.

    Shapes: tgt_in (n, tgt_len) int64 (each row starts with <bos>), memory (1, src_len, d_model)
    -> logits (n, tgt_vocab_size) and log_probs (n, tgt_vocab_size) of the last position,
    cross_attention (n_layers, n, n_heads, tgt_len, src_len),
    self_attention (n_layers, n, n_heads, tgt_len, tgt_len).

    Like :class:`EncoderGraph` it calls ``Transformer.decode``'s parts directly; the causal mask
    is built here as ``decode`` builds it (position i attends to 0..i). ``log_probs`` is the
    ``log_softmax`` that :mod:`illustrated.decoding` takes; removing <bos> and <pad> is left to
    the decoding loop, as there.
    """

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, tgt_in: torch.Tensor, memory: torch.Tensor):
        m = self.model
        n, tgt_len = tgt_in.shape
        causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()  # (tgt_len, tgt_len)
        remember_checked(causal, "mask")  # every row attends to itself, as in Transformer.decode
        y = m.positional(m.tgt_embed.lut(tgt_in) * m.tgt_embed.scale)  # (n, tgt_len, d_model)
        out, self_w, cross_w = m.decoder(y, memory.expand(n, -1, -1), None, causal,
                                         return_attention=True)  # out (n, tgt_len, d_model)
        logits = m.generator(out[:, -1])  # (n, tgt_vocab_size)
        return (logits, logits.log_softmax(dim=-1),
                torch.stack(cross_w),  # (n_layers, n, n_heads, tgt_len, src_len)
                torch.stack(self_w))  # (n_layers, n, n_heads, tgt_len, tgt_len)


def _export(graph: nn.Module, args: tuple, path: Path, dynamic_shapes: tuple,
            input_names: list[str], output_names: list[str]) -> None:
    """torch.onnx.export (dynamo) into one self-contained file; its progress lines kept quiet."""
    chatter = io.StringIO()
    exporter_log = logging.getLogger("torch.onnx")
    level = exporter_log.level
    exporter_log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(graph.eval(), args, str(path), dynamo=True, external_data=False,
                              opset_version=OPSET, optimize=True, dynamic_shapes=dynamic_shapes,
                              input_names=input_names, output_names=output_names)
    except Exception as err:
        raise RuntimeError(f"exporting {path.name} failed: {err}\n{chatter.getvalue()}") from err
    finally:
        exporter_log.setLevel(level)
    _strip_metadata(path)


def _strip_metadata(path: Path) -> None:
    """Drop what the exporter records for debugging (each node's Python stack, module path and
    FX node): half of each file's bytes, and nothing onnxruntime reads."""
    model = onnx.load(str(path))
    graph = model.graph
    for node in graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    for value in [*graph.input, *graph.output, *graph.value_info, *graph.initializer]:
        del value.metadata_props[:]
    onnx.save(model, str(path))


def export_corpus(corpus: str, out_dir: Path) -> dict:
    """Write ``{corpus}.encoder.onnx``, ``{corpus}.decoder.onnx`` and ``{corpus}.json`` into
    ``out_dir`` from the shipped model; return the corpus's entry of index.json.

    Raises
    ------
    ValueError
        For a corpus without a shipped model (see :func:`illustrated.shipped.load_shipped`).
    RuntimeError
        If the exporter fails.
    """
    model, src_vocab, tgt_vocab = load_shipped(corpus)
    cfg = model.cfg
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Example inputs of length >= 2: torch.export specialises sizes 0 and 1.
    src = torch.tensor([[4, 5, 6]])  # (1, 3)
    src = src.clamp(max=cfg.src_vocab_size - 1)
    src_len = torch.export.Dim("src_len", min=1, max=cfg.max_len)
    tgt_len = torch.export.Dim("tgt_len", min=1, max=cfg.max_len)
    n = torch.export.Dim("n", min=1, max=1024)
    files = {"encoder": f"{corpus}.encoder.onnx", "decoder": f"{corpus}.decoder.onnx",
             "vocab": f"{corpus}.json"}
    _export(EncoderGraph(model), (src,), out_dir / files["encoder"], ({1: src_len},),
            ["src"], ["memory", "encoder_attention"])
    with torch.no_grad():
        memory = model.encode(src)  # (1, 3, d_model)
    tgt_in = torch.tensor([[tgt_vocab.bos_id, 4, 5], [tgt_vocab.bos_id, 5, 4]])  # (2, 3)
    tgt_in = tgt_in.clamp(max=cfg.tgt_vocab_size - 1)
    _export(DecoderStepGraph(model), (tgt_in, memory), out_dir / files["decoder"],
            ({0: n, 1: tgt_len}, {1: src_len}), ["tgt_in", "memory"],
            ["logits", "log_probs", "cross_attention", "self_attention"])
    vocab = {
        "corpus": corpus, "src_tokens": src_vocab.tokens, "tgt_tokens": tgt_vocab.tokens,
        "src_pad_id": cfg.pad_id, "tgt_pad_id": cfg.tgt_pad_id, "bos_id": tgt_vocab.bos_id,
        "eos_id": tgt_vocab.eos_id, "src_unk_id": src_vocab.unk_id, "max_len": cfg.max_len,
        "n_layers": cfg.n_layers, "n_heads": cfg.n_heads, "d_model": cfg.d_model,
    }
    (out_dir / files["vocab"]).write_text(json.dumps(vocab, ensure_ascii=False) + "\n",
                                          encoding="utf-8")
    return {"files": files,
            "bytes": {k: (out_dir / f).stat().st_size for k, f in files.items()}}


def export_all(out_dir: Path, corpora=SHIPPED) -> dict:
    """Export every corpus of ``corpora`` into ``out_dir`` and write ``index.json``; return it."""
    out_dir = Path(out_dir)
    index = {"format": FORMAT, "opset": OPSET, "torch": torch.__version__,
             "corpora": list(corpora), "models": {}}
    for corpus in corpora:
        index["models"][corpus] = export_corpus(corpus, out_dir)
    (out_dir / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return index


def main(argv: list[str] | None = None) -> int:
    """``python -m illustrated.onnx_export --out DIR [--corpus NAME ...]``."""
    parser = argparse.ArgumentParser(prog="python -m illustrated.onnx_export",
                                     description="Export the shipped models to ONNX for the "
                                                 "book's pages.")
    parser.add_argument("--out", required=True, type=Path, help="folder to write into")
    parser.add_argument("--corpus", action="append", choices=SHIPPED,
                        help="a corpus to export (repeatable; default: every shipped corpus)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    index = export_all(args.out, tuple(args.corpus or SHIPPED))
    total = sum(sum(m["bytes"].values()) for m in index["models"].values())
    print(f"onnx_export: {len(index['corpora'])} corpora, {total / 1e6:.2f} MB into {args.out} "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
