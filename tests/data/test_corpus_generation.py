"""The shipped corpus files are exactly what the seeded generator writes."""
from importlib import resources

import pytest

from illustrated.data import CORPORA
from illustrated.data.generate import generate_corpus, main

SHIPPED = resources.files("illustrated.data") / "corpora"


def test_regenerating_gives_the_shipped_files(tmp_path, capsys):
    main(["--out", str(tmp_path)])
    written = sorted(p.name for p in tmp_path.iterdir())
    expected = sorted(f"{name}.{split}.tsv" for name in CORPORA for split in ("train", "test"))
    assert written == expected
    for name in written:
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes(), name
    assert "fr-en.train.tsv" in capsys.readouterr().out


def test_files_are_utf8_tsv_with_one_pair_per_line():
    text = (SHIPPED / "fr-en.train.tsv").read_bytes().decode("utf-8")
    assert "\r" not in text and text.endswith("\n")
    assert all(line.count("\t") == 1 for line in text.splitlines())
    assert "étudiant" in text


def test_generate_unknown_name():
    with pytest.raises(ValueError, match=r"^name: got 'nope', expected one of"):
        generate_corpus("nope")

