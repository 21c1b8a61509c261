"""The pages' model files (illustrated._safetensors, illustrated.web_export): a model written as
the page writes it loads with il.load_checkpoint and `python -m illustrated translate --model`
with the same weights and translations; the file is safetensors as the format defines it; a
damaged file is one line naming it; the exporter writes what site/js reads."""
from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest
import torch

import illustrated as il
from illustrated import _safetensors, web_export


@pytest.fixture(scope="module")
def shipped():
    return il.pretrained("post")


def test_round_trip_keeps_every_weight_config_and_vocabulary(shipped, tmp_path):
    model, src_vocab, tgt_vocab = shipped
    path = web_export.save_model(tmp_path / "post.safetensors", model, (src_vocab, tgt_vocab))
    loaded, (src2, tgt2), cfg = il.load_checkpoint(path)
    assert cfg == model.cfg and src2.tokens == src_vocab.tokens and tgt2.tokens == tgt_vocab.tokens
    for (name, a), (name2, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert name == name2 and torch.equal(a, b), name


def test_the_file_is_safetensors_as_the_format_defines_it(shipped):
    model, src_vocab, tgt_vocab = shipped
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    size = struct.unpack("<Q", data[:8])[0]
    assert size % 8 == 0
    header = json.loads(data[8:8 + size])
    meta = header.pop("__metadata__")
    assert meta["format"] == _safetensors.FORMAT and all(isinstance(v, str) for v in meta.values())
    assert list(header) == list(model.state_dict())
    end = 0
    for name, entry in header.items():
        start, stop = entry["data_offsets"]
        assert entry["dtype"] == "F32" and start == end, name
        end = stop
        weight = torch.frombuffer(bytearray(data[8 + size + start:8 + size + stop]), dtype=torch.float32)
        assert torch.equal(weight.reshape(entry["shape"]), model.state_dict()[name])
    assert 8 + size + end == len(data)


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:6], "not an illustrated checkpoint"),
    (lambda d: d[:100], "truncated header"),
    (lambda d: d[:9] + b"\xff" + d[10:], "damaged header"),
    (lambda d: d[:-4], "expected F32 data inside the file"),
    (lambda d: d.replace(_safetensors.FORMAT.encode(), b"illustrated-safetensors/9"), "format"),
])
def test_a_damaged_file_is_one_line_naming_it(shipped, tmp_path, damage, message):
    model, src_vocab, tgt_vocab = shipped
    path = tmp_path / "bad.safetensors"
    path.write_bytes(damage(_safetensors.to_bytes(model, (src_vocab, tgt_vocab))))
    with pytest.raises(ValueError, match=message) as error:
        il.load_checkpoint(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_translate_on_the_command_line_reads_a_page_model(shipped, tmp_path):
    model, src_vocab, tgt_vocab = shipped
    path = web_export.save_model(tmp_path / "post.safetensors", model, (src_vocab, tgt_vocab))
    out = subprocess.run([sys.executable, "-m", "illustrated", "translate", "--model", str(path),
                          "je suis étudiant"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "->  i am a student  (score" in out.stdout


def test_export_site_writes_what_the_page_reads(tmp_path):
    index = web_export.export_site(tmp_path / "models", corpora=("post", "copy"))
    assert json.loads((tmp_path / "models" / "index.json").read_text()) == index
    assert index["format"] == web_export.FORMAT == "illustrated-safetensors/1"
    data = json.loads((tmp_path / "models" / "copy.train.json").read_text())
    pairs, src_vocab, tgt_vocab = il.data.load_corpus("copy", "train")
    assert data["train"][0] == [src_vocab.encode(pairs[0][0]), tgt_vocab.encode(pairs[0][1])]
    assert data["train_settings"] == {"steps": 400, "lr": 1e-2, "warmup": 40, "schedule": "cosine",
                                      "label_smoothing": 0.0, "batch_size": 64}
    vocab = json.loads((tmp_path / "models" / "post.json").read_text())
    assert vocab["tgt_tokens"][:6] == ["a", "am", "i", "thanks", "student", "<eos>"]
    loaded, _, _ = il.load_checkpoint(tmp_path / "models" / "post.safetensors")
    assert loaded.cfg == il.pretrained("post")[0].cfg
