"""Saving and loading a trained model with its vocabularies and configuration.

Checkpoints hold only tensors, strings, numbers and lists, so they load with
``torch.load(weights_only=True)``: no arbitrary object is ever unpickled. Saving is atomic
(a temporary file in the same directory, then ``os.replace``), so a failed or interrupted save
leaves the previous file as it was. Loading checks everything before it builds the model: a
file that is not a checkpoint, truncated, or inconsistent is one ValueError naming the file.
"""
from __future__ import annotations

import hashlib
import math
import os
import random
import zipfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import _safetensors
from ._args import MAX_ELEMENTS, ArgumentTypeError, check_instance
from ._atomic import atomic_save, check_writable
from .config import TransformerConfig
from .data import Vocab
from .modules._checks import param_count
from .modules.transformer import Transformer

__all__ = ["save_checkpoint", "load_checkpoint", "load_training_state", "FORMAT",
           "MAX_POSITION_TABLE", "TRAINING_KEYS"]

FORMAT = "illustrated-transformer-checkpoint/1"

#: Largest positional table (``max_len * d_model`` numbers) a loaded config may ask for: the
#: table is not stored in the file, so without a bound a damaged ``max_len`` could make
#: loading allocate any amount of memory. 2**25 numbers = 128 MiB of float32.
MAX_POSITION_TABLE = MAX_ELEMENTS


def _vocab(tokens: Any, what: str) -> Vocab:
    if not isinstance(tokens, list):
        raise ValueError(f"holds no {what} (expected a list of tokens, got "
                         f"{type(tokens).__name__})")
    try:
        return Vocab(tokens)
    except ValueError as error:
        raise ValueError(f"has an invalid {what} ({error})") from None


def _check_fit(cfg: TransformerConfig, src_vocab: Vocab, tgt_vocab: Vocab) -> None:
    """ValueError (message without a subject) if the vocabularies and the config disagree."""
    for side, vocab, size, pad in (("source", src_vocab, cfg.src_vocab_size, cfg.pad_id),
                                   ("target", tgt_vocab, cfg.tgt_vocab_size, cfg.tgt_pad_id)):
        if len(vocab) != size or vocab.pad_id != pad:
            raise ValueError(f"has a {side} vocabulary and a config that disagree: "
                             f"{len(vocab)} tokens with <pad> = {vocab.pad_id}, the config says "
                             f"{size} tokens with pad id {pad}")
    if cfg.max_len * cfg.d_model > MAX_POSITION_TABLE:
        raise ValueError(f"has sizes out of range: max_len={cfg.max_len} x d_model={cfg.d_model} "
                         f"positions table exceeds {MAX_POSITION_TABLE} numbers")


def _check_weights(cfg: TransformerConfig, state: Any, model: Transformer | None) -> None:
    """ValueError (message without a subject) unless ``state`` holds exactly the model's weights."""
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise ValueError("holds no weights (expected a dict of parameter names to tensors)")
    if model is None:
        numel = sum(v.numel() for v in state.values())
        if param_count(cfg) > 2 * numel + 1_000_000:
            raise ValueError(f"has a config and weights that disagree: the config describes "
                             f"{param_count(cfg)} weights, the file holds {numel}")
        return
    expected = model.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    if missing or unexpected:
        detail = (f"missing {missing[0]!r}" if missing else "") + \
                 (", " if missing and unexpected else "") + \
                 (f"unexpected {unexpected[0]!r}" if unexpected else "")
        raise ValueError(f"has a config and weights that disagree ({detail}; "
                         f"{len(missing)} missing, {len(unexpected)} unexpected)")
    for key, value in state.items():
        if tuple(value.shape) != tuple(expected[key].shape):
            raise ValueError(f"has a config and weights that disagree: {key!r} has shape "
                             f"{tuple(value.shape)}, the config needs {tuple(expected[key].shape)}")
        if not value.is_floating_point():
            raise ValueError(f"has weights of the wrong type: {key!r} is {value.dtype}, "
                             f"expected floating point")
        if not bool(torch.isfinite(value).all()):
            raise ValueError(f"has non-finite weights: {key!r} holds NaN or infinity")


#: What a checkpoint written during training (``il.train(checkpoint_every=...)``) holds besides
#: the model, under the key "training": see :func:`load_training_state`. The file also holds
#: "digest", the sha256 of each of these fields and of the weights, written by
#: :func:`save_checkpoint`: a field changed afterwards is refused by name.
TRAINING_KEYS = ("step", "recipe", "data", "optimizer", "generator", "order", "rng", "history")

#: The lists of ``training["history"]``, one number per step done.
HISTORY_KEYS = ("loss", "lr", "accuracy", "seconds")


def estimate_bytes(cfg: TransformerConfig, *, training: bool = False, steps: int = 0,
                   pairs: int = 0) -> int:
    """An upper estimate of the size in bytes of a checkpoint of a ``Transformer(cfg)``.

    float32 weights, up to 512 bytes of archive record per tensor, the vocabularies; with
    ``training``, Adam's two moments and step per weight tensor, the history of ``steps`` steps
    and the batch order of ``pairs`` pairs. The command line, :func:`il.train` and
    ``make models`` require this much free space before training, so that a full disk is
    refused before the time is spent, not after. (Real files are 5 % to 20 % smaller.)
    """
    weights = param_count(cfg)
    tensors = 42 * cfg.n_layers + 4 + (4 if cfg.norm_first else 0)
    size = 4 * weights + 512 * tensors + 32 * (cfg.src_vocab_size + cfg.tgt_vocab_size) + 16384
    if training:
        size += 8 * weights + 3 * 512 * tensors + 64 * steps + 16 * pairs + 16384
    return size


def _digest(value: Any) -> str:
    """sha256 of a nest of dicts, lists, tensors, numbers and strings (a canonical walk)."""
    h = hashlib.sha256()

    def walk(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu().contiguous().reshape(-1)
            h.update(f"T{v.dtype}{tuple(v.shape)}".encode())
            h.update(t.view(torch.uint8).numpy() if t.numel() else b"")  # no copy
        elif isinstance(v, dict):
            h.update(f"D{len(v)}".encode())
            for key in sorted(v, key=repr):
                walk(key)
                walk(v[key])
        elif isinstance(v, (list, tuple)):
            h.update(f"L{len(v)}".encode())
            for item in v:
                walk(item)
        else:
            h.update(f"{type(v).__name__}:{v!r};".encode())

    walk(value)
    return h.hexdigest()


def _digests(training: dict, state: dict) -> dict:
    """The "digest" of a training state: sha256 of each field and of the weights."""
    return {**{key: _digest(training[key]) for key in TRAINING_KEYS}, "weights": _digest(state)}


def save_checkpoint(path: str | os.PathLike, model: Transformer, vocabs: tuple[Vocab, Vocab],
                    cfg: TransformerConfig, *, training: dict | None = None) -> None:
    """Write the model's weights, both vocabularies and the configuration to ``path``, atomically.

    The file is first written in full to a temporary file beside ``path``, then renamed over
    it: an error, a full disk or Ctrl-C during the save leaves an existing ``path`` byte for
    byte as it was. A symbolic link is followed (its target is replaced, the link stays).

    Parameters
    ----------
    path : file to write (its directory must exist).   model : Transformer.
    vocabs : (src_vocab, tgt_vocab).   cfg : the model's TransformerConfig (``model.cfg``).
    training : dict or None, the state that lets ``il.train(resume=path)`` continue the run
        (written by ``il.train`` itself; keys :data:`TRAINING_KEYS`; tensors, numbers, strings
        and lists only); saved with the sha256 of each field. :func:`load_checkpoint` ignores it.

    Raises
    ------
    TypeError
        If an argument has the wrong type (the error is also a ValueError).
    ValueError
        If ``path`` cannot be written (missing or read-only directory, a read-only file, a
        directory itself), if ``cfg`` is not the model's config, the vocabularies do not fit
        the config, or a weight is NaN or infinite: nothing that :func:`load_checkpoint` would
        refuse is ever written. Also, in one line naming the file, if writing fails part-way
        (e.g. disk full); ``path`` is then unchanged.
    KeyboardInterrupt
        After Ctrl-C during the save; ``path`` is then unchanged.

    References
    ----------
    ``torch.save``; atomic replacement: POSIX ``rename(2)`` / ``os.replace``.
    """
    check_writable(path, "path")
    check_instance("model", model, Transformer, "an illustrated Transformer")
    if not isinstance(vocabs, (tuple, list)) or len(vocabs) != 2 \
            or not all(isinstance(v, Vocab) for v in vocabs):
        raise ArgumentTypeError(f"vocabs: expected (src_vocab, tgt_vocab), two Vocab objects, "
                                f"got {type(vocabs).__name__}")
    check_instance("cfg", cfg, TransformerConfig, "a TransformerConfig")
    if cfg != model.cfg:
        diff = [f"{f.name}={getattr(cfg, f.name)!r} (model: {getattr(model.cfg, f.name)!r})"
                for f in fields(cfg) if getattr(cfg, f.name) != getattr(model.cfg, f.name)]
        raise ValueError(f"cfg: expected the model's own config (model.cfg), got one that "
                         f"differs in {', '.join(diff)}")
    src_vocab, tgt_vocab = vocabs
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    try:
        _check_fit(cfg, src_vocab, tgt_vocab)
    except ValueError as error:
        raise ValueError(f"vocabs: the model {error}") from None
    try:
        _check_weights(cfg, state, model)
    except ValueError as error:
        raise ValueError(f"model: {str(error).removeprefix('has ')}") from None
    data = {"format": FORMAT, "config": asdict(cfg), "src_vocab": list(src_vocab.tokens),
            "tgt_vocab": list(tgt_vocab.tokens), "state_dict": state}
    if training is not None:
        if not isinstance(training, dict) or sorted(training) != sorted(TRAINING_KEYS):
            raise ValueError(f"training: expected a dict with the keys {TRAINING_KEYS}, got "
                             f"{sorted(training) if isinstance(training, dict) else training!r}")
        data["training"] = {**training, "digest": _digests(training, state)}
    atomic_save(data, path, name="path")


def _read(path: Path) -> Any:
    """torch.load(weights_only=True), every failure turned into a ValueError naming the file."""
    name = str(path)
    try:
        with open(path, "rb") as file:
            head = file.read(4)
    except OSError as error:
        raise ValueError(f"path: cannot read {name!r} ({error.strerror or error})") from None
    if not head:
        raise ValueError(f"path: {name!r} is empty, not an illustrated checkpoint")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (MemoryError, Exception) as error:  # noqa: BLE001 - every failure, one message
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    if head == b"PK\x03\x04":  # a zip, like every file torch.save writes
        try:
            with zipfile.ZipFile(path) as archive:
                damaged = archive.testzip() is not None
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            damaged = True
        if damaged:
            raise ValueError(f"path: {name!r} is truncated or damaged (a torch file whose "
                             f"archive is incomplete)") from None
        raise ValueError(f"path: {name!r} is not an illustrated checkpoint ({reason[:200]})"
                         ) from None
    raise ValueError(f"path: {name!r} is not an illustrated checkpoint (not a file written by "
                     f"torch.save; {reason[:200]})") from None


def load_checkpoint(path: str | os.PathLike) -> tuple[Transformer, tuple[Vocab, Vocab],
                                                      TransformerConfig]:
    """Read a checkpoint written by :func:`save_checkpoint`; the model comes back in eval mode on
    the CPU.

    Everything is checked before the model is built (``torch.load(weights_only=True)``: no
    arbitrary object is ever unpickled): the format, the config's fields and sizes, both
    vocabularies against the config, and every weight's name, shape, type and finiteness.

    Returns
    -------
    (model, (src_vocab, tgt_vocab), cfg)

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike (the error is also a ValueError).
    ValueError
        One error, whose message names the file and what is wrong with it: missing, a
        directory, empty, not a checkpoint, truncated or damaged, an invalid config, config and
        weights that disagree, vocabularies and config that disagree, non-finite weights, or
        sizes out of range (a positional table above :data:`MAX_POSITION_TABLE` numbers).
    """
    model, vocabs, cfg, _ = _load(path)
    return model, vocabs, cfg


def _load(path: Any) -> tuple[Transformer, tuple[Vocab, Vocab], TransformerConfig, dict]:
    """:func:`load_checkpoint`'s work; also returns the whole dict read from the file."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise ArgumentTypeError(f"path: expected a file path (str or os.PathLike), "
                                f"got {type(path).__name__}")
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise ValueError(f"path: {name!r} is a directory, expected a checkpoint file")
    if not path.is_file():
        raise ValueError(f"path: no checkpoint file at {name!r}")
    if _safetensors.is_safetensors(path):  # a model trained in the book's page
        data = {"format": FORMAT, **_safetensors.read_checkpoint_dict(path)}
    else:
        data = _read(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"path: {name!r} is not an illustrated checkpoint "
                         f"(expected format {FORMAT!r})")
    try:
        config = data.get("config")
        if not isinstance(config, dict):
            raise ValueError("holds no config (expected a dict of TransformerConfig fields)")
        known = {f.name for f in fields(TransformerConfig)}
        unknown = sorted(str(k) for k in config if k not in known)
        if unknown:
            raise ValueError(f"has an invalid config (unknown field {unknown[0]!r})")
        try:
            cfg = TransformerConfig(**config)
        except (TypeError, ValueError) as error:
            raise ValueError(f"has an invalid config ({error})") from None
        src_vocab = _vocab(data.get("src_vocab"), "source vocabulary")
        tgt_vocab = _vocab(data.get("tgt_vocab"), "target vocabulary")
        _check_fit(cfg, src_vocab, tgt_vocab)
        state = data.get("state_dict")
        _check_weights(cfg, state, None)  # bounds the model's size before it is built
        model = Transformer(cfg)
        _check_weights(cfg, state, model)
    except ValueError as error:
        raise ValueError(f"path: {name!r} {error}") from None
    model.load_state_dict(state)
    model.eval()
    return model, (src_vocab, tgt_vocab), cfg, data


def load_training_state(path: str | os.PathLike) -> tuple[Transformer, tuple[Vocab, Vocab],
                                                          TransformerConfig, dict]:
    """Read a checkpoint written during training, for ``il.train(resume=path)``.

    Every field is checked against the sha256 that :func:`save_checkpoint` wrote beside it, then
    for its type and range, before anything uses it: a file changed after it was written is
    one ValueError naming the file and the field, never an IndexError or a RuntimeError from
    torch or NumPy when the run goes on.

    Returns
    -------
    (model, (src_vocab, tgt_vocab), cfg, training): as :func:`load_checkpoint`, plus the dict
    of :data:`TRAINING_KEYS`: ``step`` (int, steps done), ``recipe`` (the training keywords
    that must stay the same), ``data`` (sha256 of the training pairs and vocabularies),
    ``optimizer`` (Adam's state_dict), ``generator`` (the shuffling generator's state),
    ``order`` (pair indices left in the current epoch), ``rng`` (the global RNG states: torch
    CPU, CUDA or None, Python, NumPy), ``history`` (loss, lr, accuracy, seconds per step so far).

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike (the error is also a ValueError).
    ValueError
        As :func:`load_checkpoint`, and if the file holds no training state (a checkpoint saved
        after training, e.g. by ``save_checkpoint`` alone), one written before training states
        carried checksums, or one whose field (named in the message) was changed or is
        malformed: a step below 1, an order that is not a list of distinct pair indices, an RNG
        or generator state torch, Python or NumPy would refuse, a history of the wrong length
        or with a non-finite number, an optimizer state that does not fit the model.
    """
    model, vocabs, cfg, data = _load(path)
    name = str(path)
    training = data.get("training")
    if training is None:
        raise ValueError(f"path: {name!r} holds no training state (it is a finished model; "
                         f"resume needs a checkpoint written with checkpoint_every / "
                         f"--checkpoint-every)")
    if not isinstance(training, dict) or not isinstance(training.get("digest"), dict) \
            or "data" not in training:
        raise ValueError(f"path: {name!r} has a training state without checksums or data "
                         f"fingerprint (written by an older version, or not by il.train): "
                         f"train again with checkpoint_every / --checkpoint-every")
    if sorted(training) != sorted((*TRAINING_KEYS, "digest")):
        raise ValueError(f"path: {name!r} has a malformed training state (expected the keys "
                         f"{TRAINING_KEYS}, got {sorted(map(str, training))})")
    digest = training["digest"]
    for key, value in [*((k, training[k]) for k in TRAINING_KEYS),
                       ("weights", data["state_dict"])]:
        if digest.get(key) != _digest(value):
            what = "the model's weights were" if key == "weights" else f"field {key!r} was"
            raise ValueError(f"path: {name!r} has a damaged training state: {what} changed "
                             f"after the checkpoint was written (its sha256 does not match)")
    try:
        _check_training(training, model)
    except ValueError as error:
        raise ValueError(f"path: {name!r} has a malformed training state: {error}") from None
    return model, vocabs, cfg, training


def _check_training(training: dict, model: Transformer) -> None:
    """ValueError "field 'NAME': what is wrong" unless every field can be used as it is."""
    def bad(field: str, what: str) -> ValueError:
        return ValueError(f"field {field!r}: {what}")

    step = training["step"]
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise bad("step", f"expected an integer >= 1, got {step!r:.40}")
    if not isinstance(training["recipe"], dict):
        raise bad("recipe", "expected a dict of training keywords")
    if not isinstance(training["data"], str) or len(training["data"]) != 64:
        raise bad("data", "expected a sha256 in hex")
    history = training["history"]
    if not isinstance(history, dict) or sorted(history) != sorted(HISTORY_KEYS):
        raise bad("history", f"expected a dict with the lists {HISTORY_KEYS}")
    for key in HISTORY_KEYS:
        values = history[key]
        if not isinstance(values, list) or len(values) != step:
            raise bad("history", f"expected {step} numbers in {key!r} (one per step done)")
        for i, value in enumerate(values):
            if not isinstance(value, (int, float)) or isinstance(value, bool) \
                    or not math.isfinite(value):
                raise bad("history", f"expected finite numbers in {key!r}, got {value!r:.40} "
                                     f"at step {i + 1}")
    order = training["order"]
    if not isinstance(order, list) or not all(type(i) is int and i >= 0 for i in order) \
            or len(set(order)) != len(order):
        raise bad("order", "expected a list of distinct pair indices >= 0")
    _check_generator("generator", training["generator"])
    rng = training["rng"]
    if not isinstance(rng, dict) or sorted(rng) != ["cuda", "numpy", "python", "torch"]:
        raise bad("rng", "expected a dict of the states 'torch', 'cuda', 'python', 'numpy'")
    _check_generator("rng", rng["torch"])
    if rng["cuda"] is not None and (not isinstance(rng["cuda"], torch.Tensor)
                                    or rng["cuda"].dtype != torch.uint8):
        raise bad("rng", "expected None or a uint8 tensor for 'cuda'")
    try:
        version, keys, gauss = rng["python"]
        random.Random().setstate((version, tuple(keys), gauss))
        kind, mt, pos, has_gauss, cached = rng["numpy"]
        if not isinstance(mt, torch.Tensor) or mt.dtype != torch.int64 or mt.dim() != 1 \
                or bool((mt < 0).any()) or bool((mt >= 2**32).any()):
            raise ValueError("the NumPy key is not 32-bit words")
        if not isinstance(pos, int) or not 0 <= pos <= 624:
            raise ValueError(f"the NumPy position {pos!r:.20} is not in [0, 624]")
        np.random.RandomState().set_state((kind, mt.numpy().astype(np.uint32), pos, has_gauss,
                                           cached))
    except (TypeError, ValueError, OverflowError, IndexError) as error:
        raise bad("rng", f"a Python or NumPy state that cannot be restored ({error})") from None
    _check_optimizer(training["optimizer"], model)


def _check_generator(field: str, state: Any) -> None:
    """ValueError unless ``state`` is a state torch's CPU generator takes."""
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.dim() != 1:
        raise ValueError(f"field {field!r}: expected a generator state (a uint8 tensor)")
    try:
        torch.Generator().set_state(state)
    except RuntimeError as error:
        raise ValueError(f"field {field!r}: a generator state torch refuses "
                         f"({str(error).splitlines()[0][:120]})") from None


def _check_optimizer(state: Any, model: Transformer) -> None:
    """ValueError unless ``state`` is an Adam state_dict of the model's parameters."""
    params = list(model.parameters())
    problem = None
    if not isinstance(state, dict) or sorted(state) != ["param_groups", "state"] \
            or not isinstance(state["param_groups"], list) or len(state["param_groups"]) != 1 \
            or not isinstance(state["param_groups"][0], dict) \
            or state["param_groups"][0].get("params") != list(range(len(params))) \
            or not isinstance(state["state"], dict):
        problem = f"expected Adam's state of the model's {len(params)} parameters"
    else:
        for index, entry in state["state"].items():
            if not isinstance(index, int) or not 0 <= index < len(params) \
                    or not isinstance(entry, dict) \
                    or sorted(entry) != ["exp_avg", "exp_avg_sq", "step"]:
                problem = f"expected Adam's moments and step for parameter indices, got {index!r}"
                break
            for key in ("exp_avg", "exp_avg_sq"):
                value = entry[key]
                if not isinstance(value, torch.Tensor) or value.shape != params[index].shape \
                        or not value.is_floating_point() or not bool(value.isfinite().all()):
                    problem = (f"{key!r} of parameter {index} is not a finite tensor of "
                               f"shape {tuple(params[index].shape)}")
                    break
            step = entry["step"]
            if problem is None and (not isinstance(step, torch.Tensor) or step.numel() != 1
                                    or not math.isfinite(float(step)) or float(step) < 0):
                problem = f"'step' of parameter {index} is not a count"
            if problem:
                break
    if problem:
        raise ValueError(f"field 'optimizer': {problem}")
