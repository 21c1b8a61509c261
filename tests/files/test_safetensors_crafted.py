"""Every crafted .safetensors file is refused in one line that names what is wrong with it (issue
35, item 4), through ``il.load_checkpoint`` and ``python -m illustrated translate --model``; the
reader's memory is bounded by the model the config describes, not by the file."""
import json
import math
import struct
import tracemalloc

import pytest

import illustrated as il
from illustrated.files import safetensors as _safetensors
from illustrated.commands.cli import main


@pytest.fixture(scope="module")
def good():
    """The shipped post model as a page model: (its bytes, its header as a dict)."""
    model, src_vocab, tgt_vocab = il.pretrained("post")
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    size = struct.unpack("<Q", data[:8])[0]
    return data, json.loads(data[8:8 + size])


def body(data):
    return data[8 + struct.unpack("<Q", data[:8])[0]:]


def build(header, tensors, length=None):
    """A file from a header (dict, or raw bytes) and the tensors' bytes; ``length`` overrides
    the header length written in the first 8 bytes."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + tensors


def edited(change):
    """A case: the good file with its header changed in place by ``change(header)``."""
    def make(data, header):
        header = json.loads(json.dumps(header))
        change(header)
        return build(header, body(data))
    return make


def with_meta(key, value):
    return edited(lambda h: h["__metadata__"].__setitem__(key, value))


def tensor(field, value, name="encoder.layers.0.self_attn.w_v.weight"):
    return edited(lambda h: h[name].__setitem__(field, value))


def spliced(field, text, name="encoder.layers.0.self_attn.w_v.weight"):
    """The good file with ``name``'s ``field`` written as the raw JSON ``text`` (``1e400``)."""
    def make(data, header):
        header = json.loads(json.dumps(header))
        header[name][field] = "SPLICE"
        return build(json.dumps(header).replace('"SPLICE"', text).encode(), body(data))
    return make


def raw_header(text):
    """The good file with its header replaced by ``text`` (bytes), its tensors kept."""
    return lambda data, header: build(text, body(data))


def first_two(header):
    return [k for k in header if k != "__metadata__"][:2]


def overlap(header):
    """w_v's bytes are w_q's: the weights of one tensor read for another, without a word."""
    q = "encoder.layers.0.self_attn.w_q.weight"
    header["encoder.layers.0.self_attn.w_v.weight"]["data_offsets"] = header[q]["data_offsets"]


def gap(header):
    for key in [k for k in header if k != "__metadata__"][1:]:
        header[key]["data_offsets"] = [n + 4 for n in header[key]["data_offsets"]]


DEEP = 5000
CASES = {
    "header length 2**63 - 1": (lambda d, h: struct.pack("<Q", 2**63 - 1) + d[8:],
                                "header length 9223372036854775807 bytes, expected 2 to"),
    "header length -1": (lambda d, h: b"\xff" * 8 + d[8:], "header length 18446744073709551615"),
    "header length 2**63": (lambda d, h: struct.pack("<Q", 2**63) + d[8:],
                            "header length 9223372036854775808 bytes"),
    "header length 16 MiB": (lambda d, h: struct.pack("<Q", 1 << 24) + d[8:],
                             "truncated header: its length says 16777216 bytes"),
    "header length 16 MiB + 1": (lambda d, h: struct.pack("<Q", (1 << 24) + 1) + d[8:],
                                 "header length 16777217 bytes, expected 2 to 16777216"),
    "header length 0": (lambda d, h: struct.pack("<Q", 0) + d[8:], "header length 0 bytes"),
    "8 bytes": (lambda d, h: d[:8], "8 bytes, too short"),
    "9 bytes": (lambda d, h: d[:9], "9 bytes, too short"),
    "header past the end": (lambda d, h: d[:200], "truncated header"),
    "header 5,000 deep": (raw_header(b"[" * DEEP + b"]" * DEEP), "header nested more than 32"),
    "header 100,000 deep": (raw_header(b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
                            "header nested more than 32"),
    "config 5,000 deep": (with_meta("config", "[" * DEEP + "]" * DEEP),
                          "config metadata nested more than 32"),
    "source vocabulary 2,000 deep": (with_meta("src_vocab", "[" * 2_000),
                                     "src_vocab metadata nested more than 32"),
    "source vocabulary 100,000 deep": (with_meta("src_vocab", "[" * 100_000),
                                       "src_vocab metadata is 100.0 kB, more than the 9.2 kB "
                                       "its config's src_vocab_size=8 allows"),
    "a vocabulary of 10**6 tokens": (with_meta("src_vocab", json.dumps(
        [f"w{i}" for i in range(10**6)])), "src_vocab metadata is 12.9 MB, more than the 9.2 kB "
                                           "its config's src_vocab_size=8 allows"),
    "config over its size": (with_meta("config", " " * (1 << 16)),
                             "config metadata is 65.5 kB, more than the 65.5 kB such"),
    "other metadata over its size": (with_meta("notes", "x" * (1 << 20)),
                                     "notes metadata is 1.0 MB, more than the 1.0 MB such"),
    "target vocabulary 5,000 deep": (with_meta("tgt_vocab", "[" * DEEP + "]" * DEEP),
                                     "tgt_vocab metadata nested more than 32"),
    "header not UTF-8": (raw_header(b'{"\xff": 1}'), "damaged header: not UTF-8"),
    "header not JSON": (raw_header(b"{not json}"), "damaged header: Expecting"),
    "header a list": (raw_header(b"[1, 2]"), "expected an object with __metadata__"),
    "config not a string": (with_meta("config", 7), "__metadata__ has no config string"),
    "another format": (with_meta("format", "safetensors/9"), "format 'safetensors/9'"),
    "config with unknown field": (with_meta("config", '{"size": 3}'),
                                  "has an invalid config (unknown field 'size')"),
    "config beyond MAX_WEIGHTS": (
        edited(lambda h: h["__metadata__"].__setitem__("config", json.dumps(
            {**json.loads(h["__metadata__"]["config"]), "d_ff": 1 << 24}))),
        "has sizes out of range"),
    "overlapping offsets": (edited(overlap), "overlap (data_offsets)"),
    "a gap between tensors": (edited(gap), "a gap of 4 bytes before tensor"),
    "Infinity in an offset": (raw_header(b'{"__metadata__": {}, "x": {"data_offsets": '
                                         b'[0, Infinity]}}'), "header holds Infinity"),
    "NaN in a shape": (raw_header(b'{"x": {"shape": [NaN]}}'), "header holds NaN"),
    "1e400 in a shape": (spliced("shape", "[1e400, 32]"),
                         "expected a shape of at most 8 whole numbers"),
    "1e400 in an offset": (spliced("data_offsets", "[0, 1e400]"),
                           "expected data_offsets [start, end], whole numbers"),
    "a float shape": (tensor("shape", [32.0, 32]), "expected a shape of at most 8 whole numbers"),
    "a shape overflowing int64": (tensor("shape", [2**32, 2**32]),
                                  "expected a shape of at most 8 whole numbers"),
    "a shape whose product overflows to 0": (tensor("shape", [2**62, 4]),
                                             "expected a shape of at most 8 whole numbers"),
    "negative offsets": (tensor("data_offsets", [-4096, 0]), "expected data_offsets [start, end]"),
    "offsets backwards": (tensor("data_offsets", [8192, 4096]),
                          "expected data_offsets [start, end]"),
    "a shape the config does not need": (tensor("shape", [16, 64]),
                                         "has shape (16, 64), its config needs (32, 32)"),
    "bytes that disagree with the shape": (tensor("data_offsets", [0, 8]),
                                           "hold 8 bytes, its shape (32, 32) needs 4096"),
    "F16": (tensor("dtype", "F16"), "expected dtype F32, got 'F16'"),
    "a missing tensor": (edited(lambda h: h.pop("generator.proj.bias")),
                         "no tensor 'generator.proj.bias', which its config needs"),
    "an extra tensor": (edited(lambda h: h.__setitem__("extra", {
        "dtype": "F32", "shape": [], "data_offsets": [0, 4]})),
        "tensor 'extra' is no weight of the model its config describes"),
    "truncated tensors": (lambda d, h: d[:-4], "truncated: its tensors need"),
    "bytes after the last tensor": (lambda d, h: d + b"\0" * 64,
                                    "64 bytes after the last tensor"),
}


@pytest.fixture(params=sorted(CASES))
def crafted(request, good, tmp_path):
    make, message = CASES[request.param]
    path = tmp_path / "model.safetensors"
    path.write_bytes(make(*good))
    return path, message


def test_each_crafted_file_is_one_line_naming_the_problem(crafted):
    path, message = crafted
    with pytest.raises(ValueError) as info:
        il.load_checkpoint(path)
    text = str(info.value)
    assert text.startswith(f"path: '{path}' ") and "\n" not in text
    assert message in text, text
    assert "torch" not in text and "install" not in text  # never blamed on the torch reader


def test_each_crafted_file_is_one_line_on_the_command_line(crafted, capsys):
    path, message = crafted
    assert main(["translate", "--model", str(path), "je suis étudiant"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: path: '{path}' ") and err.count("\n") == 1 and message in err


def test_a_file_named_otherwise_that_starts_like_safetensors_is_read_as_one(good, tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(struct.pack("<Q", 2**63 - 1) + good[0][8:])
    with pytest.raises(ValueError, match="is not a page model .header length 9223372036854775807"):
        il.load_checkpoint(path)


@pytest.mark.parametrize("size", [1 << 30, 3_900_000_000])  # under MAX_CHECKPOINT_BYTES
def test_a_huge_sparse_file_is_refused_in_bounded_memory(good, tmp_path, size):
    """The config describes a 50 kB model: the file's 1 GB or 3.9 GB are never read."""
    path = tmp_path / "big.safetensors"
    with open(path, "wb") as file:
        file.write(good[0])
        file.truncate(size)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=rf"{size - len(good[0])} bytes after the last tensor"):
            il.load_checkpoint(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak


def test_a_good_file_still_loads_with_every_weight(good, tmp_path):
    path = tmp_path / "post.safetensors"
    path.write_bytes(good[0])
    model = il.load_checkpoint(path)[0]
    for name, value in il.pretrained("post")[0].state_dict().items():
        assert model.state_dict()[name].equal(value), name
    assert math.prod(model.state_dict()["generator.proj.weight"].shape) > 0
