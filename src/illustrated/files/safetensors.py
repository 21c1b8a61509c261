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
import struct
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

__all__ = ["FORMAT", "to_bytes", "is_safetensors", "read_checkpoint_dict"]

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


def is_safetensors(path) -> bool:
    """Whether the file starts as safetensors does: a header length, then ``{``."""
    try:
        with open(path, "rb") as file:
            head = file.read(9)
    except OSError:  # the torch reader says why, in its words
        return False
    return len(head) == 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] < _MAX_HEADER


def read_checkpoint_dict(path) -> dict:
    """The file as the dict of a checkpoint, less its format: {config, src_vocab, tgt_vocab, state_dict}.

    Raises ValueError "path: '<file>' ..." for a truncated file, a bad header, another format,
    a tensor that is not F32 or lies outside the file; the config and weights are checked
    afterwards by ``load_checkpoint`` as for any checkpoint.
    """
    name = str(path)
    data = Path(path).read_bytes()

    def bad(what: str) -> ValueError:
        return ValueError(f"path: {name!r} is not a page model ({what})")
    size = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else 0
    if not 0 < size <= min(_MAX_HEADER, len(data) - 8):
        raise bad("truncated header")
    try:
        header = json.loads(data[8:8 + size].decode("utf-8"))
        meta = header.pop("__metadata__")
        if meta.get("format") != FORMAT:
            raise bad(f"format {meta.get('format')!r}, expected {FORMAT!r}")
        result = {"config": json.loads(meta["config"]),
                  "src_vocab": json.loads(meta["src_vocab"]),
                  "tgt_vocab": json.loads(meta["tgt_vocab"]), "state_dict": {}}
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, AttributeError, TypeError):
        raise bad("damaged header") from None
    body = memoryview(data)[8 + size:]
    for key, entry in header.items():
        try:
            start, end = (int(x) for x in entry["data_offsets"])
            shape = [int(n) for n in entry["shape"]]
            ok = entry["dtype"] == "F32" and 0 <= start <= end <= len(body) \
                and end - start == 4 * int(np.prod(shape)) and min(shape, default=1) >= 0
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise bad(f"tensor {key!r}: expected F32 data inside the file")
        array = np.frombuffer(body[start:end], dtype="<f4").reshape(shape)
        result["state_dict"][key] = torch.from_numpy(array.astype(np.float32))
    return result
