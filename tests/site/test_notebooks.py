"""Every chapter notebook as committed: the Colab set-up cell, the kernel, outputs, the table of
contents. Fast: nothing is executed (nbval and the book build do that)."""
from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPO_URL = CONFIG["repository"]["url"]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
chapters = pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def as_python(cell_source: str) -> ast.Module:
    """The cell as IPython runs it (``%pip ...`` becomes ``get_ipython().run_line_magic(...)``)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return ast.parse(TransformerManager().transform_cell(cell_source))


def is_colab_guard(test: ast.expr) -> bool:
    """``"google.colab" in sys.modules``."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)
            and isinstance(test.left, ast.Constant) and test.left.value == "google.colab"
            and isinstance(test.comparators[0], ast.Attribute)
            and test.comparators[0].attr == "modules"
            and isinstance(test.comparators[0].value, ast.Name)
            and test.comparators[0].value.id == "sys")


def pip_installs(tree: ast.AST, constants: dict[str, str]) -> list[list[str]]:
    """The arguments of every ``pip install`` in ``tree``: %pip / !pip magics and subprocess
    calls of ``[sys.executable, "-m", "pip", "install", ...]``. ``{NAME}`` and ``$NAME`` in magics
    are expanded from the cell's string constants, as IPython would."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        args = node.args
        if name == "run_line_magic" and len(args) == 2 and all(isinstance(a, ast.Constant) for a in args):
            magic, line = args[0].value, args[1].value
            command = [magic] + shlex.split(_expand(line, constants)) if magic == "pip" else []
        elif name in ("system", "getoutput") and args and isinstance(args[0], ast.Constant):
            command = shlex.split(_expand(args[0].value, constants))
        elif name in ("check_call", "run", "call", "check_output") and args and isinstance(args[0], ast.List):
            command = [a.value if isinstance(a, ast.Constant) else "<python>" for a in args[0].elts]
        else:
            continue
        while command and command[0] in ("<python>", "-m", "python", "python3", "%pip", "!pip"):
            command = command[1:]
        if command[:2] == ["pip", "install"]:
            found.append(command[2:])
    return found


def _expand(text: str, constants: dict[str, str]) -> str:
    for name, value in constants.items():
        text = text.replace("{" + name + "}", value).replace("$" + name, value)
    return text


def string_constants(tree: ast.Module) -> dict[str, str]:
    return {target.id: node.value.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


@chapters
def test_first_cell_installs_this_repository_in_colab_only(path):
    cell = load(path)["cells"][0]
    assert cell["cell_type"] == "code", f"{path.name}: the first cell must be the Colab set-up"
    assert "remove-cell" in cell.get("metadata", {}).get("tags", []), (
        f"{path.name}: the Colab set-up cell must be tagged remove-cell (hidden in the book)")
    tree = as_python(source(cell))
    imports_sys = any(isinstance(n, ast.Import) and any(a.name == "sys" for a in n.names)
                      for n in tree.body)
    assert imports_sys, f"{path.name}: the Colab cell uses sys.modules: it must `import sys`"
    guards = [n for n in tree.body if isinstance(n, ast.If) and is_colab_guard(n.test)]
    assert guards, f'{path.name}: no `if "google.colab" in sys.modules:` guard in the first cell'
    constants = string_constants(tree)
    inside = [args for guard in guards for args in pip_installs(guard, constants)]
    everywhere = pip_installs(tree, constants)
    assert len(everywhere) == len(inside), f"{path.name}: a pip install outside the Colab guard"
    assert inside, f"{path.name}: the Colab guard installs nothing"
    wanted = f"illustrated @ git+{REPO_URL}@main"
    for args in inside:
        requirements = [a for a in args if not a.startswith("-")]
        assert requirements == [wanted], (
            f"{path.name}: the Colab cell must install exactly {wanted!r} (repository.url of "
            f"_config.yml at main, dependencies unpinned so Colab keeps its own), got {requirements}")


@chapters
def test_kernel_is_python3(path):
    kernelspec = load(path).get("metadata", {}).get("kernelspec", {})
    assert kernelspec.get("name") == "python3", f"{path.name}: kernelspec {kernelspec}"


@chapters
def test_committed_with_outputs_of_one_clean_run(path):
    """Executed top to bottom (Restart & Run All) and saved with its outputs, so GitHub and Colab
    show results before anything runs."""
    cells = [c for c in load(path)["cells"] if c["cell_type"] == "code"
             and "skip-execution" not in c.get("metadata", {}).get("tags", [])]
    counts = [c.get("execution_count") for c in cells]
    unexecuted = [i for i, n in enumerate(counts) if n is None]
    assert not unexecuted, f"{path.name}: code cells saved without running: {unexecuted}"
    assert counts == sorted(counts) and len(set(counts)) == len(counts), (
        f"{path.name}: execution counts {counts}: not one clean top-to-bottom run")
    assert any(c.get("outputs") for c in cells), f"{path.name}: no outputs committed"


@chapters
def test_no_error_output_committed(path):
    errors = [i for i, c in enumerate(load(path)["cells"]) if c["cell_type"] == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{path.name}: error outputs in cells {errors}"


@chapters
def test_every_ipywidget_output_has_a_static_twin(path):
    """The site loads no Jupyter widget manager (_config.yml: nb_ipywidgets_js: {}), so a widget
    view alone would be an empty output. Every output that carries an ipywidget view also carries
    the page's version of it as text/html (book/interactive.py: precomputed frames or a live
    container), which _config.yml's nb_mime_priority_overrides picks for the html build; an
    ipywidget without one must be tagged remove-output."""
    view = "application/vnd.jupyter.widget-view+json"
    shown = [i for i, c in enumerate(load(path)["cells"]) if c["cell_type"] == "code"
             and not {"remove-output", "remove-cell"} & set(c.get("metadata", {}).get("tags", []))
             for o in c.get("outputs", []) if view in o.get("data", {})
             and "il-widget" not in "".join(o["data"].get("text/html", ""))]
    assert not shown, f"{path.name}: cells {shown} show an ipywidget with no static twin"


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            files.extend([entry["file"]] if "file" in entry else [])
            for key in ("sections", "chapters", "parts"):
                walk(entry.get(key))

    for key in ("chapters", "parts", "sections"):
        walk(toc.get(key))
    return [re.sub(r"\.(md|ipynb)$", "", f) for f in files]


def test_every_toc_entry_exists():
    missing = [f for f in toc_files()
               if not any((ROOT / (f + s)).exists() for s in (".ipynb", ".md"))]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_every_chapter_is_in_the_toc():
    """only_build_toc_files drops a chapter missing from _toc.yml without a word."""
    listed = set(toc_files())
    missing = [p.name for p in NOTEBOOKS if f"chapters/{p.stem}" not in listed]
    assert not missing, f"chapters missing from _toc.yml: {missing}"


# Calls that train a model in the page: their numbers depend on the CPU's vector instructions
# and thread count, so no output-checked cell may print them (docs/ARCHITECTURE.md, Conventions).
LIVE_TRAINING = {"train", "train_corpus", "cheating_demo", "train_with_snapshots",
                 "norm_placement_experiment", "train_playground"}
CHECK_TAG = "nbval-check-output"


def _trains_live(node: ast.AST) -> bool:
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        name = getattr(call.func, "attr", getattr(call.func, "id", ""))
        retrain = any(k.arg == "retrain" and not (isinstance(k.value, ast.Constant)
                                                  and k.value.value is False)
                      for k in call.keywords)
        if name in LIVE_TRAINING or (name == "pretrained" and retrain):
            return True
    return False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


@chapters
def test_checked_outputs_are_tagged_cells_not_comments(path):
    """Readers never see `# NBVAL_CHECK_OUTPUT`: nbval reads the cell tag instead."""
    commented = [i for i, c in enumerate(load(path)["cells"]) if c["cell_type"] == "code"
                 and "NBVAL" in source(c).upper().replace("-", "_")]
    assert not commented, f"{path.name}: nbval markers in the code of cells {commented}"
    tagged = [c for c in load(path)["cells"] if CHECK_TAG in c.get("metadata", {}).get("tags", [])]
    assert tagged, f"{path.name}: no output-checked cell"


@chapters
def test_no_checked_output_comes_from_training_in_the_page(path):
    """A checked cell may not train, nor read a variable that a cell before it got from training
    (followed through assignments, cell by cell)."""
    live: set[str] = set()
    offending = []
    for i, cell in enumerate(load(path)["cells"]):
        if cell["cell_type"] != "code" or not source(cell).strip():
            continue
        tree = as_python(source(cell))
        checked = CHECK_TAG in cell.get("metadata", {}).get("tags", [])
        if checked and (_trains_live(tree) or _names(tree) & live):
            offending.append((i, sorted(_names(tree) & live)))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)):
                value = node.iter if isinstance(node, ast.For) else node.value
                targets = ([node.target] if not isinstance(node, ast.Assign) else node.targets)
                if value is not None and (_trains_live(value) or _names(value) & live):
                    live |= set().union(*(_names(t) for t in targets))
    assert not offending, (f"{path.name}: output-checked cells that show numbers of a model "
                           f"trained in the page (cell, live names): {offending}")
