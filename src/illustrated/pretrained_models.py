"""Default model sizes and training recipe for each toy corpus, and the book's trained models.

The same settings serve the command line (``python -m illustrated train``), the chapters and the
benchmarks, so that every page shows the model the README's numbers describe. The trained
models ship as package data (``weights/{corpus}.pt`` and ``weights/manifest.json``, made by
:mod:`illustrated.commands.shipped`); this module reads them, checking each file's sha256 against the
manifest, for :func:`pretrained`.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from importlib import resources
from pathlib import Path

import torch

from ._args import MAX_SEED, ArgumentTypeError, check_bool, check_int, describe
from .files.bounded import read_json
from .files.file_set import member
from .files.checkpoint import load_checkpoint
from .config import TINY, TransformerConfig
from .data import CORPORA, Vocab, load_corpus, pronoun_correct
from .inference.translate import exact_match, translate
from .modules.transformer import Transformer
from .recipe import CORPUS_PRESETS, PRESETS
from .training.loop import History, pick_device, set_seed, train

__all__ = ["SETTINGS", "make_config", "train_corpus", "pretrained", "evaluate", "MANIFEST",
           "MANIFEST_FORMAT", "manifest", "read_manifest", "weights_path", "sha256",
           "load_shipped"]

#: Per corpus: model sizes (fields of TransformerConfig over TINY) and the Recipe's fields it
#: sets, from the one table of presets (:data:`illustrated.recipe.PRESETS`).
SETTINGS: dict[str, dict[str, dict]] = {
    corpus: {"model": dict(PRESETS[corpus].model), "train": dict(PRESETS[corpus].train)}
    for corpus in CORPUS_PRESETS}


def _check_corpus(corpus: object) -> None:
    """ValueError (ArgumentTypeError for a non-str) naming ``corpus`` unless it is a corpus."""
    if not isinstance(corpus, str):
        raise ArgumentTypeError(f"corpus: expected one of {', '.join(CORPORA)} (a str), got "
                                f"{type(corpus).__name__} {describe(corpus)}")
    if corpus not in SETTINGS:
        raise ValueError(f"corpus: expected one of {', '.join(CORPORA)}, got {corpus!r}")


def make_config(corpus: str, src_vocab: Vocab, tgt_vocab: Vocab, **overrides) -> TransformerConfig:
    """The corpus's default TransformerConfig (TINY plus its settings), sized for its vocabularies.

    ``overrides`` are TransformerConfig fields (e.g. ``d_model=64``) that win over the defaults.

    Raises
    ------
    ValueError
        For an unknown corpus or an invalid override.
    """
    _check_corpus(corpus)
    fields = {**SETTINGS[corpus]["model"], **overrides}
    return replace(TINY, src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab),
                   pad_id=src_vocab.pad_id, tgt_pad_id=tgt_vocab.pad_id, **fields)


def train_corpus(corpus: str, *, model_overrides: dict | None = None, seed: int = 0,
                 **train_overrides) -> tuple[Transformer, Vocab, Vocab, History]:
    """Build the corpus's default model and train it on the corpus's training split.

    Returns
    -------
    (model, src_vocab, tgt_vocab, history); the model is in eval mode.
    """
    _check_corpus(corpus)
    pairs, src_vocab, tgt_vocab = load_corpus(corpus, "train")
    cfg = make_config(corpus, src_vocab, tgt_vocab, **(model_overrides or {}))
    set_seed(seed)
    model = Transformer(cfg)
    kwargs = {**SETTINGS[corpus]["train"], "seed": seed, **train_overrides}
    history = train(model, pairs, src_vocab, tgt_vocab, **kwargs)
    return model, src_vocab, tgt_vocab, history


def pretrained(corpus: str, *, retrain: bool = False, seed: int = 0,
               device: str | torch.device = "cpu") -> tuple[Transformer, Vocab, Vocab]:
    """The corpus's default model: the weights shipped with the package, or trained afresh.

    By default this loads the model that ``make models`` trained once and shipped inside the
    package (``illustrated/weights``, see :mod:`illustrated.commands.shipped`): no training, a few
    milliseconds, the same weights, hence the same numbers, on every machine.
    ``retrain=True`` trains the same recipe (:data:`SETTINGS`, ``seed``) from scratch instead,
    as the book's widgets do; those weights depend on the CPU's vector instructions and
    thread count, the quality of the result does not (``benchmarks/retrain.py``).

    Parameters
    ----------
    corpus : one of ``il.data.CORPORA``.
    retrain : bool, train afresh instead of loading the shipped weights.
    seed : int, the seed of a retraining (the shipped models used 0).
    device : where the model is returned (and, with ``retrain=True``, trained); "cpu" by default.

    Returns
    -------
    (model, src_vocab, tgt_vocab), the model in eval mode on ``device``.

    Raises
    ------
    TypeError
        If ``corpus`` is not a str, ``retrain`` not a bool (``'no'`` would be true) or ``seed``
        not an integer, whether or not it retrains (the error is also a ValueError).
    ValueError
        For an unknown corpus or device, a ``seed`` outside [0, 2**32 - 1], a damaged
        manifest, or shipped weights that do not match their manifest (naming the file).
    """
    _check_corpus(corpus)
    check_bool("retrain", retrain)
    seed = check_int("seed", seed, low=0, high=MAX_SEED)  # np.int64(1) becomes 1
    chosen = pick_device(device)
    if retrain:
        model, src_vocab, tgt_vocab, _ = train_corpus(corpus, seed=seed, device=chosen,
                                                      progress=False)
        return model, src_vocab, tgt_vocab
    model, src_vocab, tgt_vocab = load_shipped(corpus)
    return model.to(chosen), src_vocab, tgt_vocab


def evaluate(model: Transformer, corpus: str, src_vocab: Vocab, tgt_vocab: Vocab, *,
             split: str = "test", beam_size: int = 1) -> dict[str, float]:
    """The corpus's metrics on a split: exact match, and for coreference the il/elle accuracy.

    Returns
    -------
    {"exact_match": float in [0, 1]} plus {"pronoun_accuracy": ...} for "coreference".
    """
    _check_corpus(corpus)
    pairs, _, _ = load_corpus(corpus, split)
    result = {"exact_match": exact_match(model, pairs, src_vocab, tgt_vocab, beam_size=beam_size)}
    if corpus == "coreference":
        predictions = translate(model, [s for s, _ in pairs], src_vocab, tgt_vocab,
                                beam_size=beam_size)
        result["pronoun_accuracy"] = sum(pronoun_correct(p, t) for p, (_, t)
                                         in zip(predictions, pairs)) / len(pairs)
    return result


#: The shipped models' manifest, beside their weights in ``illustrated/weights``.
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "illustrated-shipped-models/1"

#: Largest manifest read (today's is 3 kB).
MAX_MANIFEST_BYTES = 1 << 20

_REMAKE = "reinstall the package or run `make models`"


def _weights_dir():
    """The package's weights folder (an importlib.resources Traversable)."""
    return resources.files(__package__) / "weights"


def read_manifest(path: str | os.PathLike) -> dict:
    """A manifest file ``{"format", "models": {corpus: {"file", "sha256", "bytes", ...}}}``,
    checked: a regular JSON file of at most 1 MiB, nested at most 32 deep, of this format.

    The manifest is written last, after every weights file it names
    (:mod:`illustrated.files.file_set`): the set it names is whole, the old one or the new one.

    Raises
    ------
    ValueError
        One line naming the file: missing, a device or FIFO, too big or too deep, unreadable,
        not JSON, another format, or a model entry without its file name, sha256 and size.
    """
    name = str(path)
    try:
        data = read_json(path, "manifest", "a manifest of shipped models",
                         limit=MAX_MANIFEST_BYTES)
    except ValueError as error:
        raise ValueError(f"{error}; {_REMAKE}") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT \
            or not isinstance(data.get("models"), dict):
        raise ValueError(f"manifest: {name!r} is damaged (expected format {MANIFEST_FORMAT!r} "
                         f"with a dict of models); {_REMAKE}")
    for corpus, entry in data["models"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
                or not isinstance(entry.get("sha256"), str) or len(entry["sha256"]) != 64 \
                or not isinstance(entry.get("bytes"), int):
            raise ValueError(f"manifest: {name!r} is damaged (the entry of {corpus!r} has no "
                             f"file name, sha256 and size); {_REMAKE}")
    return data


def manifest() -> dict:
    """The shipped models' manifest: ``{"format", "models": {corpus: {...}}}``.

    Each model's entry holds ``file``, ``sha256``, ``bytes``, ``settings`` (model sizes and
    training keywords), ``seed``, ``torch``, ``cpu_capability``, ``threads``, ``train_seconds``
    and ``metrics`` (on the test split).

    Raises
    ------
    ValueError
        If the manifest is damaged (see :func:`read_manifest`).
    """
    return read_manifest(Path(str(_weights_dir() / MANIFEST)))


def weights_path(corpus: str) -> Path:
    """The shipped weights file of ``corpus`` inside the installed package, as the manifest
    names it (``weights/{corpus}.pt`` if the manifest has no entry for it).

    Raises ValueError for an unknown corpus or a damaged manifest."""
    _check_corpus(corpus)
    entry = manifest()["models"].get(corpus)
    return Path(str(_weights_dir() / (entry["file"] if entry else f"{corpus}.pt")))


def sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_shipped(corpus: str) -> tuple[Transformer, Vocab, Vocab]:
    """Load the shipped model of ``corpus`` on the CPU, in eval mode, after checking that its file
    is the one the manifest names (its size and sha256).

    Returns
    -------
    (model, src_vocab, tgt_vocab)

    Raises
    ------
    ValueError
        For an unknown corpus, a damaged manifest, or a weights file that is missing or does
        not match the manifest (naming the file).
    """
    _check_corpus(corpus)
    folder = Path(str(_weights_dir()))
    entry = manifest()["models"].get(corpus)
    if entry is None:
        raise ValueError(f"corpus: no shipped model for {corpus!r} in {str(folder)!r} "
                         f"(run `make models`)")
    path = member(folder, entry, "corpus", "the shipped weights", index="the manifest",
                  hint=" (run `make models` again)")
    model, (src_vocab, tgt_vocab), _ = load_checkpoint(path)
    return model, src_vocab, tgt_vocab
