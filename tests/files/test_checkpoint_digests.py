"""Checkpoints carry a sha256 of each tensor (its name, dtype, shape and bytes) that
il.load_checkpoint checks: one changed byte inside a weight is one line naming the tensor, in a
torch checkpoint and in a page model alike. Files written without digests (the shipped weights,
checked against their manifest's sha256 instead; a page model from site/js) still load."""
import json
import struct
from pathlib import Path

import pytest
import torch

import illustrated as il
from illustrated.commands.cli import main
from illustrated.files import safetensors as _safetensors

WEIGHTS = Path(il.__file__).parent / "weights"


@pytest.fixture(scope="module")
def post():
    return il.pretrained("post")


def flip_a_byte_of(data: bytes, needle: bytes) -> bytes:
    at = data.index(needle) + 1
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def test_a_changed_byte_in_a_torch_checkpoint_names_the_tensor(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    path = tmp_path / "model.pt"
    il.save_checkpoint(path, model, (src_vocab, tgt_vocab), model.cfg)
    data = torch.load(path, weights_only=True)
    assert set(data["digests"]) == set(model.state_dict())
    data["state_dict"]["decoder.layers.0.cross_attn.w_k.weight"].view(torch.int32)[3, 5] ^= 1
    torch.save(data, path)
    with pytest.raises(ValueError) as info:
        il.load_checkpoint(path)
    assert str(info.value) == (f"path: '{path}' is damaged: tensor "
                               f"'decoder.layers.0.cross_attn.w_k.weight' does not match its "
                               f"sha256 in the file (a byte changed since it was written)")


def test_a_changed_byte_in_a_page_model_names_the_tensor(post, tmp_path, capsys):
    model, src_vocab, tgt_vocab = post
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    start = 8 + length + header["generator.proj.weight"]["data_offsets"][0]
    path = tmp_path / "post.safetensors"
    path.write_bytes(data[:start + 40] + bytes([data[start + 40] ^ 0x80]) + data[start + 41:])
    with pytest.raises(ValueError, match=r"is damaged: tensor 'generator.proj.weight' does not "
                                         r"match its sha256"):
        il.load_checkpoint(path)
    assert main(["translate", "--model", str(path), "je suis étudiant"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tensor 'generator.proj.weight'" in err


def test_digests_that_name_other_tensors_are_refused(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    path = tmp_path / "model.pt"
    il.save_checkpoint(path, model, (src_vocab, tgt_vocab), model.cfg)
    data = torch.load(path, weights_only=True)
    data["digests"].pop("generator.proj.bias")
    torch.save(data, path)
    with pytest.raises(ValueError, match=r"has digests that do not name its tensors .* not "
                                         r"'generator.proj.bias'"):
        il.load_checkpoint(path)


@pytest.mark.parametrize("corpus", ["post", "copy", "reverse", "fr-en", "coreference"])
def test_the_shipped_weights_have_no_digests_and_still_load(corpus):
    manifest = json.loads((WEIGHTS / "manifest.json").read_text())
    path = WEIGHTS / manifest["models"][corpus]["file"]
    assert "digests" not in torch.load(path, weights_only=True)
    model = il.load_checkpoint(path)[0]
    assert all(torch.isfinite(v).all() for v in model.state_dict().values())


def test_a_page_model_without_digests_loads(post, tmp_path):
    model, src_vocab, tgt_vocab = post
    data = _safetensors.to_bytes(model, (src_vocab, tgt_vocab))
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    del header["__metadata__"]["digests"]  # as site/js/safetensors.js writes it
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path = tmp_path / "page.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + length:])
    loaded = il.load_checkpoint(path)[0]
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in model.state_dict().items())


def test_a_one_byte_file_is_one_whole_line(tmp_path, capsys):
    path = tmp_path / "model.pt"
    path.write_bytes(b"x")
    assert main(["translate", "--model", str(path), "je suis étudiant"]) == 2
    assert capsys.readouterr().err == (
        f"error: path: '{path}' is not an illustrated checkpoint (expected a file written by "
        f"torch.save, a zip, or a page model, safetensors; got 1 byte starting b'x')\n")
