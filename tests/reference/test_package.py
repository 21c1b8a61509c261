"""House rules of illustrated.reference: NumPy only, __all__, docstrings, shape comments."""
from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import illustrated.reference as reference

SOURCE_DIR = Path(reference.__file__).parent
MODULES = sorted(path.stem for path in SOURCE_DIR.glob("*.py") if path.stem != "__init__")
PUBLIC_MODULES = [name for name in MODULES if not name.startswith("_")]
DOCSTRING_SECTIONS = ("Parameters", "Returns", "Shapes", "Raises", "References")
RESHAPING = re.compile(r"\.reshape\(|swapaxes\(|\bNone\]")
SHAPE_COMMENT = re.compile(r"# \([^#]*\)$")


def test_expected_files_exist():
    expected = {"embeddings", "self_attention", "multi_head", "positional", "residual",
                "feed_forward", "encoder", "decoder", "output", "loss", "softmax", "_checks"}
    assert expected <= set(MODULES)


def test_importing_does_not_import_torch():
    # The parent package `illustrated` imports torch for its modules; stand in an empty parent
    # so that only `illustrated.reference` itself is imported.
    code = ("import sys, types\n"
            "parent = types.ModuleType('illustrated')\n"
            f"parent.__path__ = [{str(SOURCE_DIR.parent)!r}]\n"
            "sys.modules['illustrated'] = parent\n"
            "import illustrated.reference\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("name", MODULES)
def test_module_has_all_and_every_name_exists(name):
    module = importlib.import_module(f"illustrated.reference.{name}")
    assert module.__doc__
    assert isinstance(module.__all__, list) and module.__all__
    for attribute in module.__all__:
        assert hasattr(module, attribute), f"{name}.{attribute}"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_package_reexports_every_public_name(name):
    module = importlib.import_module(f"illustrated.reference.{name}")
    for attribute in module.__all__:
        assert getattr(reference, attribute) is getattr(module, attribute)
        assert attribute in reference.__all__


@pytest.mark.parametrize("name", [n for n in reference.__all__
                                  if inspect.isfunction(getattr(reference, n))])
def test_public_function_docstring_has_every_section(name):
    doc = inspect.getdoc(getattr(reference, name))
    assert doc and doc.splitlines()[0].endswith(".")
    for section in DOCSTRING_SECTIONS:
        assert re.search(rf"^{section}\n-+$", doc, re.MULTILINE), f"{name}: no {section}"
    assert "§" in doc or "Paper" in doc or "paper" in doc  # cites the paper


