"""The book's configuration: launch buttons, strictness, and a site that needs no CDN."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
SPHINX = CONFIG["sphinx"]["config"]


def test_repository_and_launch_buttons():
    repository = CONFIG["repository"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository["url"]), (
        "repository.url: https://github.com/<owner>/<name> (no trailing slash, no .git): the "
        "Colab button and every chapter's install cell are built from it")
    assert not repository["url"].endswith(".git")
    assert repository["branch"] == "main"
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["html"]["use_repository_button"] is True
    # The download button is sphinx-book-theme's default; nothing may switch it off.
    assert "use_download_button" not in json.dumps(CONFIG)


def test_strict_execution():
    # The build reads each notebook's outputs from a cache that `make book` empties and fills
    # first (site/execute_notebooks.py): every build executes every page anew.
    assert CONFIG["execute"]["execute_notebooks"] == "cache"
    assert CONFIG["execute"]["cache"] == "_build/.jupyter_cache"
    assert CONFIG["execute"]["allow_errors"] is False
    # A failing notebook is a warning (-W fails the build; every report is kept), not a crash.
    assert SPHINX["nb_execution_raise_on_error"] is False
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    book = makefile.split("\nbook:", 1)[1].split("\n\n", 1)[0]  # the book target's recipe
    steps = [line.strip() for line in book.splitlines()[1:]]
    assert steps[1].startswith("rm -rf _build/.jupyter_cache"), steps
    assert "site/execute_notebooks.py" in steps[2] and "ILLUSTRATED_BOOK_BUILD=1" in steps[2]
    assert "jupyter-book build . -W -n --keep-going" in steps[3]


def test_the_notebooks_executed_first_are_the_books_own():
    """site/execute_notebooks.py executes every notebook page of _toc.yml, the slowest first."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("execute_notebooks",
                                                  ROOT / "site" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    notebooks = [p.relative_to(ROOT).with_suffix("").as_posix() for p in module.toc_notebooks()]
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    pages = re.findall(r"file:\s*(\S+)", toc)
    expected = {p for p in pages if (ROOT / f"{p}.ipynb").exists()}
    assert set(notebooks) == expected and len(notebooks) == len(expected)
    assert "chapters/01_a_high_level_look" in expected and "index" not in expected
    assert notebooks[:len(module.SLOWEST_FIRST)] == module.SLOWEST_FIRST


def test_exclude_patterns_keep_the_build_and_tools_out():
    patterns = set(CONFIG["exclude_patterns"])
    needed = {"_build", ".venv", "venv", ".pytest_cache", "README.md", "node_modules", "site",
              "**/.ipynb_checkpoints"}
    assert needed <= patterns, f"exclude_patterns lacks {needed - patterns}"


def test_pytest_does_not_collect_the_build():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "_build" in pyproject["tool"]["pytest"]["ini_options"]["norecursedirs"]


def test_browser_assets_are_vendored_not_from_a_cdn():
    """MathJax and our own modules come from the site (MathJax from _vendor/, built by
    site/build.mjs and copied into the site by html_extra_path), never from another host and
    never from _static/."""
    build_script = (ROOT / "site" / "build.mjs").read_text(encoding="utf-8")
    assert "_build/site-assets" in SPHINX["html_extra_path"]
    mathjax = SPHINX["mathjax_path"]
    assert "://" not in mathjax, f"{mathjax}: served from another host"
    # Sphinx resolves script paths relative to _static/: "../_vendor/x" is <site>/_vendor/x.
    assert mathjax.startswith("../_vendor/"), f"{mathjax}: not under _vendor/"
    assert f'"{mathjax.removeprefix("../_vendor/")}"' in build_script, (
        f"{mathjax}: site/build.mjs does not put it into _vendor/")
    for script in SPHINX["html_js_files"]:
        path = script[0] if isinstance(script, list) else script
        assert "://" not in path and path.startswith("../_illustrated/"), path


def test_no_jupyter_widget_manager():
    """No page shows an ipywidget (their cells are tagged remove-output; the live controls are
    site/js/), so the site loads no widget manager: myst-nb's nb_ipywidgets_js is an empty
    mapping (its default loads require.js and @jupyter-widgets/html-manager from a CDN), npm
    installs neither, and site/no_widget_state.py leaves the saved state out of the pages."""
    assert SPHINX["nb_ipywidgets_js"] == {}
    package = json.loads((ROOT / "site" / "package.json").read_text(encoding="utf-8"))
    build_script = (ROOT / "site" / "build.mjs").read_text(encoding="utf-8")
    for name in ("requirejs", "@jupyter-widgets/html-manager"):
        assert name not in package["dependencies"], f"site/package.json still installs {name}"
        assert name not in build_script, f"site/build.mjs still copies {name}"
    lock = json.loads((ROOT / "site" / "package-lock.json").read_text(encoding="utf-8"))
    assert not [p for p in lock["packages"] if p.endswith(("/requirejs", "/html-manager"))], (
        "site/package-lock.json still locks the widget manager (run `npm install` in site/)")
    assert not (ROOT / "site" / "widgets-bootstrap.js").exists()
    assert "no_widget_state" in SPHINX["extensions"]
    assert CONFIG["sphinx"]["local_extensions"]["no_widget_state"] == "site/"


def test_no_extension_writes_a_cdn_address():
    extensions = SPHINX["extensions"]
    assert "sphinx_thebe" not in extensions, "sphinx-thebe writes an unpkg.com address into every page"
    for name, folder in CONFIG["sphinx"].get("local_extensions", {}).items():
        assert name in extensions
        assert (ROOT / folder / f"{name}.py").exists()


def test_npm_pins_are_exact_and_locked():
    package = json.loads((ROOT / "site" / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((ROOT / "site" / "package-lock.json").read_text(encoding="utf-8"))
    pins = {**package["dependencies"], **package.get("devDependencies", {})}
    for name, version in pins.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name}: {version} is not an exact pin"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, (
            f"{name}: package-lock.json is out of date (run `npm install` in site/)")
