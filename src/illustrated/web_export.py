"""The models as the book's pages read and write them: one safetensors file, config inside.

A model trained in the page (site/js/train.js) downloads as ``{corpus}.safetensors``
(:mod:`illustrated._safetensors`, which ``il.load_checkpoint`` reads); the shipped models are
exported in the same form for the page's engine (jax-js, site/js/engine.js).

``python -m illustrated.web_export --out DIR`` writes, per shipped corpus,
``{corpus}.safetensors`` and ``{corpus}.train.json`` (the corpus as ids, its vocabularies and
its ``presets.SETTINGS``, for training in the page), and ``web.json`` listing them.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from ._atomic import write_bytes, write_text
from ._safetensors import FORMAT, to_bytes
from .data import load_corpus, tokenize
from .presets import SETTINGS, load_shipped, make_config

__all__ = ["FORMAT", "to_bytes", "save_model", "export_site", "main"]


def save_model(path, model, vocabs) -> Path:
    """Write the model as a page model (safetensors, config inside) to ``path`` atomically."""
    return write_bytes(path, to_bytes(model, vocabs))


def _train_json(corpus: str) -> dict:
    """The corpus for training in the page: ids of both splits, vocabularies, SETTINGS."""
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    test, _, _ = load_corpus(corpus, "test")
    cfg = make_config(corpus, src_vocab, tgt_vocab)
    encode = [lambda s: src_vocab.encode(s), lambda t: tgt_vocab.encode(t)]
    return {"format": FORMAT, "corpus": corpus, "config": asdict(cfg),
            "train_settings": SETTINGS[corpus]["train"],
            "src_tokens": list(src_vocab.tokens), "tgt_tokens": list(tgt_vocab.tokens),
            "bos_id": tgt_vocab.bos_id, "eos_id": tgt_vocab.eos_id,
            "train": [[encode[0](s), encode[1](t)] for s, t in pairs],
            "test": [[s, " ".join(tokenize(t))] for s, t in test]}


def export_site(out_dir, corpora=tuple(SETTINGS)) -> dict:
    """Write every corpus's shipped model and training file into ``out_dir``, ``web.json`` last."""
    out_dir, index = Path(out_dir), {"format": FORMAT, "corpora": list(corpora), "files": {}}
    for corpus in corpora:
        model, src_vocab, tgt_vocab = load_shipped(corpus)
        blob = to_bytes(model, (src_vocab, tgt_vocab))
        text = json.dumps(_train_json(corpus), ensure_ascii=False, separators=(",", ":"))
        write_bytes(out_dir / f"{corpus}.safetensors", blob, name="--out")
        write_text(out_dir / f"{corpus}.train.json", text + "\n", name="--out")
        index["files"][corpus] = {"model": f"{corpus}.safetensors", "bytes": len(blob),
                                  "train": f"{corpus}.train.json"}
    write_text(out_dir / "web.json", json.dumps(index, indent=1) + "\n", name="--out")
    return index


def main(argv: list[str] | None = None) -> int:
    """``python -m illustrated.web_export --out DIR``: 0, or 2 with one line for an error."""
    parser = argparse.ArgumentParser(prog="python -m illustrated.web_export",
                                     description="The shipped models for the book's pages.")
    parser.add_argument("--out", required=True, help="folder to write into (made if missing)")
    args = parser.parse_args(argv)
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        index = export_site(args.out)
    except (ValueError, OSError) as error:
        print(f"error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"web_export: {len(index['corpora'])} corpora into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
