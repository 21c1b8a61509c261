"""Safetensors, the file a model trained in the book's page downloads as (site/js/safetensors.js).

8 bytes little-endian header length, a JSON header, raw little-endian tensors: every weight of
the model's ``state_dict`` by its name, float32, and in the header's ``__metadata__`` (strings
only, as the format wants) ``format`` = :data:`FORMAT`, ``config`` (the TransformerConfig's
fields, JSON), ``src_vocab`` and ``tgt_vocab`` (token lists, JSON). ``il.load_checkpoint`` reads
it (:func:`read_checkpoint_dict`, then every check it makes of a checkpoint). The reader is
bounded and ours rather than the ``safetensors`` package: Colab has that one only through
transformers, a fresh ``pip install`` would not, and a damaged file must give one line naming it,
which the package's checks give anyway; see :mod:`illustrated.commands.web_export` for the writer.
"""
from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import asdict

import numpy as np
import torch

from .bounded import MAX_JSON_DEPTH, json_depth

__all__ = ["FORMAT", "to_bytes", "looks_like", "is_safetensors", "read_checkpoint_dict"]

#: ``__metadata__["format"]`` of a page model; another value is refused.
FORMAT = "illustrated-safetensors/1"
_MAX_HEADER = 1 << 24  # 16 MiB of JSON: far above any model of the book


def to_bytes(model, vocabs) -> bytes:
    """The model (its state_dict, float32), config and vocabularies as safetensors bytes."""
    src_vocab, tgt_vocab = vocabs
    meta = {"format": FORMAT, "config": json.dumps(asdict(model.cfg)),
            "src_vocab": json.dumps(list(src_vocab.tokens), ensure_ascii=False),
            "tgt_vocab": json.dumps(list(tgt_vocab.tokens), ensure_ascii=False)}
    header, blobs, offset = {"__metadata__": meta}, [], 0
    for name, value in model.state_dict().items():
        blob = value.detach().cpu().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes with spaces
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def looks_like(head: bytes, path) -> bool:
    """Whether a file is read as safetensors: named ``*.safetensors`` or starting as one does
    (8 bytes of header length, then ``{``), and not starting as a torch file does (a zip,
    ``PK``, or a pickle, ``\\x80``). ``head`` is the file's first 9 bytes (fewer if it is shorter)."""
    if head[:2] == b"PK" or head[:1] == b"\x80":
        return False
    return str(path).endswith(".safetensors") or head[8:9] == b"{"


def is_safetensors(path) -> bool:
    """:func:`looks_like` of the file ``path`` (False if it cannot be read)."""
    try:
        with open(path, "rb") as file:
            return looks_like(file.read(9), path)
    except OSError:  # the torch reader says why, in its words
        return False


def _json(raw: bytes, what: str, bad) -> object:
    """``raw`` parsed as JSON, bounded: UTF-8, nested at most MAX_JSON_DEPTH deep, finite
    numbers only; ``bad(reason)`` (a ValueError naming the file) otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad(f"damaged {what}: not UTF-8") from None
    if json_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise bad(f"{what} nested more than {MAX_JSON_DEPTH} levels deep")

    def constant(word: str):
        raise bad(f"{what} holds {word}, expected finite numbers")
    try:
        return json.loads(text, parse_constant=constant)
    except (json.JSONDecodeError, RecursionError) as error:
        raise bad(f"damaged {what}: {str(error).splitlines()[0] or type(error).__name__}"
                  ) from None


def _whole(value, low: int = 0) -> bool:
    """Whether ``value`` is a JSON whole number (not a bool or a float) of at least ``low``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _entries(header: dict, shapes: dict | None, bad) -> list[tuple[str, list[int], int, int]]:
    """(name, shape, start, end) of every tensor, checked: F32, whole shapes and offsets, the
    size the shape needs, the names and shapes ``shapes`` (from the config) wants; sorted by
    offset, which must tile the data from 0 without an overlap or a gap."""
    rows = []
    for key, entry in header.items():
        if not isinstance(entry, dict) or entry.get("dtype") != "F32":
            raise bad(f"tensor {key!r}: expected dtype F32, got "
                      f"{entry.get('dtype') if isinstance(entry, dict) else entry!r:.40}")
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if not isinstance(shape, list) or len(shape) > 8 \
                or not all(_whole(n) and n < 1 << 31 for n in shape):
            raise bad(f"tensor {key!r}: expected a shape of at most 8 whole numbers from 0 to "
                      f"2**31 - 1, got {shape!r:.60}")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(map(_whole, offsets)) \
                or offsets[0] > offsets[1]:
            raise bad(f"tensor {key!r}: expected data_offsets [start, end], whole numbers with "
                      f"start <= end, got {offsets!r:.60}")
        if shapes is not None:
            if key not in shapes:
                raise bad(f"tensor {key!r} is no weight of the model its config describes")
            if tuple(shape) != shapes[key]:
                raise bad(f"tensor {key!r} has shape {tuple(shape)}, its config needs "
                          f"{shapes[key]}")
        need = 4 * math.prod(shape)
        if offsets[1] - offsets[0] != need:
            raise bad(f"tensor {key!r}: data_offsets {offsets} hold {offsets[1] - offsets[0]} "
                      f"bytes, its shape {tuple(shape)} needs {need}")
        rows.append((key, shape, *offsets))
    missing = [key for key in (shapes or ()) if key not in header]
    if missing:
        raise bad(f"no tensor {missing[0]!r}, which its config needs ({len(missing)} missing)")
    rows.sort(key=lambda row: (row[2], row[3]))
    end, last = 0, None
    for key, _, start, stop in rows:
        if start < end:
            raise bad(f"tensors {last!r} and {key!r} overlap (data_offsets)")
        if start > end:
            raise bad(f"a gap of {start - end} bytes before tensor {key!r} (data_offsets)")
        end, last = stop, key
    return rows


def read_checkpoint_dict(path, shapes=None) -> dict:
    """The file as the dict of a checkpoint, less its format: {config, src_vocab, tgt_vocab, state_dict}.

    ``shapes``, if given, is called with the config (a dict) and returns every weight's shape
    by its name, ``{name: tuple}`` (raising ValueError for an invalid config): the tensors are
    checked against it before any of their bytes is read, so that memory is bounded by the
    model the config describes, not by the file. Each tensor is then read at its offset.

    Raises ValueError "path: '<file>' is not a page model (...)" naming what is wrong: a file
    too short, a header length out of range (over 16 MiB or past the end of the file), a header
    or metadata string that is not UTF-8 JSON, nested too deep or holding NaN or Infinity,
    another format, a tensor not F32, a shape or offsets that are not whole numbers, sizes that
    disagree with the shape or the config, offsets that overlap, leave a gap or end before or
    after the file does. The config, vocabularies and weights' values are checked afterwards by
    ``load_checkpoint`` as for any checkpoint.
    """
    name = str(path)

    def bad(what: str) -> ValueError:
        return ValueError(f"path: {name!r} is not a page model ({what})")
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(8)
        if len(head) < 8 or size < 10:
            raise bad(f"{size} bytes, too short: a safetensors file is 8 bytes of header "
                      f"length, a JSON header, then the tensors")
        length = struct.unpack("<Q", head)[0]
        if not 2 <= length <= _MAX_HEADER:
            raise bad(f"header length {length} bytes, expected 2 to {_MAX_HEADER} (16 MiB)")
        if length > size - 8:
            raise bad(f"truncated header: its length says {length} bytes, the file has "
                      f"{size - 8} after it")
        header = _json(file.read(length), "header", bad)
        if not isinstance(header, dict) or not isinstance(header.get("__metadata__"), dict):
            raise bad("damaged header: expected an object with __metadata__")
        meta = header.pop("__metadata__")
        if meta.get("format") != FORMAT:
            raise bad(f"format {meta.get('format')!r:.60}, expected {FORMAT!r}")
        result = {"state_dict": {}}
        for key in ("config", "src_vocab", "tgt_vocab"):
            if not isinstance(meta.get(key), str):
                raise bad(f"damaged header: __metadata__ has no {key} string")
            result[key] = _json(meta[key].encode("utf-8", "surrogatepass"), f"{key} metadata",
                                bad)
        expected = None
        if shapes is not None:
            try:
                expected = shapes(result["config"])
            except ValueError as error:
                raise ValueError(f"path: {name!r} {error}") from None
        rows = _entries(header, expected, bad)
        base, data = 8 + length, (rows[-1][3] if rows else 0)
        if base + data != size:
            raise bad(f"truncated: its tensors need {data} bytes after the header, the file has "
                      f"{size - base}" if base + data > size else
                      f"{size - base - data} bytes after the last tensor")
        for key, shape, start, end in rows:
            array = np.empty(shape, dtype="<f4")
            file.seek(base + start)
            if file.readinto(memoryview(array.reshape(-1)).cast("B")) != end - start:
                raise bad(f"truncated while read: tensor {key!r}")
            result["state_dict"][key] = torch.from_numpy(array.astype(np.float32, copy=False))
    return result
