"""Saving and loading a trained model with its vocabularies and configuration.

Checkpoints hold only tensors, strings, numbers and lists, so they load with
``torch.load(weights_only=True)``: no arbitrary object is ever unpickled. A checkpoint is one
file, saved atomically (a temporary file in the same directory, then ``os.replace``), so a
failed or interrupted save leaves the previous file as it was. Loading checks the file's type and
size before it reads it, and everything in it before it builds the model: a file that is not a
checkpoint, truncated, oversized or inconsistent is one ValueError naming the file.

The state of a run that ``il.train(resume=...)`` continues is stored beside the model in the same
file, and written and checked by :mod:`illustrated.files.training_state`.
"""
from __future__ import annotations

import os
import re
import warnings
import zipfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import torch

from . import safetensors as _safetensors
from .._args import MAX_ELEMENTS, MAX_WEIGHTS, ArgumentTypeError, check_instance
from .atomic import check_writable, serialize, write_bytes
from .bounded import regular_file_size, size_text
from ..config import TransformerConfig
from ..data import Vocab
from ..data.vocab import check_vocab_fits
from ..modules._checks import check_config, param_count
from ..modules.transformer import Transformer

__all__ = ["save_checkpoint", "checkpoint_bytes", "load_checkpoint", "read_checkpoint",
           "estimate_bytes", "FORMAT",
           "MAX_POSITION_TABLE", "MAX_CHECKPOINT_BYTES", "VocabularyFormsWarning"]

FORMAT = "illustrated-transformer-checkpoint/1"

#: Largest checkpoint file read: the largest model (MAX_WEIGHTS float32 weights) with Adam's two
#: moments is 3 GiB; 4 GiB leaves room for the rest. Bigger files are refused before reading.
MAX_CHECKPOINT_BYTES = 16 * MAX_WEIGHTS


class VocabularyFormsWarning(UserWarning):
    """An older checkpoint's vocabulary spells a word in two Unicode forms: both ids are kept,
    the word reads as the first (see :class:`illustrated.data.Vocab`, ``merge_forms``)."""

#: Largest positional table (``max_len * d_model`` numbers) a loaded config may ask for: the
#: table is not stored in the file, so without a bound a damaged ``max_len`` could make
#: loading allocate any amount of memory. 2**25 numbers = 128 MiB of float32.
MAX_POSITION_TABLE = MAX_ELEMENTS


def _vocab(tokens: Any, what: str, name: str) -> Vocab:
    """The vocabulary ``tokens`` of the file ``name``; a word in two Unicode forms (a file
    written before tokens were normalised) is kept under both ids with one warning line."""
    if not isinstance(tokens, list):
        raise ValueError(f"holds no {what} (expected a list of tokens, got "
                         f"{type(tokens).__name__})")
    try:
        vocab = Vocab(tokens, merge_forms=True)
    except ValueError as error:
        raise ValueError(f"has an invalid {what} ({error})") from None
    if vocab.merged:
        word, ids = next(iter(vocab.merged.items()))
        more = f" (and {len(vocab.merged) - 1} more words)" if len(vocab.merged) > 1 else ""
        warnings.warn(f"{name!r}: its {what} spells {word!r} in two Unicode forms (ids "
                      f"{', '.join(map(str, ids))}){more}; typed words read as id {ids[0]} "
                      f"(written before tokens were normalised)", VocabularyFormsWarning,
                      stacklevel=4)
    return vocab


def _check_fit(cfg: TransformerConfig, src_vocab: Vocab, tgt_vocab: Vocab) -> None:
    """ValueError (message without a subject) if the vocabularies and the config disagree."""
    for side, vocab, size, pad in (("source", src_vocab, cfg.src_vocab_size, cfg.pad_id),
                                   ("target", tgt_vocab, cfg.tgt_vocab_size, cfg.tgt_pad_id)):
        try:
            check_vocab_fits(f"{side} vocabulary", vocab, size, pad)
        except ValueError as error:
            reason = str(error).partition(": ")[2].replace("the model's vocabulary", "its config's")
            raise ValueError(f"has a {side} vocabulary and a config that disagree "
                             f"({reason})") from None
    _check_table(cfg)


def _check_table(cfg: TransformerConfig) -> None:
    """ValueError (message without a subject) if the positional table is over its bound."""
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


def _check_digests(digests: Any, state: dict) -> None:
    """ValueError (message without a subject) unless ``digests`` (None: a file written without
    them) names every tensor of ``state`` with its :func:`~illustrated.files.safetensors.tensor_digest`."""
    if digests is None:
        return
    if not isinstance(digests, dict) or set(digests) != set(state) \
            or not all(isinstance(v, str) for v in digests.values()):
        names = sorted(set(state) ^ set(digests)) if isinstance(digests, dict) else []
        raise ValueError(f"has digests that do not name its tensors (expected one sha256 per "
                         f"tensor{f', not {names[0]!r}' if names else ''})")
    for key, value in state.items():
        if _safetensors.tensor_digest(key, value) != digests[key]:
            raise ValueError(f"is damaged: tensor {key!r} does not match its sha256 in the file "
                             f"(a byte changed since it was written)")


def estimate_bytes(cfg: TransformerConfig, *, training: bool = False, steps: int = 0,
                   pairs: int = 0, referent: bool = False) -> int:
    """An upper estimate of the size in bytes of a checkpoint of a ``Transformer(cfg)``.

    float32 weights, up to 512 bytes of archive record per tensor, the vocabularies; with
    ``training``, Adam's two moments and step per weight tensor, the history of ``steps`` steps
    and the batch order of ``pairs`` pairs; with ``referent`` too, the read-out of
    :mod:`illustrated.training.referent` (d_model -> src_vocab_size) and its Adam state. The command
    line, :func:`il.train` and ``make models`` require this much free space before training, so
    that a full disk is refused before the time is spent, not after. (Real files are 5 % to
    20 % smaller.)
    """
    weights = param_count(cfg)
    tensors = 42 * cfg.n_layers + 4 + (4 if cfg.norm_first else 0)
    size = 4 * weights + 512 * tensors + 32 * (cfg.src_vocab_size + cfg.tgt_vocab_size) + 16384
    if training:
        size += 8 * weights + 3 * 512 * tensors + 64 * steps + 16 * pairs + 16384
        if referent:  # the read-out's weight and bias, with Adam's two moments
            size += 12 * cfg.src_vocab_size * (cfg.d_model + 1) + 6 * 512
    return size


def save_checkpoint(path: str | os.PathLike, model: Transformer, vocabs: tuple[Vocab, Vocab],
                    cfg: TransformerConfig, *, extra: dict | None = None) -> None:
    """Write the model's weights, both vocabularies and the configuration to ``path``, atomically.

    The file is first written in full to a temporary file beside ``path``, then renamed over
    it: an error, a full disk or Ctrl-C during the save leaves an existing ``path`` byte for
    byte as it was. A symbolic link is followed (its target is replaced, the link stays).

    Parameters
    ----------
    path : file to write (its directory must exist).   model : Transformer.
    vocabs : (src_vocab, tgt_vocab).   cfg : the model's TransformerConfig (``model.cfg``).
    extra : dict or None, more fields stored beside the model (tensors, numbers, strings and
        lists only; not "format", "config", "src_vocab", "tgt_vocab" or "state_dict"):
        :mod:`illustrated.files.training_state` stores the state of a run under "training".
        :func:`load_checkpoint` ignores them.

    Raises
    ------
    TypeError
        If an argument has the wrong type (the error is also a ValueError).
    ValueError
        If ``path`` cannot be written (missing or read-only directory, a read-only file or file
        system, a directory itself), if ``cfg`` is not the model's config, the vocabularies do
        not fit the config, or a weight is NaN or infinite: nothing that
        :func:`load_checkpoint` would refuse is ever written. Also, in one line naming the
        file, if writing fails part-way (e.g. disk full); ``path`` is then unchanged.
    KeyboardInterrupt
        After Ctrl-C during the save; ``path`` is then unchanged
        (:class:`illustrated.files.atomic.InterruptedAfterWrite` if it came once the new file was in
        place: ``path`` then holds the new checkpoint, whole).

    References
    ----------
    ``torch.save``; atomic replacement: POSIX ``rename(2)`` / ``os.replace``.
    """
    check_writable(path, "path")
    write_bytes(path, checkpoint_bytes(model, vocabs, cfg, extra=extra), name="path")


def checkpoint_bytes(model: Transformer, vocabs: tuple[Vocab, Vocab], cfg: TransformerConfig, *,
                     extra: dict | None = None) -> bytes:
    """The bytes of the checkpoint :func:`save_checkpoint` writes, made in memory and checked as
    it checks them (for writers of several files at once, :mod:`illustrated.files.file_set`).

    Raises TypeError or ValueError as :func:`save_checkpoint`; KeyboardInterrupt after Ctrl-C.
    """
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
            "tgt_vocab": list(tgt_vocab.tokens), "state_dict": state,
            "digests": {k: _safetensors.tensor_digest(k, v) for k, v in state.items()}}
    if extra is not None:
        if not isinstance(extra, dict) or set(extra) & set(data):
            raise ValueError(f"extra: expected a dict of fields other than {sorted(data)}, got "
                             f"{sorted(extra) if isinstance(extra, dict) else extra!r:.80}")
        data.update(extra)
    return serialize(data)


def _torch_reason(error: BaseException) -> str:
    """torch.load's reason in one line: the weights-only unpickler's own finding when it gives
    one (not its advice to load with ``weights_only=False``), else its first line, cut at a
    word within 160 characters."""
    text = str(error)
    found = re.search(r"WeightsUnpickler error: ([^\n]*)", text)
    line = found.group(1) if found else (text.splitlines() or [""])[0]
    if len(line) > 160:
        line = line[:160].rsplit(" ", 1)[0] + " ..."
    return f"{type(error).__name__}: {line}".rstrip(": ")


def _read_torch(path: Path, head: bytes, size: int) -> Any:
    """torch.load(weights_only=True), every failure turned into a ValueError naming the file."""
    name = str(path)
    try:
        with open(path, "rb") as file:  # a file object: torch's own choice by name is skipped
            return torch.load(file, map_location="cpu", weights_only=True)
    except (MemoryError, Exception) as error:  # noqa: BLE001 - every failure, one message
        reason = _torch_reason(error)
    if head == b"PK\x03\x04":  # a zip, like every file torch.save writes
        try:
            with zipfile.ZipFile(path) as archive:
                damaged = archive.testzip() is not None
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            damaged = True
        if damaged:
            raise ValueError(f"path: {name!r} is truncated or damaged (a torch file whose "
                             f"archive is incomplete)") from None
        raise ValueError(f"path: {name!r} is not an illustrated checkpoint ({reason})"
                         ) from None
    raise ValueError(f"path: {name!r} is not an illustrated checkpoint (expected a file written "
                     f"by torch.save, a zip, or a page model, safetensors; got {size_text(size)} "
                     f"starting {head[:4]!r})") from None


def _read_data(path: Path) -> Any:
    """What the file ``path`` holds, read by the reader of its format, after checking that it is
    a regular file of at most MAX_CHECKPOINT_BYTES: torch.save's zip, or safetensors with the
    config inside (a model trained in the book's page), as the same dict: "format", "config",
    "src_vocab", "tgt_vocab", "state_dict"."""
    name = str(path)
    size = regular_file_size(path, "path", "a checkpoint file", limit=MAX_CHECKPOINT_BYTES)
    if size == 0:
        raise ValueError(f"path: {name!r} is empty, not an illustrated checkpoint")
    try:
        with open(path, "rb") as file:
            head, page_model = file.read(9), _safetensors.looks_like(file, path)
        if page_model:  # a model trained in the book's page, decided by its whole header
            return {"format": FORMAT, **_safetensors.read_checkpoint_dict(path, _shapes)}
    except OSError as error:
        raise ValueError(f"path: cannot read {name!r} ({error.strerror or error})") from None
    return _read_torch(path, head[:4], size)


def _config(config: Any) -> TransformerConfig:
    """The TransformerConfig of a file's ``config`` dict, checked: its fields, and a positional
    table within MAX_POSITION_TABLE numbers. ValueError (message without a subject) otherwise."""
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
    _check_table(cfg)
    return cfg


def _shapes(config: Any) -> dict[str, tuple[int, ...]]:
    """Every weight's shape, by its name, in a Transformer of the file's ``config`` (checked by
    :func:`_config`, and within MAX_WEIGHTS weights: the model is built to read them)."""
    cfg = _config(config)
    try:
        check_config(cfg, whole_model=True)
    except ValueError as error:
        raise ValueError(f"has sizes out of range ({error})") from None
    return {key: tuple(value.shape) for key, value in Transformer(cfg).state_dict().items()}


def load_checkpoint(path: str | os.PathLike) -> tuple[Transformer, tuple[Vocab, Vocab],
                                                      TransformerConfig]:
    """Read a checkpoint written by :func:`save_checkpoint`; the model comes back in eval mode on
    the CPU.

    The file is checked before it is read (a regular file, not a device, FIFO or directory, of
    at most :data:`MAX_CHECKPOINT_BYTES`), and everything in it before the model is built
    (``torch.load(weights_only=True)``: no arbitrary object is ever unpickled): the format, the
    config's fields and sizes, both vocabularies against the config, and every weight's name,
    shape, type and finiteness, and its sha256 where the file carries them (``digests``: every
    file :func:`save_checkpoint` and the package's page-model writer write). A vocabulary
    written before tokens were normalised may spell a
    word in two Unicode forms: it loads, with a :class:`VocabularyFormsWarning` (one line).

    Returns
    -------
    (model, (src_vocab, tgt_vocab), cfg)

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike (the error is also a ValueError).
    ValueError
        One error, whose message names the file and what is wrong with it: missing, a
        directory, a device or FIFO, too big, empty, not a checkpoint, truncated or damaged, an
        invalid config, config and weights that disagree, vocabularies and config that
        disagree, non-finite weights, a tensor that does not match its sha256 (named), or
        sizes out of range (a positional table above :data:`MAX_POSITION_TABLE` numbers).
    """
    model, vocabs, cfg, _ = read_checkpoint(path)
    return model, vocabs, cfg


def read_checkpoint(path: Any) -> tuple[Transformer, tuple[Vocab, Vocab], TransformerConfig,
                                        dict]:
    """:func:`load_checkpoint`, also returning the whole dict read from the file (its extra
    fields, e.g. a run's state for :mod:`illustrated.files.training_state`)."""
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise ArgumentTypeError(f"path: expected a file path (str or os.PathLike), "
                                f"got {type(path).__name__}")
    path = Path(path)
    name = str(path)
    try:
        os.lstat(path)
    except FileNotFoundError:
        raise ValueError(f"path: no checkpoint file at {name!r}") from None
    except OSError as error:  # a folder of mode 000: the file may well be there
        raise ValueError(f"path: cannot read {name!r} ({error.strerror or error}; its folder "
                         f"cannot be searched)") from None
    data = _read_data(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"path: {name!r} is not an illustrated checkpoint "
                         f"(expected format {FORMAT!r})")
    try:
        cfg = _config(data.get("config"))
        src_vocab = _vocab(data.get("src_vocab"), "source vocabulary", name)
        tgt_vocab = _vocab(data.get("tgt_vocab"), "target vocabulary", name)
        _check_fit(cfg, src_vocab, tgt_vocab)
        state = data.get("state_dict")
        _check_weights(cfg, state, None)  # bounds the model's size before it is built
        model = Transformer(cfg)
        _check_weights(cfg, state, model)
        _check_digests(data.get("digests"), state)
    except ValueError as error:
        raise ValueError(f"path: {name!r} {error}") from None
    model.load_state_dict(state)
    model.eval()
    return model, (src_vocab, tgt_vocab), cfg, data
