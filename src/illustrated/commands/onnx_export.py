"""The shipped models as ONNX graphs, for any ONNX runtime (onnxruntime, onnxruntime-web).

The book's pages ran them with onnxruntime-web until they moved to one engine for translating
and training, jax-js (illustrated.commands.web_export, site/js/engine.js); the export stays a feature
of the package, tested with onnxruntime. Each corpus gets two graphs, exported with PyTorch's exporter
(``torch.onnx.export(dynamo=True)``) from the weights that ``il.pretrained`` loads:

* ``{corpus}.encoder.onnx``: ``src`` (1, src_len) int64 -> ``memory`` (1, src_len, d_model),
  ``encoder_attention`` (n_layers, n_heads, src_len, src_len);
* ``{corpus}.decoder.onnx``, one step of decoding for ``n`` hypotheses at once: ``tgt_in``
  (n, tgt_len) int64 and ``memory`` (1, src_len, d_model) -> ``logits`` and ``log_probs`` of the
  last position (n, tgt_vocab_size), ``cross_attention`` (n_layers, n, n_heads, tgt_len,
  src_len) and ``self_attention`` (n_layers, n, n_heads, tgt_len, tgt_len);

plus ``{corpus}.json`` (both vocabularies, special ids, sizes, and ``train_src_len``: the
shortest and longest source sentence of the training split, in tokens, outside which the pages
warn that the model was never trained) and ``index.json`` (the corpora, and every file's name,
size and sha256). The decoding loops (greedy, beam search) stay outside the graphs: the
browser runs them in JavaScript, line by line as :mod:`illustrated.inference.decoding` does.

The files are one set: a new graph beside an old one would translate nonsense without a word.
Each is written under a name that holds its sha256 (``post.encoder.3f2a9c1e0b7d4a65.onnx``),
beside the earlier set, and ``index.json``, written last, switches to the new set in one rename
(:mod:`illustrated.files.file_set`); the pages read the names from it. Interrupted or failed at any
point, the folder holds the earlier set whole, or the new one; :func:`read_export` checks every
file against the index.

The graphs take one unpadded source sentence (no source mask is needed: every position may be
attended to), which is how :func:`~illustrated.inference.decoding.greedy_decode` and
:func:`~illustrated.inference.decoding.beam_search` call the model.
tests/commands/test_onnx_export.py checks the
graphs against ``model.encode``/``model.decode`` with onnxruntime (within 1e-5).

Usage: ``python -m illustrated.commands.onnx_export --out DIR [--corpus NAME ...]`` (``make site-assets``
writes them to ``_build/site-assets/_illustrated/models/``). It needs onnx and onnxscript (the
``illustrated[onnx]`` extra), imported only here.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import sys
import time
import warnings
from pathlib import Path

import torch
from torch import nn

from ..files.atomic import InterruptedAfterWrite, read_only_mount
from ..files.clash import corpus_files, refuse_clashes
from ..files.file_set import SetWriter, check_wait, read_group_index
from .interrupt import INTERRUPTED, end_of_start, exit_with
from ..data import load_corpus, tokenize
from ..modules.recording import Attention, recording_attention
from ..modules.transformer import Transformer
from ..pretrained_models import MANIFEST, weights_path
from .shipped import SHIPPED, load_shipped

__all__ = ["FORMAT", "OPSET", "INDEX", "EncoderGraph", "DecoderStepGraph", "corpus_files_of",
           "export_all", "read_export", "main"]

#: Written into index.json; site/js/ refuses another format.
FORMAT = "illustrated-onnx/1"

#: ONNX opset of the graphs (onnxruntime-web 1.30 runs opsets up to 23).
OPSET = 18

#: The index of an export, written last: the file the pages read first.
INDEX = "index.json"

#: The kinds of file each corpus has, and the name each is written under (before its sha256).
KINDS = {"encoder": "{corpus}.encoder.onnx", "decoder": "{corpus}.decoder.onnx",
         "vocab": "{corpus}.json"}


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
        x = m.positional(m.src_embed(src))  # (1, src_len, d_model)
        with recording_attention(m) as record:
            memory = m.encoder(x, None)  # (1, src_len, d_model)
        weights = Attention.of(record).encoder  # n_layers x (1, n_heads, src_len, src_len)
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
    ``log_softmax`` that :mod:`illustrated.inference.decoding` takes; removing <bos> and <pad> is left to
    the decoding loop, as there.
    """

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, tgt_in: torch.Tensor, memory: torch.Tensor):
        m = self.model
        n, tgt_len = tgt_in.shape
        causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()  # (tgt_len, tgt_len)
        y = m.positional(m.tgt_embed(tgt_in))  # (n, tgt_len, d_model)
        with recording_attention(m) as record:  # unchecked: a graph can't read values
            out = m.decoder(y, memory.expand(n, -1, -1), None, causal)
        weights = Attention.of(record)
        logits = m.generator(out[:, -1])  # (n, tgt_vocab_size)
        return (logits, logits.log_softmax(dim=-1),
                torch.stack(weights.decoder_cross),  # (n_layers, n, n_heads, tgt_len, src_len)
                torch.stack(weights.decoder_self))  # (n_layers, n, n_heads, tgt_len, tgt_len)


def _onnx():
    """The onnx package, or an ImportError that says how to install it."""
    try:
        import onnx
        import onnxscript  # noqa: F401 - torch's exporter needs it
    except ImportError as error:
        raise ImportError(f"the ONNX export needs onnx and onnxscript ({error}): pip install "
                          f"'illustrated[onnx]'") from None
    return onnx


def _export(graph: nn.Module, args: tuple, name: str, dynamic_shapes: tuple,
            input_names: list[str], output_names: list[str]) -> bytes:
    """torch.onnx.export (dynamo, quiet) into the bytes of one self-contained file."""
    _onnx()
    chatter = io.StringIO()
    exporter_log = logging.getLogger("torch.onnx")
    level = exporter_log.level
    exporter_log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), torch.no_grad():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(graph.eval(), args, None, dynamo=True,
                                        opset_version=OPSET, optimize=True,
                                        dynamic_shapes=dynamic_shapes, input_names=input_names,
                                        output_names=output_names)
            proto = program.model_proto
    except Exception as err:
        raise RuntimeError(f"exporting {name} failed: {err}\n{chatter.getvalue()}") from err
    finally:
        exporter_log.setLevel(level)
    return _strip_metadata(proto).SerializeToString()


def _strip_metadata(model):
    """Drop the exporter's debugging records (half of each file; onnxruntime reads none)."""
    graph = model.graph
    for node in graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    for value in [*graph.input, *graph.output, *graph.value_info, *graph.initializer]:
        del value.metadata_props[:]
    return model


def _train_src_len(corpus: str) -> list[int]:
    """[shortest, longest] source sentence of the corpus's training split, in tokens."""
    lengths = [len(tokenize(source)) for source, _ in load_corpus(corpus, "train")[0]]
    return [min(lengths), max(lengths)]


def corpus_files_of(corpus: str) -> dict[str, tuple[str, bytes]]:
    """The files of ``corpus``'s export, made in memory from the shipped model:
    ``{kind: (name, bytes)}`` for the kinds of :data:`KINDS` (encoder, decoder, vocab).

    Raises
    ------
    ValueError
        For a corpus without a shipped model (see :func:`illustrated.pretrained_models.load_shipped`).
    ImportError
        Without onnx and onnxscript.
    RuntimeError
        If the exporter fails.
    """
    model, src_vocab, tgt_vocab = load_shipped(corpus)
    cfg = model.cfg
    # Example inputs of length >= 2: torch.export specialises sizes 0 and 1.
    src = torch.tensor([[4, 5, 6]])  # (1, 3)
    src = src.clamp(max=cfg.src_vocab_size - 1)
    src_len = torch.export.Dim("src_len", min=1, max=cfg.max_len)
    tgt_len = torch.export.Dim("tgt_len", min=1, max=cfg.max_len)
    n = torch.export.Dim("n", min=1, max=1024)
    names = {kind: pattern.format(corpus=corpus) for kind, pattern in KINDS.items()}
    encoder = _export(EncoderGraph(model), (src,), names["encoder"], ({1: src_len},),
                      ["src"], ["memory", "encoder_attention"])
    with torch.no_grad():
        memory = model.encode(src)  # (1, 3, d_model)
    tgt_in = torch.tensor([[tgt_vocab.bos_id, 4, 5], [tgt_vocab.bos_id, 5, 4]])  # (2, 3)
    tgt_in = tgt_in.clamp(max=cfg.tgt_vocab_size - 1)
    decoder = _export(DecoderStepGraph(model), (tgt_in, memory), names["decoder"],
                      ({0: n, 1: tgt_len}, {1: src_len}), ["tgt_in", "memory"],
                      ["logits", "log_probs", "cross_attention", "self_attention"])
    vocab = {
        "corpus": corpus, "src_tokens": src_vocab.tokens, "tgt_tokens": tgt_vocab.tokens,
        "src_pad_id": cfg.pad_id, "tgt_pad_id": cfg.tgt_pad_id, "bos_id": tgt_vocab.bos_id,
        "eos_id": tgt_vocab.eos_id, "src_unk_id": src_vocab.unk_id, "max_len": cfg.max_len,
        "n_layers": cfg.n_layers, "n_heads": cfg.n_heads, "d_model": cfg.d_model,
        "train_src_len": _train_src_len(corpus),
    }
    contents = {"encoder": encoder, "decoder": decoder,
                "vocab": (json.dumps(vocab, ensure_ascii=False) + "\n").encode("utf-8")}
    return {kind: (names[kind], contents[kind]) for kind in KINDS}


def _owned(name: str) -> bool:
    """Whether a file name in the export's folder is one of an export's graphs or vocabularies."""
    corpora = "|".join(map(re.escape, SHIPPED))
    return re.fullmatch(rf"(?:{corpora})(?:\.encoder|\.decoder)?(?:\.[0-9a-f]{{16}})?"
                        rf"\.(?:onnx|json)", name) is not None


def export_all(out_dir: Path, corpora=SHIPPED, *, wait: float = 0) -> dict:
    """Export every corpus of ``corpora`` into ``out_dir`` as one set, ``index.json`` last;
    return the index (``{"format", "opset", "torch", "corpora", "models": {corpus: {"files",
    "bytes", "sha256"}}}``).

    Each corpus's graphs are exported in memory, then written under their hashed names; the
    index replaces the earlier one only once every file is written; files of earlier exports
    that the new index does not name are then removed. The folder is locked meanwhile: a second
    writer is refused (or waits up to ``wait`` seconds).

    Raises
    ------
    ValueError
        For a corpus without a shipped model, a folder another writer holds or that holds
        another kind of set (a page export, the shipped weights), or a file that cannot be
        written (one line naming it; the earlier set is then whole and the new files are
        removed).
    ImportError, RuntimeError
        As :func:`corpus_files_of`.
    KeyboardInterrupt
        After Ctrl-C; :class:`illustrated.files.atomic.InterruptedAfterWrite` if it came once the new
        index was in place (the new set is then whole).
    """
    out_dir = Path(out_dir)
    index = {"format": FORMAT, "opset": OPSET, "torch": torch.__version__,
             "corpora": list(corpora), "models": {}}
    with SetWriter(out_dir, INDEX, owned=_owned, name="--out", kind=FORMAT,
                   wait=wait) as writer:
        for corpus in corpora:
            index["models"][corpus] = writer.add_group(corpus_files_of(corpus))
        writer.commit((json.dumps(index, indent=1) + "\n").encode("utf-8"),
                      [f for m in index["models"].values() for f in m["files"].values()])
    return index


def read_export(out_dir: str | os.PathLike) -> dict:
    """The index of an export in ``out_dir``, after checking every file it names: present, a
    regular file, of the size and sha256 the index gives (the set the index names, whole).

    Raises ValueError in one line naming the file: a missing or damaged index, another format,
    a missing or extra entry or member, a name outside the folder, or a file that does not
    match it. Met during a writer's switch, the index is read once more.
    """
    return read_group_index(out_dir, INDEX, FORMAT, tuple(KINDS), fields=("opset", "torch"))


def _out_dir(text: str) -> Path:
    """``--out``: an existing directory, or one made here (with its parents); ValueError else."""
    if not text.strip():
        raise ValueError(f"--out: expected a directory path, got {text!r}")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out: expected a directory, got {text!r}, which is a file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"--out: cannot create the directory {text!r} "
                         f"({error.strerror or error})") from None
    if read_only_mount(path):  # as the other writers name it (files.atomic.check_writable)
        raise ValueError(f"--out: cannot write in the directory {text!r} (a read-only file "
                         f"system)")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"--out: cannot write in the directory {text!r} (Permission denied)")
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m illustrated.commands.onnx_export --out DIR [--corpus NAME ...] [--wait SECONDS]``.

    Returns 0; 2 with one line for a bad ``--out`` (empty, a file, a directory that cannot be
    made or written, an index that is one of the shipped files it reads, another writer of it
    after ``--wait`` seconds, a folder holding another kind of set), missing onnx
    packages, or a file that cannot be written (a full disk: the earlier set is left whole);
    130 with one line after Ctrl-C, which says whether the new set was in place.
    """
    end_of_start()
    parser = argparse.ArgumentParser(prog="python -m illustrated.commands.onnx_export",
                                     description="Export the shipped models to ONNX for the "
                                                 "book's pages.")
    parser.add_argument("--out", required=True, help="folder to write into (made if missing)")
    parser.add_argument("--corpus", action="append", choices=SHIPPED,
                        help="a corpus to export (repeatable; default: every shipped corpus)")
    parser.add_argument("--wait", type=check_wait, default=0, metavar="SECONDS",
                        help="wait this long for another writer of --out (default 0: refuse)")
    args = parser.parse_args(argv)
    corpora = tuple(args.corpus or SHIPPED)
    start = time.perf_counter()
    try:
        inputs = [*corpus_files(corpora), ("the shipped weights",
                                           weights_path(corpora[0]).parent / MANIFEST),
                  *(("the shipped weights", weights_path(c)) for c in corpora)]
        refuse_clashes(inputs, [("--out", Path(args.out) / INDEX)])
        out = _out_dir(args.out)
        _onnx()
        index = export_all(out, corpora, wait=args.wait)
    except InterruptedAfterWrite:
        print(f"interrupted: the new export was already in place in {args.out} ({INDEX} and "
              f"every file it names)", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print(f"interrupted: nothing changed; {args.out} holds the earlier export, whole",
              file=sys.stderr)
        return INTERRUPTED
    except (ValueError, ImportError, RuntimeError, OSError) as error:
        print(f"error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    total = sum(sum(m["bytes"].values()) for m in index["models"].values())
    print(f"onnx_export: {len(index['corpora'])} corpora, {total / 1e6:.2f} MB into {args.out} "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    exit_with(main())
