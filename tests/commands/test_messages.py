"""Messages a new user met that were raw or untrue, each now one line naming the argument, what
it got and what it expects: `--clip-grad -inf`, `--referent-weight 1e-400` (0 in float64),
an ONNX export into a read-only mount, a non-finite epsilon, BLEU on three-word sentences."""
import os

import pytest

import illustrated as il
from illustrated.commands import onnx_export
from illustrated.files import atomic as _atomic
from command_line import run


@pytest.mark.parametrize("flag, value, message", [
    ("--clip-grad", "-inf", "argument --clip-grad: expected a finite number, got '-inf'"),
    ("--clip-grad", "-1e5", "argument --clip-grad: expected a value >= 0, got '-1e5'"),
    ("--lr", "-nan", "argument --lr: expected a finite number, got '-nan'"),
    ("--referent-weight", "1e-400", "argument --referent-weight: expected 0 or a number float64 "
                                    "can hold (at least 5e-324 in size), got '1e-400', which "
                                    "rounds to 0"),
    ("--label-smoothing", "-1e-999", "argument --label-smoothing: expected 0 or a number "
                                     "float64 can hold"),
])
def test_a_number_argparse_cannot_read_is_named_by_its_option(capsys, tmp_path, flag, value,
                                                              message):
    code, out, err = run(capsys, "train", "--corpus", "post", flag, value, "--out",
                         str(tmp_path / "m.pt"))
    assert code == 2 and message in err.splitlines()[-1]  # argparse's usage, then one line
    assert "expected one argument" not in err
    assert not (tmp_path / "m.pt").exists()


def test_a_value_written_with_its_option_still_reads(capsys, tmp_path):
    code, out, err = run(capsys, "train", "--corpus", "post", "--clip-grad=-inf", "--out",
                         str(tmp_path / "m.pt"))
    assert code == 2 and "argument --clip-grad: expected a finite number, got '-inf'" in err


def test_a_negative_sentence_is_still_a_sentence(capsys, tmp_path):
    path = tmp_path / "post.pt"
    model, src, tgt = il.pretrained("post")
    il.save_checkpoint(path, model, (src, tgt), model.cfg)
    code, out, err = run(capsys, "translate", "--model", str(path), "-5")
    assert code == 0 and out.startswith("-5  ->  "), err


def test_an_onnx_export_into_a_read_only_mount_says_so(tmp_path, monkeypatch, capsys):
    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(onnx_export, "_export", lambda *a: b"graph")
    monkeypatch.setattr(_atomic.os, "statvfs", lambda path: ReadOnly())
    assert onnx_export.main(["--out", str(tmp_path), "--corpus", "post"]) == 2
    assert capsys.readouterr().err == (f"error: --out: cannot write in the directory "
                                       f"'{tmp_path}' (a read-only file system)\n")


def test_a_non_finite_epsilon_reads_as_english():
    with pytest.raises(ValueError) as info:
        il.Recipe(adam_eps=float("inf"))
    assert str(info.value) == "adam_eps: expected a finite epsilon > 0.0, got inf"


def test_bleu_on_three_word_sentences_names_the_order_it_used(tmp_path, capsys):
    words = ["red", "blue", "green", "big", "small", "old", "new", "cold"]
    lines = [f"{a} {b} {c}\t{c} {b} {a}" for a in words[:4] for b in words[4:] for c in
             ("x", "y", "z")][:40]
    path = tmp_path / "three.tsv"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "train", "--pairs", str(path), "--steps", "3", "--device",
                         "cpu", "--test-fraction", "0.25", "--out", str(tmp_path / "m.pt"))
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("test ("))
    assert "BLEU" in line and ("(up to 3-grams: the longest test sentence has 3 words, so "
                               "standard 4-gram BLEU is 0 by construction)") in line
