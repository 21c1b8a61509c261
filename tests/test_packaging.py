"""What `pip install illustrated` installs is enough: every distribution the package imports when a
module loads is one of its declared dependencies (Colab installs nothing else; sacrebleu, missing
there, once cost chapter 10 its trained model), heavy optional ones (onnx, sacrebleu) are imported
inside functions and declared as extras, the build bound admits only a setuptools that builds the
package, the Python bound admits Colab's next Python, no module imports another that imports it
back, and `train --pairs` saves its model with only these dependencies. .ci/colab-versions runs
this file again in an environment that holds only them, at Colab's versions."""
from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="Python >= 3.11 reads pyproject.toml")
from packaging.requirements import Requirement  # noqa: E402 - pytest's own dependency
from packaging.specifiers import SpecifierSet  # noqa: E402

import illustrated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(illustrated.__file__).parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


DEPENDENCIES = {canonical(Requirement(r).name) for r in PROJECT["dependencies"]}
EXTRAS = {canonical(Requirement(r).name) for reqs in PROJECT["optional-dependencies"].values()
          for r in reqs}


def imports(path: Path) -> list[tuple[str, bool]]:
    """(top-level module, imported when the module loads) for every absolute import of a file:
    an import inside a function runs only when the function does."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name.split(".")[0], not in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0:
                found.append((child.module.split(".")[0], not in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return [(name, eager) for name, eager in found
            if name not in sys.stdlib_module_names and name != "illustrated"]


SOURCES = sorted(PACKAGE.rglob("*.py"))


def distribution(module: str) -> set[str]:
    """The distributions that install a top-level module, by their installed metadata."""
    names = importlib.metadata.packages_distributions().get(module)
    assert names, f"{module} is imported by the package but not installed here"
    return {canonical(n) for n in names}


def test_every_import_at_module_load_is_a_declared_dependency():
    eager = {(name, path.relative_to(PACKAGE.parent).as_posix())
             for path in SOURCES for name, at_load in imports(path) if at_load}
    assert {name for name, _ in eager} >= {"torch", "numpy", "matplotlib", "ipywidgets"}
    missing = sorted(f"{where} imports {name} (installed by {sorted(distribution(name))})"
                     for name, where in eager if not distribution(name) & DEPENDENCIES)
    assert not missing, "not in pyproject's dependencies: " + "; ".join(missing)


def test_optional_dependencies_are_extras_imported_only_inside_functions():
    lazy = {name for path in SOURCES for name, at_load in imports(path) if not at_load}
    eager = {name for path in SOURCES for name, at_load in imports(path) if at_load}
    optional = {name for name in lazy - eager
                if not importlib.metadata.packages_distributions().get(name)
                or not distribution(name) & DEPENDENCIES}
    assert optional == {"onnx", "onnxscript", "sacrebleu"}
    assert {"onnx", "onnxscript", "sacrebleu"} <= EXTRAS
    assert not EXTRAS & DEPENDENCIES


@pytest.mark.parametrize("version, admitted", [("64.0", False), ("75.2.0", False),
                                               ("76.1.0", False), ("77.0.3", True),
                                               ("84.2.1", True)])
def test_the_build_bound_admits_only_a_setuptools_that_reads_the_license(version, admitted):
    """license = "MIT" (a PEP 639 expression) needs setuptools 77: Colab's 75.2 fails."""
    assert PROJECT["license"] == "MIT"
    (requirement,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    assert requirement.name == "setuptools"
    assert requirement.specifier.contains(version) == admitted


@pytest.mark.parametrize("version, admitted", [("3.9", False), ("3.10", True), ("3.11", True),
                                               ("3.13", True), ("3.14", True), ("3.15", True)])
def test_the_python_bound_admits_colabs_next_python(version, admitted):
    assert SpecifierSet(PROJECT["requires-python"]).contains(version) == admitted


def _module_graph() -> dict[str, set[str]]:
    """Every import between the package's modules, those inside functions included."""
    def name_of(path: Path) -> str:
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(p): p for p in SOURCES}
    graph = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = (f"{base}.{node.module}" if node.module else base) if node.level \
                    else node.module
                edges |= {base} | {f"{base}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
        graph[module] = {e for e in edges if e in modules and e != module}
    return graph


def test_no_module_imports_one_that_imports_it_back():
    graph = _module_graph()
    assert "illustrated.commands.shipped" in graph["illustrated.commands.onnx_export"]
    assert "illustrated.pretrained_models" in graph["illustrated.commands.shipped"]  # the one direction

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    cycles = sorted(m for m in graph if m in reaches(m))
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_every_module_imports_with_only_the_declared_dependencies():
    """In .ci/colab-versions' environment this is the proof: nothing else is installed there."""
    names = [m.name for m in pkgutil.walk_packages([str(PACKAGE)], "illustrated.")]
    assert len(names) > 40 and "illustrated.commands.onnx_export" in names
    for name in names:
        importlib.import_module(name)


def test_train_pairs_saves_its_model_without_sacrebleu_and_translate_reads_it(tmp_path):
    """Chapter 10's two cells, in a process where sacrebleu cannot be imported."""
    lines = [f"{s} {v} .\t{es} {ev} ." for s, es in (("je", "i"), ("tu", "you"), ("il", "he"))
             for v, ev in (("mange", "eat"), ("dors", "sleep"), ("lis", "read"))]
    (tmp_path / "mine.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    blocked = ("import sys, runpy; sys.modules['sacrebleu'] = None; "
               "sys.argv = ['illustrated', *sys.argv[1:]]; "
               "runpy.run_module('illustrated', run_name='__main__')")

    def cli(*args):
        return subprocess.run([sys.executable, "-c", blocked, *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)

    trained = cli("train", "--pairs", "mine.tsv", "--steps", "30", "--device", "cpu",
                  "--out", "mine.pt")
    assert trained.returncode == 0, trained.stderr
    assert "saved mine.pt" in trained.stdout
    assert "BLEU not computed (import of sacrebleu halted; None in sys.modules: pip install " \
           "sacrebleu)" in trained.stdout
    translated = cli("translate", "--model", "mine.pt", "je mange .")
    assert translated.returncode == 0, translated.stderr
    assert translated.stdout.startswith("je mange .  ->  ")
