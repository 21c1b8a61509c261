"""Safetensors, the file a model trained in the book's page downloads as (site/js/safetensors.js).

8 bytes little-endian header length, a JSON header, raw little-endian tensors: every weight of
the model's ``state_dict`` by its name, float32, and in the header's ``__metadata__`` (strings
only, as the format wants) ``format`` = :data:`FORMAT`, ``config`` (the TransformerConfig's
fields, JSON), ``src_vocab`` and ``tgt_vocab`` (token lists, JSON), and from this package's
writer ``digests`` (each tensor's :func:`tensor_digest`, JSON; the page's writer adds them too).
``il.load_checkpoint`` reads it (:func:`read_checkpoint_dict`, then every check it makes of a
checkpoint). The reader is bounded and ours rather than the ``safetensors`` package: Colab has
that one only through transformers, a fresh ``pip install`` would not, and a damaged file must
give one line naming it, which the package's checks give anyway; see
:mod:`illustrated.commands.web_export` for the writer.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
from dataclasses import asdict

import numpy as np
import torch

from .bounded import MAX_JSON_DEPTH, json_depth, size_text

__all__ = ["FORMAT", "MAX_HEADER", "MAX_CONFIG_BYTES", "MAX_METADATA_BYTES", "VOCAB_BYTES_PER_TOKEN",
           "to_bytes", "looks_like", "is_safetensors", "tensor_digest", "read_checkpoint_dict"]

#: ``__metadata__["format"]`` of a page model; another value is refused.
FORMAT = "illustrated-safetensors/1"
#: Longest header, in bytes: 16 MiB of JSON, far above any model of the book.
MAX_HEADER = 1 << 24
#: Longest ``config`` metadata string, in bytes of the header (a config is about 400).
MAX_CONFIG_BYTES = 1 << 16
#: Longest other metadata string (``format``, ``digests``, any other), in bytes of the header.
MAX_METADATA_BYTES = 1 << 20
#: A vocabulary's metadata string holds at most this many bytes of the header per token of the
#: vocabulary size its config gives (the book's tokens are words of a few letters).
VOCAB_BYTES_PER_TOKEN = 1024


def to_bytes(model, vocabs) -> bytes:
    """The model (its state_dict, float32), config and vocabularies as safetensors bytes."""
    src_vocab, tgt_vocab = vocabs
    meta = {"format": FORMAT, "config": json.dumps(asdict(model.cfg)),
            "src_vocab": json.dumps(list(src_vocab.tokens), ensure_ascii=False),
            "tgt_vocab": json.dumps(list(tgt_vocab.tokens), ensure_ascii=False)}
    header, blobs, offset, digests = {"__metadata__": meta}, [], 0, {}
    for name, value in model.state_dict().items():
        value = value.detach().cpu().to(torch.float32).contiguous()
        blob = value.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        digests[name] = tensor_digest(name, value)
        blobs.append(blob)
        offset += len(blob)
    meta["digests"] = json.dumps(digests)
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes with spaces
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def looks_like(file, path) -> bool:
    """Whether the open binary ``file`` (at any position; left at its start) is read as
    safetensors. First by its whole header, whatever its first byte: a header length from 2 to
    :data:`MAX_HEADER` within the file, a header that opens with ``{`` and, less trailing
    spaces, closes with ``}``. Failing that, a file that starts as a torch file does (a zip,
    ``PK``, or a pickle, ``\\x80``) is not; any other is if it is named ``*.safetensors`` or
    its ninth byte is ``{`` (so that a damaged page model gets the page model's refusals)."""
    size = os.fstat(file.fileno()).st_size
    file.seek(0)
    head = file.read(9)
    try:
        if len(head) == 9:
            length = struct.unpack("<Q", head[:8])[0]
            if 2 <= length <= MAX_HEADER and 8 + length <= size and head[8:9] == b"{":
                return _last_non_space(file, 9, 8 + length) == b"}"
    finally:
        file.seek(0)
    if head[:2] == b"PK" or head[:1] == b"\x80":
        return False
    return str(path).endswith(".safetensors") or head[8:9] == b"{"


def _last_non_space(file, start: int, end: int) -> bytes:
    """The last byte of ``file[start:end]`` that is not a space (b"" if none), read backwards
    in blocks (a header may be padded with any number of spaces)."""
    while end > start:
        block = min(end - start, 1 << 16)
        file.seek(end - block)
        text = file.read(block).rstrip(b" ")
        if text:
            return text[-1:]
        end -= block
    return b""


def is_safetensors(path) -> bool:
    """:func:`looks_like` of the file ``path`` (False if it cannot be read)."""
    try:
        with open(path, "rb") as file:
            return looks_like(file, path)
    except OSError:  # the torch reader says why, in its words
        return False


def tensor_digest(name: str, value: torch.Tensor) -> str:
    """Hex sha256 of one tensor as a checkpoint holds it: its name, dtype, shape and bytes
    (C order, little-endian), each part length-prefixed."""
    value = value.detach().cpu().contiguous()
    digest = hashlib.sha256()
    array = value.numpy()
    for part in (name.encode("utf-8", "surrogatepass"),
                 str(value.dtype).removeprefix("torch.").encode(),
                 json.dumps(list(value.shape)).encode(),
                 array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()):
        digest.update(struct.pack("<Q", len(part)) + part)
    return digest.hexdigest()


def _json(raw: bytes | str, what: str, bad) -> object:
    """``raw`` parsed as JSON, bounded: UTF-8, nested at most MAX_JSON_DEPTH deep, finite
    numbers only; ``bad(reason)`` (a ValueError naming the file) otherwise."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
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


# A JSON string (an unterminated one runs to the end) or a bracket, in bytes; then a colon.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)|[\[\]{}]', re.S)
_COLON = re.compile(rb"[ \t\n\r]*:")


def _scan(raw: bytes, bad) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """The header less its ``__metadata__`` object's content (``{}`` in its place), and where
    each of that object's string values lies in ``raw``, by key: found by one pass over the
    bytes, which copies none of them (a 10 MB vocabulary is measured before it is parsed).
    ``bad`` for a header nested more than MAX_JSON_DEPTH deep or with two ``__metadata__``."""
    depth, meta, spans, key, after_meta = 0, None, {}, None, False
    for match in _TOKEN.finditer(raw):
        start, end = match.span()
        char = raw[start:start + 1]
        if char in (b"[", b"{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise bad(f"header nested more than {MAX_JSON_DEPTH} levels deep")
            if after_meta and depth == 2 and char == b"{":
                if meta is not None:
                    raise bad("damaged header: __metadata__ given twice")
                meta = [start, None]
            after_meta = False
            continue
        if char in (b"]", b"}"):
            if depth == 2 and meta is not None and meta[1] is None:
                meta[1] = end
            depth -= 1
            continue
        is_key, after_meta = _COLON.match(raw, end) is not None, False
        if depth == 1 and is_key and raw[start:end] == b'"__metadata__"':
            after_meta = True
        elif depth == 2 and meta is not None and meta[1] is None:
            if is_key:
                key = raw[start:end] if end - start <= 256 else None
            elif key is not None:
                spans[key], key = (start, end), None
    if meta is None or meta[1] is None:
        return raw, {}
    names = {}
    for literal, span in spans.items():
        try:
            names[json.loads(literal)] = span
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise bad("damaged header: a __metadata__ key that is not a JSON string") from None
    return raw[:meta[0]] + b"{}" + raw[meta[1]:], names


def _metadata(raw: bytes, spans: dict, key: str, limit: int, bad, why: str = "") -> str:
    """The metadata string ``key``, once its size in the header is found within ``limit``
    bytes; ``bad`` if it is missing, bigger (``why`` says where the limit comes from) or no
    JSON string."""
    if key not in spans:
        raise bad(f"damaged header: __metadata__ has no {key} string")
    start, end = spans[key]
    if end - start > limit:
        raise bad(f"{key} metadata is {size_text(end - start)}, more than the "
                  f"{size_text(limit)} {why or 'such metadata may have'}")
    try:
        return json.loads(raw[start:end])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise bad(f"damaged header: {key} metadata is not a JSON string (or not UTF-8)"
                  ) from None


def _vocab_limit(config: object, side: str) -> tuple[int, str]:
    """The most bytes the header may give the ``side`` vocabulary: VOCAB_BYTES_PER_TOKEN per
    token of the size the config gives it (MAX_HEADER without one), and why."""
    size = config.get(f"{side}_vocab_size") if isinstance(config, dict) else None
    if not _whole(size):
        return MAX_HEADER, "a header may have"
    return (VOCAB_BYTES_PER_TOKEN * size + 1024,
            f"its config's {side}_vocab_size={size} allows ({VOCAB_BYTES_PER_TOKEN} bytes a token)")


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
    """The file as the dict of a checkpoint, less its format: {config, src_vocab, tgt_vocab,
    state_dict} (and digests).

    ``shapes``, if given, is called with the config (a dict) and returns every weight's shape
    by its name, ``{name: tuple}`` (raising ValueError for an invalid config): the tensors are
    checked against it before any of their bytes is read, so that memory is bounded by the
    model the config describes, not by the file. Each tensor is then read at its offset.

    The metadata strings are measured in the header before any is parsed: ``config`` within
    :data:`MAX_CONFIG_BYTES`, each vocabulary within :data:`VOCAB_BYTES_PER_TOKEN` per token of
    the size the config gives it (parsed only once the tensors agree with the config and the
    file), any other within :data:`MAX_METADATA_BYTES`. ``digests`` (``{name: sha256}``, see
    :func:`tensor_digest`), if present, comes back under "digests".

    Raises ValueError "path: '<file>' is not a page model (...)" naming what is wrong: a file
    too short, a header length out of range (over 16 MiB or past the end of the file), a header
    or metadata string that is not UTF-8 JSON, over its size, nested too deep or holding NaN
    or Infinity,
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
        if not 2 <= length <= MAX_HEADER:
            raise bad(f"header length {length} bytes, expected 2 to {MAX_HEADER} (16 MiB)")
        if length > size - 8:
            raise bad(f"truncated header: its length says {length} bytes, the file has "
                      f"{size - 8} after it")
        raw = file.read(length)
        reduced, spans = _scan(raw, bad)
        header = _json(reduced, "header", bad)
        del reduced
        if not isinstance(header, dict) or not isinstance(header.get("__metadata__"), dict):
            raise bad("damaged header: expected an object with __metadata__")
        header.pop("__metadata__")
        found = _metadata(raw, spans, "format", MAX_METADATA_BYTES, bad) \
            if "format" in spans else None
        if found != FORMAT:
            raise bad(f"format {found!r:.60}, expected {FORMAT!r}")
        result = {"state_dict": {}}
        for key in ("config", "src_vocab", "tgt_vocab"):
            if key not in spans:
                raise bad(f"damaged header: __metadata__ has no {key} string")
        result["config"] = _json(_metadata(raw, spans, "config", MAX_CONFIG_BYTES, bad),
                                 "config metadata", bad)
        strings = {}  # each metadata string within its size, before the model is sized
        for side in ("src", "tgt"):
            limit, why = _vocab_limit(result["config"], side)
            strings[f"{side}_vocab"] = _metadata(raw, spans, f"{side}_vocab", limit, bad, why)
        for key in sorted(set(spans) - {"format", "config", "src_vocab", "tgt_vocab"}):
            value = _metadata(raw, spans, key, MAX_METADATA_BYTES, bad)
            if key == "digests":
                strings[key] = value
        del raw, spans
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
        for key, value in strings.items():  # parsed once the tensors fit the config and file
            result[key] = _json(value, f"{key} metadata", bad)
        del strings
        for key, shape, start, end in rows:
            array = np.empty(shape, dtype="<f4")
            file.seek(base + start)
            if file.readinto(memoryview(array.reshape(-1)).cast("B")) != end - start:
                raise bad(f"truncated while read: tensor {key!r}")
            result["state_dict"][key] = torch.from_numpy(array.astype(np.float32, copy=False))
    return result
