"""The shipped corpus files are exactly what the seeded generator writes."""
import ast
from importlib import resources
from pathlib import Path

import pytest

import illustrated.data
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


@pytest.mark.parametrize("module", ["tokenizer", "vocab", "corpora", "generate", "fr_en_grammar",
                                    "coreference_grammar", "__init__"])
def test_torch_free_modules_do_not_import_torch(module):
    source = Path(illustrated.data.__file__).with_name(f"{module}.py").read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert "torch" not in imported and "numpy" not in imported
