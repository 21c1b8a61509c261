"""The code conventions docs/ARCHITECTURE.md states, checked on the source like a linter (it runs
in `make test` beside ruff; the tests check behaviour, never the source text):

- every line of ``modules/`` and ``reference/`` that reshapes ends with its shape comment;
- the package imports its own code only at the top of a file (the command line aside, which
  imports torch inside ``main`` where Ctrl-C is caught);
- no file reads torch's private attributes;
- the NumPy parts (``reference/``, the corpora's modules) import no torch;
- every mutant of benchmarks/mutation.py finds its text exactly once in the code it mutates (a
  refactor that moved the text would turn the mutant into a no-op).

Prints one line per finding and exits 1 if there is any.
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "illustrated"
RESHAPES = {"view", "reshape", "transpose", "permute", "flatten", "unflatten", "movedim"}
NUMPY_RESHAPING = re.compile(r"\.reshape\(|swapaxes\(|\bNone\]")
SHAPE_COMMENT = re.compile(r"# \([^#]*\)$")
PRIVATE_TORCH = ("._version", "_global_forward_hooks", "_global_forward_pre_hooks",
                 "._forward_hooks", "._forward_pre_hooks", "nn.modules.module")
#: The one exception, by name: torch lists no module's hooks publicly, and the captured training
#: step must see them to leave a hooked model to the eager step (issue 34, captured_step.py).
HOOK_READERS = {"training/captured_step.py": {"_global_forward_hooks", "_global_forward_pre_hooks",
                                     "._forward_hooks", "._forward_pre_hooks"}}
TORCH_FREE_DATA = ("tokenizer", "vocab", "corpora", "generate", "fr_en_grammar",
                   "coreference_grammar", "__init__")


def comments(source: str) -> dict[int, str]:
    """Line number -> the comment that ends it."""
    return {tok.start[0]: tok.string
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT}


def reshaping_lines(tree: ast.AST) -> set[int]:
    """The last line of every statement that calls a reshaping method (``x.view(...)``, ...)."""
    lines = set()
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt) and not isinstance(
                statement, (ast.FunctionDef, ast.ClassDef, ast.If, ast.For, ast.With, ast.Try)):
            if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                   and node.func.attr in RESHAPES for node in ast.walk(statement)):
                lines.add(statement.end_lineno)
    return lines


def own_imports_inside_functions(source: str) -> list[int]:
    """Lines of ``import``/``from`` statements inside a function that import the package."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (
                        node.level or (node.module or "").startswith("illustrated")):
                    found.append(node.lineno)
                elif isinstance(node, ast.Import) and any(
                        alias.name.startswith("illustrated") for alias in node.names):
                    found.append(node.lineno)
    return found


def imported_roots(source: str) -> set[str]:
    """The top-level packages a file imports (absolute imports only)."""
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def findings() -> list[str]:
    out = []
    read = {p: p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}
    for path, source in read.items():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("modules/"):
            shaped = {n for n, text in comments(source).items() if text.startswith("# (")}
            for line in sorted(reshaping_lines(ast.parse(source)) - shaped):
                out.append(f"{rel}:{line}: reshapes without a '# (shape)' comment")
        if rel.startswith("reference/"):
            for n, line in enumerate(source.splitlines(), 1):
                code = line.split("#", 1)[0]
                if NUMPY_RESHAPING.search(code) and not code.lstrip().startswith(("\"", "'")) \
                        and not SHAPE_COMMENT.search(line):
                    out.append(f"{rel}:{n}: reshapes without a '# (shape)' comment")
            if "torch" in imported_roots(source):
                out.append(f"{rel}: the NumPy reference imports torch")
        if rel.startswith("data/") and path.stem in TORCH_FREE_DATA \
                and imported_roots(source) & {"torch", "numpy"}:
            out.append(f"{rel}: a corpus module imports torch or numpy")
        if rel != "commands/cli.py":
            for line in own_imports_inside_functions(source):
                out.append(f"{rel}:{line}: imports the package inside a function")
        for private in PRIVATE_TORCH:
            if private in source and private not in HOOK_READERS.get(rel, ()):
                out.append(f"{rel}: reads torch's private {private}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import mutation  # the mutants' table
    for name, path, old, new in mutation.MUTANTS:
        count = (PACKAGE / path).read_text(encoding="utf-8").count(old)
        if old == new or count != 1:
            out.append(f"benchmarks/mutation.py: mutant {name!r} finds its text {count} times "
                       f"in {path}")
    return out


if __name__ == "__main__":
    found = findings()
    print("\n".join(found) or "conventions: all hold")
    sys.exit(1 if found else 0)
