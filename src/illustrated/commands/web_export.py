"""The models as the book's pages read and write them: one safetensors file, config inside.

A model trained in the page (site/js/train.js) downloads as ``{corpus}.safetensors``
(:mod:`illustrated.files.safetensors`, which ``il.load_checkpoint`` reads); the shipped models are
exported in the same form for the page's engine (jax-js, site/js/engine.js).

``python -m illustrated.commands.web_export --out DIR`` writes, per shipped corpus,
``{corpus}.safetensors`` and ``{corpus}.train.json`` (the corpus as ids, its vocabularies and
its ``presets.SETTINGS``, for training in the page; for the coreference corpus also each
training pair's "it" label, which the page's "it" objective reads), ``{corpus}.json`` (vocabularies and sizes,
read before the runtime loads), once ``recipe.json`` (the Recipe's JSON schema: every training
choice's default, limits, choices and description, and the page's own narrower limits,
:func:`illustrated.recipe.schema`; ``site/js/recipe.js`` reads it) and ``index.json`` listing
them.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

from ..files.atomic import InterruptedAfterWrite, write_bytes
from ..files.clash import corpus_files, refuse_clashes
from ..files.file_set import SetWriter, check_wait, read_group_index
from .interrupt import INTERRUPTED, end_of_start, exit_with
from ..files.safetensors import FORMAT, to_bytes
from ..data import load_corpus, tokenize
from ..pretrained_models import MANIFEST, SETTINGS, load_shipped, make_config, weights_path
from ..config import TINY
from ..data import pairs_file
from ..recipe import PRESETS, Recipe, schema
from ..training.referent import labels

__all__ = ["FORMAT", "to_bytes", "save_model", "page_schema", "export_site", "read_site", "main"]


def save_model(path, model, vocabs) -> Path:
    """Write the model as a page model (safetensors, config inside) to ``path`` atomically."""
    return write_bytes(path, to_bytes(model, vocabs))


def _train_json(corpus: str) -> dict:
    """The corpus for training in the page: ids of both splits, vocabularies, SETTINGS, and
    where the coreference grammar covers its sources, ``referent``: per training pair its
    label for :mod:`illustrated.training.referent` ([position of "it", source id of its noun] or null)."""
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    test, _, _ = load_corpus(corpus, "test")
    cfg = make_config(corpus, src_vocab, tgt_vocab)
    encode = [lambda s: src_vocab.encode(s), lambda t: tgt_vocab.encode(t)]
    defaults = {k: getattr(Recipe, k) for k in ("steps", "lr", "warmup", "schedule",
                                                 "label_smoothing", "batch_size",
                                                 "referent_weight")}
    train = [[encode[0](s), encode[1](t)] for s, t in pairs]
    found = labels([s for s, _ in pairs], [src for src, _ in train])
    return {"format": FORMAT, "corpus": corpus, "config": asdict(cfg),
            "train_settings": {**defaults, **SETTINGS[corpus]["train"]},
            "src_tokens": list(src_vocab.tokens), "tgt_tokens": list(tgt_vocab.tokens),
            "bos_id": tgt_vocab.bos_id, "eos_id": tgt_vocab.eos_id,
            "train": train, "test": [[encode[0](s), " ".join(tokenize(t)), s] for s, t in test],
            **({"referent": [list(x) if x else None for x in found]} if any(found) else {})}


def page_schema() -> dict:
    """recipe.json: the Recipe's schema (:func:`illustrated.recipe.schema`) and ``x-pairs``, a
    reader's own pairs as the page reads them (site/js/engine/pairs.js): the pairs file's limits
    (:mod:`illustrated.data.pairs_file`), split_pairs' test share, and the ``tiny`` preset's model
    sizes and recipe, as ``python -m illustrated train --pairs`` uses them."""
    import inspect
    test_fraction = inspect.signature(pairs_file.split_pairs).parameters["test_fraction"].default
    recipe = PRESETS["tiny"].recipe
    settings = {k: getattr(recipe, k) for k in ("steps", "lr", "warmup", "schedule",
                                                 "label_smoothing", "batch_size", "referent_weight")}
    return {**schema(), "x-pairs": {
        "min_pairs": pairs_file.MIN_PAIRS, "max_line_bytes": pairs_file.MAX_LINE_BYTES,
        "max_file_bytes": pairs_file.MAX_FILE_BYTES,
        "max_sentence_tokens": pairs_file.MAX_SENTENCE_TOKENS, "test_fraction": test_fraction,
        "config": {**asdict(TINY), **PRESETS["tiny"].model}, "train_settings": settings}}


def _src_bigrams(corpus: str) -> list[str]:
    """Every pair of neighbouring source tokens of the corpus (both splits), "word word": the
    widgets note an input that has another (site/js/sentence.js)."""
    pairs = load_corpus(corpus, "train")[0] + load_corpus(corpus, "test")[0]
    return sorted({f"{a} {b}" for source, _ in pairs
                   for a, b in zip(tokenize(source), tokenize(source)[1:])})


def _vocab_json(corpus: str, model, src_vocab, tgt_vocab) -> dict:
    """{corpus}.json: what a widget needs before the runtime loads (site/js/models.js)."""
    cfg, lengths = model.cfg, [len(tokenize(s)) for s, _ in load_corpus(corpus, "train")[0]]
    return {"corpus": corpus, "src_tokens": src_vocab.tokens, "tgt_tokens": tgt_vocab.tokens,
            "src_pad_id": cfg.pad_id, "tgt_pad_id": cfg.tgt_pad_id, "bos_id": tgt_vocab.bos_id,
            "eos_id": tgt_vocab.eos_id, "src_unk_id": src_vocab.unk_id, "max_len": cfg.max_len,
            "n_layers": cfg.n_layers, "n_heads": cfg.n_heads, "d_model": cfg.d_model,
            "train_src_len": [min(lengths), max(lengths)], "src_bigrams": _src_bigrams(corpus)}


def _owned(name: str) -> bool:
    """Whether a file name in the export's folder is one of a page export's files."""
    corpora = "|".join(map(re.escape, SETTINGS))
    return re.fullmatch(rf"(?:(?:{corpora})(?:\.train)?|recipe)(?:\.[0-9a-f]{{16}})?"
                        r"\.(?:safetensors|json)", name) is not None


def export_site(out_dir, corpora=tuple(SETTINGS), *, wait: float = 0) -> dict:
    """Write per corpus {corpus}.safetensors (the shipped model), {corpus}.json and
    {corpus}.train.json, and recipe.json (index entry "recipe"), into ``out_dir`` as one set,
    ``index.json`` last
    (:class:`illustrated.files.file_set.SetWriter`: the files under hashed names, the index naming
    each with its sha256 and size, so that a page never reads a new model beside an old
    vocabulary); return the index. The folder is locked while it changes (a second writer is
    refused, or waits up to ``wait`` seconds). Raises ValueError naming a file that cannot be
    written (the earlier set is then whole), a folder another writer holds, or one that holds
    another kind of set (an ONNX export, the shipped weights); KeyboardInterrupt after Ctrl-C
    (:class:`illustrated.files.atomic.InterruptedAfterWrite` once the new index was in place)."""
    out_dir, index = Path(out_dir), {"format": FORMAT, "corpora": list(corpora), "models": {}}
    out_dir.mkdir(parents=True, exist_ok=True)
    with SetWriter(out_dir, "index.json", owned=_owned, name="--out", kind=FORMAT,
                   wait=wait) as writer:
        index["recipe"] = writer.add("recipe.json", (json.dumps(page_schema(), indent=1) + "\n")
                                     .encode("utf-8"))
        for corpus in corpora:
            model, src_vocab, tgt_vocab = load_shipped(corpus)
            contents = {"model": to_bytes(model, (src_vocab, tgt_vocab))}
            for key, data in (("vocab", _vocab_json(corpus, model, src_vocab, tgt_vocab)),
                              ("train", _train_json(corpus))):
                text = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
                contents[key] = text.encode("utf-8")
            names = {"model": f"{corpus}.safetensors", "vocab": f"{corpus}.json",
                     "train": f"{corpus}.train.json"}
            index["models"][corpus] = writer.add_group(
                {key: (names[key], contents[key]) for key in names})
        writer.commit((json.dumps(index, indent=1) + "\n").encode("utf-8"),
                      [index["recipe"]["file"]] + [f for m in index["models"].values()
                                                   for f in m["files"].values()])
    return index


def read_site(out_dir) -> dict:
    """The index of a page export in ``out_dir``, after checking every file it names against it,
    ``recipe.json`` included (present, a regular file in the folder, its size and sha256): the
    set the index names, whole. Met during a writer's switch, the index is read once more.

    Raises ValueError in one line naming the file: a missing or damaged index, another format,
    a missing or extra entry or member, a name outside the folder, or a file that does not
    match it."""
    return read_group_index(out_dir, "index.json", FORMAT, ("model", "vocab", "train"),
                            single=("recipe",))


def main(argv: list[str] | None = None) -> int:
    """``python -m illustrated.commands.web_export --out DIR [--wait SECONDS]``: 0; 2 with one line for
    an error (an index that would replace one of the files it reads among them, another writer
    of DIR after SECONDS, a folder holding another kind of set); 130 with one line after
    Ctrl-C, saying whether the new set was in place."""
    end_of_start()
    parser = argparse.ArgumentParser(prog="python -m illustrated.commands.web_export",
                                     description="The shipped models for the book's pages.")
    parser.add_argument("--out", required=True, help="folder to write into (made if missing)")
    parser.add_argument("--wait", type=check_wait, default=0, metavar="SECONDS",
                        help="wait this long for another writer of --out (default 0: refuse)")
    args = parser.parse_args(argv)
    try:
        corpora = tuple(SETTINGS)
        inputs = [*corpus_files(corpora), ("the shipped weights",
                                           weights_path(corpora[0]).parent / MANIFEST),
                  *(("the shipped weights", weights_path(c)) for c in corpora)]
        refuse_clashes(inputs, [("--out", Path(args.out) / "index.json")])
        index = export_site(args.out, corpora, wait=args.wait)
    except InterruptedAfterWrite:
        print(f"interrupted: the new export was already in place in {args.out}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print(f"interrupted: nothing changed; {args.out} holds the earlier export, whole",
              file=sys.stderr)
        return INTERRUPTED
    except (ValueError, OSError) as error:
        print(f"error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"web_export: {len(index['corpora'])} corpora into {args.out}")
    return 0


if __name__ == "__main__":
    exit_with(main())
