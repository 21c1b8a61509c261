"""Every mutant of benchmarks/mutation.py still finds its text, exactly once, in the code it
mutates: a refactor that moves the text would otherwise turn the mutant into a no-op."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import mutation  # noqa: E402


@pytest.mark.parametrize("name, path, old, new", mutation.MUTANTS, ids=[m[0] for m in mutation.MUTANTS])
def test_mutant_text_occurs_once(name, path, old, new):
    assert old != new
    assert (ROOT / "src" / "illustrated" / path).read_text(encoding="utf-8").count(old) == 1, name
