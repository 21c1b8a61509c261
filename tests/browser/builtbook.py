"""What the book has, for the tests of the built site: its pages (from _toc.yml), its
configuration, the post's figure names, where the build is."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

# The repository; BOOK_ROOT points the tests at another book folder (a throwaway test book).
ROOT = Path(os.environ.get("BOOK_ROOT") or Path(__file__).resolve().parents[2]).resolve()
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
HERE = Path(__file__).resolve().parent


def toc_pages() -> list[str]:
    """Every page of the book, in reading order: the docnames of _toc.yml (no suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages: list[str] = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            for key in ("sections", "chapters", "parts"):
                walk(entry.get(key))

    for key in ("chapters", "parts", "sections"):
        walk(toc.get(key))
    return [re.sub(r"\.(md|ipynb)$", "", p) for p in pages]


def source_of(page: str) -> Path | None:
    for suffix in (".ipynb", ".md"):
        if (ROOT / (page + suffix)).exists():
            return ROOT / (page + suffix)
    return None


def chapter_number(page: str) -> str | None:
    """"03" for chapters/03_self_attention; None for pages that are not numbered chapters."""
    match = re.match(r"chapters/(\d\d)_", page)
    return match.group(1) if match else None


def figure_names() -> dict[str, list[str]]:
    """Chapter number -> the post's figure names that chapter must carry (figure_names.txt)."""
    names: dict[str, list[str]] = {}
    for line in (HERE / "figure_names.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, chapter, _number = line.split()
            names.setdefault(chapter, []).append(name)
    return names


def book_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def html_path(page: str) -> Path:
    return HTML / (page + ".html")


#: Console errors known to be harmless, each with the reason. Anything else fails the page. None
#: now: the theme's mode is configured (html_context's default_mode in _config.yml) and the book
#: has its own favicon (html.favicon), so every error or failed request, those two included, fails.
KNOWN_HARMLESS_CONSOLE_ERRORS: dict[str, str] = {}

#: Requests a page may make: the local server, and what never leaves the browser.
LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome:", "chrome-extension:", "devtools:")


def require(reason: str) -> None:
    """Skip with ``reason``; fail instead under CI, where everything these tests need is set up."""
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"{reason} (CI=true: the browser tests must run, not skip)", pytrace=False)
    pytest.skip(reason)
