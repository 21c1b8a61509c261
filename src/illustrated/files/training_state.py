"""The saved state of a training run, written and checked in one place: what ``il.train`` stores
in a checkpoint every ``checkpoint_every`` steps and what ``il.train(resume=...)`` reads back.

A checkpoint written during training is an ordinary checkpoint (:mod:`illustrated.files.checkpoint`)
with one more field, "training": the step, the recipe (the keywords that must stay the same),
the sha256 of the training data (each side's sentences as ids, and each vocabulary), Adam's
state, the shuffling generator, the batch order left in the epoch, the global RNG states and the
history; when the run's ``referent_weight`` > 0, "referent", the weights of the "it" objective's
read-out (:mod:`illustrated.training.referent`), whose Adam state is the optimizer's second group; plus
"digest", the sha256 of each of these fields and of the weights. Reading it back
checks every field against its sha256, then for its type and range, then against the run that
resumes it (config, data and recipe, field by field): a file changed after it was written, or
one of another run, is one ValueError naming the file and the field.

References: the paper's training set-up, §5.3-§5.4 (Adam, the schedule, label smoothing);
PyTorch's "Saving and loading a general checkpoint" recipe.
"""
from __future__ import annotations

import hashlib
import math
import os
import random
from dataclasses import fields
from typing import Any

import numpy as np
import torch

from .._args import check_int
from .checkpoint import read_checkpoint, save_checkpoint
from ..config import TransformerConfig
from ..data import Vocab
from ..modules.transformer import Transformer
from ..recipe import PRECISIONS, Recipe, check_field

__all__ = ["TRAINING_KEYS", "HISTORY_KEYS", "RECIPE_KEYS", "PRECISIONS", "DATA_PARTS",
           "check_recipe", "data_fingerprint", "save_training_state", "load_training_state",
           "REFERENT_KEY", "resume_state", "restore", "digests"]

#: What a checkpoint written during training holds besides the model, under "training" (with
#: "digest", the sha256 of each of these fields and of the weights).
TRAINING_KEYS = ("step", "recipe", "data", "optimizer", "generator", "order", "rng", "history")

#: The field a checkpoint holds besides :data:`TRAINING_KEYS` when its recipe's referent_weight
#: is > 0: the read-out's state_dict (checkpoints of runs without it, older ones included, have
#: none).
REFERENT_KEY = "referent"

#: The lists of ``training["history"]``, one number per step done.
HISTORY_KEYS = ("loss", "lr", "accuracy", "seconds")

#: The training data's parts, each fingerprinted on its own, and their names in messages.
DATA_PARTS = {"sources": "source sentences", "targets": "target sentences",
              "src_vocab": "source vocabulary", "tgt_vocab": "target vocabulary"}

#: The recipe a resumed run must share: the fields of :class:`illustrated.recipe.Recipe` so
#: declared, and the number of processes.
RECIPE_KEYS = (*Recipe().resumed(), "processes")


def check_recipe(recipe: dict) -> dict:
    """``recipe`` if each of its keywords (those of :data:`RECIPE_KEYS` it holds) is valid, as
    the Recipe declares it (the processes: an integer >= 1).

    Raises TypeError (also a ValueError) or ValueError naming the keyword, as ``il.train``'s
    arguments: ``"lr: expected a learning rate > 0.0, got -1.0"``.
    """
    for key in RECIPE_KEYS:
        if key == "processes" and key in recipe:
            check_int(key, recipe[key], low=1, what="a number of processes")
        elif key in recipe:
            check_field(key, recipe[key])
    return recipe


def _is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef"
                                                               for c in value)


def data_fingerprint(encoded: list, src_vocab: Vocab, tgt_vocab: Vocab) -> dict[str, str]:
    """sha256 of what training reads, part by part (:data:`DATA_PARTS`): each side's sentences
    as ids, in order, and each vocabulary."""
    def ids(side: int) -> str:
        h = hashlib.sha256()
        for pair in encoded:
            h.update(f"{','.join(map(str, pair[side]))}\n".encode())
        return h.hexdigest()

    def tokens(vocab: Vocab) -> str:
        return hashlib.sha256(("\x1f".join(vocab.tokens) + "\x1e").encode("utf-8")).hexdigest()

    return {"sources": ids(0), "targets": ids(1), "src_vocab": tokens(src_vocab),
            "tgt_vocab": tokens(tgt_vocab)}


def _old_fingerprint(encoded: list, src_vocab: Vocab, tgt_vocab: Vocab) -> str:
    """The one sha256 that checkpoints written before the parts were fingerprinted hold."""
    h = hashlib.sha256()
    for vocab in (src_vocab, tgt_vocab):
        h.update(("\x1f".join(vocab.tokens) + "\x1e").encode("utf-8"))
    for src, tgt in encoded:
        h.update(f"{','.join(map(str, src))};{','.join(map(str, tgt))}\n".encode())
    return h.hexdigest()


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


def _keys(training: dict) -> tuple[str, ...]:
    """The fields of ``training`` a digest covers: :data:`TRAINING_KEYS`, and the read-out's."""
    return (*TRAINING_KEYS, *((REFERENT_KEY,) if REFERENT_KEY in training else ()))


def digests(training: dict, state: dict) -> dict:
    """The "digest" of a training state: sha256 of each field and of the weights."""
    return {**{key: _digest(training[key]) for key in _keys(training)}, "weights": _digest(state)}


# ---- written

def _to_cpu(value: object) -> object:
    """A copy of a nest of dicts/lists/tuples whose tensors are moved to the CPU."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _rng_state(device: torch.device) -> dict:
    """The global RNG states a resumed run needs, as tensors, numbers and lists (weights_only)."""
    version, keys, gauss = random.getstate()
    name, mt, pos, has_gauss, cached = np.random.get_state()
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
            "python": [version, list(keys), gauss],
            "numpy": [name, torch.from_numpy(mt.astype(np.int64)), pos, has_gauss, cached]}


def save_training_state(path, model: Transformer, vocabs: tuple[Vocab, Vocab], *, step: int,
                        recipe: dict, data: dict, optimizer: torch.optim.Optimizer,
                        generator: torch.Generator, order: list[int], device: torch.device,
                        history, readout: torch.nn.Module | None = None) -> None:
    """Save the model and everything ``il.train`` needs to continue after ``step``, atomically,
    with the sha256 of each field; ``readout``: the "it" objective's, when it is on. A file that
    cannot be written (a full disk) is one ValueError naming ``checkpoint_path`` and the step;
    the previous checkpoint is intact."""
    training = {"step": step, "recipe": dict(recipe), "data": dict(data),
                "optimizer": _to_cpu(optimizer.state_dict()), "generator": generator.get_state(),
                "order": list(order), "rng": _rng_state(device),
                "history": {k: list(getattr(history, k)) for k in HISTORY_KEYS}}
    if readout is not None:
        training[REFERENT_KEY] = _to_cpu(readout.state_dict())
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    try:
        save_checkpoint(path, model, vocabs, model.cfg,
                        extra={"training": {**training, "digest": digests(training, state)}})
    except ValueError as error:  # a full disk mid-run: the previous checkpoint is still there
        raise ValueError(f"checkpoint_path: {str(error).removeprefix('path: ')}; training "
                         f"stopped after step {step}") from None


# ---- read and checked

def load_training_state(path: str | os.PathLike) -> tuple[Transformer, tuple[Vocab, Vocab],
                                                          TransformerConfig, dict]:
    """Read a checkpoint written during training, for ``il.train(resume=path)``.

    Every field is checked against the sha256 written beside it, then for its type and range
    (the recipe as ``il.train`` checks its arguments), before anything uses it: a file changed
    after it was written is one ValueError naming the file and the field, never an IndexError
    or a RuntimeError from torch or NumPy when the run goes on.

    Returns
    -------
    (model, (src_vocab, tgt_vocab), cfg, training): as :func:`il.load_checkpoint`, plus the
    dict of :data:`TRAINING_KEYS`: ``step`` (int, steps done), ``recipe`` (the training keywords
    that must stay the same), ``data`` (sha256 of the training data, :data:`DATA_PARTS`),
    ``optimizer`` (Adam's state_dict), ``generator`` (the shuffling generator's state),
    ``order`` (pair indices left in the current epoch), ``rng`` (the global RNG states: torch
    CPU, CUDA or None, Python, NumPy), ``history`` (loss, lr, accuracy, seconds per step so far),
    and when the recipe's ``referent_weight`` > 0 ``referent`` (:data:`REFERENT_KEY`, the
    read-out's state_dict; Adam's state then has its two parameters as a second group).

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike (the error is also a ValueError).
    ValueError
        As :func:`il.load_checkpoint`, and if the file holds no training state (a checkpoint
        saved after training, e.g. by ``save_checkpoint`` alone), one written before training
        states carried checksums, or one whose field (named in the message) was changed or is
        malformed: a step below 1, a recipe with a value ``il.train`` refuses, an order that is
        not a list of distinct pair indices, an RNG or generator state torch, Python or NumPy
        would refuse, a history of the wrong length or with a non-finite number, an optimizer
        state that does not fit the model (and the read-out), a read-out missing while the
        recipe's ``referent_weight`` is > 0 (or present while it is 0) or not a finite
        ``d_model -> src_vocab_size`` linear map.
    """
    model, vocabs, cfg, data = read_checkpoint(path)
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
    if sorted(training) != sorted((*_keys(training), "digest")):
        raise ValueError(f"path: {name!r} has a malformed training state (expected the keys "
                         f"{TRAINING_KEYS}, got {sorted(map(str, training))})")
    digest = training["digest"]
    for key, value in [*((k, training[k]) for k in _keys(training)),
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


def resume_state(resume, model: Transformer, *, recipe: dict, encoded: list,
                 vocabs: tuple[Vocab, Vocab], steps: int, optimizer: torch.optim.Optimizer
                 ) -> dict | None:
    """The training state of the checkpoint ``resume`` after checking, field by field, that it
    continues this run: the model's config, each part of the data, each keyword of the recipe,
    fewer steps done than ``steps``, a batch order of these pairs, and Adam's settings of
    ``optimizer`` (the run's own, fresh). None when ``resume`` is None.

    Raises ValueError naming ``resume`` and the file (a recipe keyword by its own name, as the
    argument to change): ``"resume: 'run.pt' holds a model of another config: d_model=32
    (model: 64)"``, ``"batch_size: expected 64 as in the run being resumed ('run.pt'), got 32"``.
    """
    if resume is None:
        return None
    try:
        loaded, _, cfg, training = load_training_state(resume)
    except ValueError as error:
        raise ValueError(f"resume: {str(error).removeprefix('path: ')}") from None
    name = str(resume)
    if cfg != model.cfg:
        diff = [f"{f.name}={getattr(cfg, f.name)!r} (model: {getattr(model.cfg, f.name)!r})"
                for f in fields(cfg) if getattr(cfg, f.name) != getattr(model.cfg, f.name)]
        raise ValueError(f"resume: {name!r} holds a model of another config: {', '.join(diff)}")
    saved = training["data"]
    if isinstance(saved, str):  # one sha256 of everything, as older checkpoints have it
        differ = [] if saved == _old_fingerprint(encoded, *vocabs) else \
            ["training pairs and vocabularies"]
    else:
        now = data_fingerprint(encoded, *vocabs)
        differ = [DATA_PARTS[key] for key in DATA_PARTS if saved[key] != now[key]]
    if differ:
        raise ValueError(f"resume: {name!r} was trained on other data: its "
                         f"{' and '.join(differ)} differ from these (the same pairs, min count, "
                         f"test split and seed?)")
    for key, value in recipe.items():
        if training["recipe"][key] != value:
            raise ValueError(f"{key}: expected {training['recipe'][key]!r} as in the run "
                             f"being resumed ({name!r}), got {value!r}")
    if training["step"] >= steps:
        raise ValueError(f"steps: expected more than the {training['step']} steps {name!r} "
                         f"has already done, got {steps}")
    order = training["order"]
    if len(order) >= len(encoded) or any(i >= len(encoded) for i in order):
        raise ValueError(f"resume: {name!r} has a malformed training state: field 'order': "
                         f"expected fewer than {len(encoded)} distinct indices below "
                         f"{len(encoded)}")
    fresh = optimizer.param_groups[0]
    for group in training["optimizer"]["param_groups"]:  # the model's, then the read-out's
        for key, value in fresh.items():
            if key not in ("params", "lr", "fused", "foreach") and (
                    key not in group or _plain(group[key]) != _plain(value)):
                raise ValueError(f"resume: {name!r} has a malformed training state: field "
                                 f"'optimizer': {key!r} is {group.get(key)!r}, Adam here has "
                                 f"{value!r}")
        if sorted(group) != sorted(fresh) or not isinstance(group["lr"], float) \
                or not math.isfinite(group["lr"]) or group["lr"] < 0:
            raise ValueError(f"resume: {name!r} has a malformed training state: field "
                             f"'optimizer': expected Adam's settings {sorted(fresh)} with a "
                             f"finite lr")
    return {**training, "state_dict": loaded.state_dict()}


def _plain(value: object) -> object:
    """Tuples as lists, for comparing settings that went through a file."""
    return list(value) if isinstance(value, tuple) else value


def restore(resumed: dict, model: Transformer, optimizer: torch.optim.Optimizer,
            generator: torch.Generator, history, device: torch.device,
            readout: torch.nn.Module | None = None) -> tuple[int, list[int]]:
    """Put a checked state (:func:`resume_state`) back: the weights (and the "it" objective's
    ``readout``'s, when the run has one: its recipe, checked, is the checkpoint's), Adam's
    state, the generator, the global RNGs and the history. Returns (the first step to run, the
    batch order left in the epoch)."""
    model.load_state_dict(resumed["state_dict"])
    if readout is not None:
        readout.load_state_dict(resumed[REFERENT_KEY])
    optimizer.load_state_dict(resumed["optimizer"])
    generator.set_state(resumed["generator"])
    _set_rng_state(resumed["rng"], device)
    for key in HISTORY_KEYS:
        getattr(history, key).extend(resumed["history"][key])
    return resumed["step"] + 1, list(resumed["order"])


def _set_rng_state(state: dict, device: torch.device) -> None:
    """Restore what :func:`_rng_state` saved (a CUDA state only on a CUDA device)."""
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and state["cuda"] is not None:
        try:
            torch.cuda.set_rng_state(state["cuda"], device)
        except RuntimeError:
            raise ValueError("resume: a CUDA generator state torch refuses (field 'rng')") from None
    version, keys, gauss = state["python"]
    random.setstate((version, tuple(keys), gauss))
    name, mt, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, mt.numpy().astype(np.uint32), pos, has_gauss, cached))


def _check_training(training: dict, model: Transformer) -> None:
    """ValueError "field 'NAME': what is wrong" unless every field can be used as it is."""
    def bad(field: str, what: str) -> ValueError:
        return ValueError(f"field {field!r}: {what}")

    step = training["step"]
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise bad("step", f"expected an integer >= 1, got {step!r:.40}")
    recipe = training["recipe"]
    if not isinstance(recipe, dict):
        raise bad("recipe", "expected a dict of training keywords")
    missing = [key for key in RECIPE_KEYS if key not in recipe]
    if missing or len(recipe) != len(RECIPE_KEYS):
        raise bad("recipe", f"has no {missing[0]!r}" if missing else
                  f"expected the keywords {RECIPE_KEYS}, got {sorted(map(str, recipe))}")
    try:
        check_recipe(recipe)
    except ValueError as error:  # a value il.train itself would refuse
        raise bad("recipe", str(error)) from None
    if not _is_sha256(training["data"]) and not (
            isinstance(training["data"], dict) and sorted(training["data"]) == sorted(DATA_PARTS)
            and all(_is_sha256(v) for v in training["data"].values())):
        raise bad("data", f"expected the sha256 in hex of {', '.join(DATA_PARTS.values())}")
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
    groups = [[p.shape for p in model.parameters()]]
    if recipe["referent_weight"] > 0:
        groups.append(_check_readout(training.get(REFERENT_KEY), recipe["referent_weight"],
                                     model.cfg))
    elif REFERENT_KEY in training:
        raise bad(REFERENT_KEY, "expected no read-out, as the recipe's referent_weight is 0.0, "
                                "got one")
    _check_optimizer(training["optimizer"], groups)


def _check_readout(state: Any, weight: float, cfg: TransformerConfig) -> list[torch.Size]:
    """The shapes of the read-out's parameters (weight, bias: ``ReferentReadout``'s state_dict,
    :mod:`illustrated.training.referent`) if ``state`` holds them, finite; else ValueError."""
    shapes = {"linear.weight": torch.Size((cfg.src_vocab_size, cfg.d_model)),
              "linear.bias": torch.Size((cfg.src_vocab_size,))}
    if state is None:
        raise ValueError(f"field {REFERENT_KEY!r}: expected the read-out's weights, as the "
                         f"recipe's referent_weight is {weight}, got none")
    if not isinstance(state, dict) or sorted(state) != sorted(shapes) or not all(
            isinstance(v, torch.Tensor) and v.is_floating_point() and v.shape == shapes[k]
            and bool(v.isfinite().all()) for k, v in state.items()):
        raise ValueError(f"field {REFERENT_KEY!r}: expected the read-out's finite weight "
                         f"{tuple(shapes['linear.weight'])} and bias "
                         f"{tuple(shapes['linear.bias'])}")
    return list(shapes.values())


def _check_generator(field: str, state: Any) -> None:
    """ValueError unless ``state`` is a state torch's CPU generator takes."""
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.dim() != 1:
        raise ValueError(f"field {field!r}: expected a generator state (a uint8 tensor)")
    try:
        torch.Generator().set_state(state)
    except RuntimeError as error:
        raise ValueError(f"field {field!r}: a generator state torch refuses "
                         f"({str(error).splitlines()[0][:120]})") from None


def _check_optimizer(state: Any, groups: list[list[torch.Size]]) -> None:
    """ValueError unless ``state`` is an Adam state_dict of parameters of these shapes, in these
    groups (the model's; the read-out's when it is on), numbered in order."""
    params = [shape for group in groups for shape in group]
    starts = [sum(map(len, groups[:g])) for g in range(len(groups))]
    problem = None
    if not isinstance(state, dict) or sorted(state) != ["param_groups", "state"] \
            or not isinstance(state["param_groups"], list) \
            or len(state["param_groups"]) != len(groups) \
            or not all(isinstance(group, dict) and group.get("params") == list(
                range(start, start + len(shapes)))
                for group, start, shapes in zip(state["param_groups"], starts, groups)) \
            or not isinstance(state["state"], dict):
        problem = f"expected Adam's state of the model's {len(groups[0])} parameters" + (
            f" and, as a second group, the read-out's {len(groups[1])}" if len(groups) > 1
            else "")
    else:
        for index, entry in state["state"].items():
            if not isinstance(index, int) or not 0 <= index < len(params) \
                    or not isinstance(entry, dict) \
                    or sorted(entry) != ["exp_avg", "exp_avg_sq", "step"]:
                problem = f"expected Adam's moments and step for parameter indices, got {index!r}"
                break
            for key in ("exp_avg", "exp_avg_sq"):
                value = entry[key]
                if not isinstance(value, torch.Tensor) or value.shape != params[index] \
                        or not value.is_floating_point() or not bool(value.isfinite().all()):
                    problem = (f"{key!r} of parameter {index} is not a finite tensor of "
                               f"shape {tuple(params[index])}")
                    break
                if key == "exp_avg_sq" and bool((value < 0).any()):  # a mean of squares
                    problem = (f"'exp_avg_sq' of parameter {index} holds a negative number "
                               f"(Adam's second moment, a mean of squares, is never negative)")
                    break
            step = entry["step"]
            if problem is None and (not isinstance(step, torch.Tensor) or step.numel() != 1
                                    or not math.isfinite(float(step)) or float(step) < 0):
                problem = f"'step' of parameter {index} is not a count"
            if problem:
                break
    if problem:
        raise ValueError(f"field 'optimizer': {problem}")
