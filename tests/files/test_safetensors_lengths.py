"""Every valid page model loads, whatever its header's length: the header length's low byte is
the file's first byte, so 1 length in 256 starts with 0x80 (a pickle's first byte) and 1 in
65,536 with "PK" (a zip's); the format is decided by the whole header, not by that byte. Checked
for every length mod 256 (spaces after the JSON, as the format allows), for the package's
writer and the page's (site/js/safetensors.js, run with Node), through il.load_checkpoint and
`python -m illustrated translate --model`."""
import json
import shutil
import struct
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

import illustrated as il
from illustrated.commands.cli import main
from illustrated.data import Vocab
from illustrated.files import safetensors as _safetensors

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def post():
    return il.pretrained("post")


def padded(data: bytes, residue: int, modulus: int = 256) -> bytes:
    """``data`` (a safetensors file) with spaces after its header's JSON so that the header
    length is ``residue`` mod ``modulus``."""
    length = struct.unpack("<Q", data[:8])[0]
    text = data[8:8 + length].rstrip(b" ")
    text += b" " * ((residue - len(text)) % modulus)
    return struct.pack("<Q", len(text)) + text + data[8 + length:]


def renamed(vocab: Vocab, extra: int) -> Vocab:
    """``vocab`` with its last word made ``extra`` letters longer (same size, same ids)."""
    return Vocab([*vocab.tokens[:-1], vocab.tokens[-1] + "x" * extra])


def assert_same_weights(model, reference):
    for name, value in reference.state_dict().items():
        assert torch.equal(model.state_dict()[name], value), name


def test_every_header_length_mod_256_loads(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    firsts = set()
    for residue in range(256):
        path = tmp_path / f"{residue}.safetensors"
        path.write_bytes(padded(data, residue))
        firsts.add(path.read_bytes()[0])
        loaded, (src, tgt), cfg = il.load_checkpoint(path)
        assert cfg == model.cfg and src.tokens == src_vocab.tokens, residue
        assert_same_weights(loaded, model)
    assert firsts == set(range(256))


def test_the_package_writer_loads_at_every_length_it_writes(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    seen = {}
    for extra in range(256):
        data = _safetensors.to_bytes(model, (renamed(src_vocab, extra), tgt_vocab))
        seen.setdefault(struct.unpack("<Q", data[:8])[0] % 256, data)
    assert sorted(seen) == list(range(0, 256, 8))  # it pads to 8: 32 lengths mod 256
    for residue, data in seen.items():
        path = tmp_path / f"{residue}.safetensors"
        path.write_bytes(data)
        loaded, (src, _), _ = il.load_checkpoint(path)
        assert src.tokens[-1].startswith(src_vocab.tokens[-1]), residue
        assert_same_weights(loaded, model)


WRITE_PAGE_MODELS = """
import { readFileSync, writeFileSync } from "node:fs";
import { writeModel } from "%s";
const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const tensors = Object.fromEntries(Object.entries(spec.tensors).map(
  ([name, { shape, data }]) => [name, { shape, data: Float32Array.from(data) }]));
const seen = new Set();
for (let extra = 0; extra < 256; extra++) {
  const src = [...spec.src.slice(0, -1), spec.src.at(-1) + "x".repeat(extra)];
  const bytes = await writeModel(tensors, spec.config, src, spec.tgt);
  const residue = new DataView(bytes.buffer).getUint8(0);
  if (seen.has(residue)) continue;
  seen.add(residue);
  writeFileSync(`${process.argv[3]}/${residue}.safetensors`, bytes);
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run the page's writer")
def test_the_page_writer_loads_at_every_length_it_writes(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    spec = {"tensors": {k: {"shape": list(v.shape), "data": v.flatten().tolist()}
                        for k, v in model.state_dict().items()},
            "config": asdict(model.cfg), "src": list(src_vocab.tokens),
            "tgt": list(tgt_vocab.tokens)}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    script = tmp_path / "write.mjs"
    script.write_text(WRITE_PAGE_MODELS % (ROOT / "site" / "js" / "engine" / "safetensors.js").as_uri())
    out = tmp_path / "models"
    out.mkdir()
    subprocess.run(["node", str(script), str(tmp_path / "spec.json"), str(out)], check=True,
                   timeout=120)
    files = sorted(out.iterdir(), key=lambda p: int(p.stem))
    assert [int(p.stem) for p in files] == list(range(0, 256, 8))
    for path in files:
        loaded, (src, _), cfg = il.load_checkpoint(path)
        assert cfg == model.cfg and src.tokens[-1].startswith(src_vocab.tokens[-1]), path.name
        assert_same_weights(loaded, model)
    # the page's digests are the package's: a byte flipped in the last tensor is named on load
    page = files[0].read_bytes()
    expected = {k: _safetensors.tensor_digest(k, v) for k, v in model.state_dict().items()}
    assert _safetensors.read_checkpoint_dict(files[0]).get("digests") == expected
    flipped = tmp_path / "flipped.safetensors"
    flipped.write_bytes(page[:-1] + bytes([page[-1] ^ 1]))
    last = list(model.state_dict())[-1]
    with pytest.raises(ValueError, match=f"tensor '{last}' does not match its sha256"):
        il.load_checkpoint(flipped)


@pytest.mark.parametrize("residue, modulus, start", [(0x80, 256, b"\x80"),
                                                     (0x4B50, 65536, b"PK")])
def test_translate_reads_a_model_starting_as_a_torch_file_does(post, tmp_path, capsys, residue,
                                                               modulus, start):
    model, src_vocab, tgt_vocab = post
    path = tmp_path / "model.safetensors"
    path.write_bytes(padded(_safetensors.to_bytes(model, (src_vocab, tgt_vocab)), residue,
                            modulus))
    assert path.read_bytes().startswith(start)
    assert main(["translate", "--model", str(path), "je suis étudiant"]) == 0
    assert "je suis étudiant  ->  i am a student" in capsys.readouterr().out


def test_python_m_illustrated_translate_reads_a_model_whose_first_byte_is_0x80(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    path = tmp_path / "downloaded.safetensors"
    path.write_bytes(padded(_safetensors.to_bytes(model, (src_vocab, tgt_vocab)), 0x80))
    done = subprocess.run([sys.executable, "-m", "illustrated", "translate", "--model", str(path),
                           "je suis étudiant"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "i am a student" in done.stdout


def test_a_torch_checkpoint_is_still_read_as_one(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    path = tmp_path / "model.safetensors"  # even under this name
    il.save_checkpoint(path, model, (src_vocab, tgt_vocab), model.cfg)
    assert path.read_bytes()[:2] == b"PK"
    assert_same_weights(il.load_checkpoint(path)[0], model)
