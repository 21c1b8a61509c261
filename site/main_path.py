"""Sphinx extension: each chapter states its reading time, and the book's main path keeps its size.

The main path is what a reader meets without a click: prose (paragraphs, lists, tables, headings,
captions) and the code lines of visible cells. Collapsed content is not on it: ``<details>``,
dropdowns and toggles (sphinx-design, sphinx-togglebutton), a cell's input tagged ``hide-input``
or ``hide-cell``, its output tagged ``hide-output``. For every chapter page this writes "About N
minutes to read" under the title (200 words a minute, and 10 code lines a minute), and at the
end of the build it warns when the chapters together pass MAX_WORDS words or MAX_CODE_LINES
code lines: the book is built with ``-W``, so the build fails.

Also runnable after a build: ``python site/main_path.py _build/html`` prints the counts.
Loaded from ``_config.yml`` (``sphinx.local_extensions: {main_path: site/}``).
"""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup

MAX_WORDS = 9000
MAX_CODE_LINES = 400
WORDS_PER_MINUTE, CODE_LINES_PER_MINUTE = 200, 10
COLLAPSED = re.compile(r"dropdown|toggle|tag_hide-cell")
PROSE = ["p", "li", "dt", "dd", "figcaption", "h1", "h2", "h3", "h4", "th", "td", "blockquote"]
CONTAINERS = ["p", "li", "dd", "td", "th", "figcaption", "blockquote"]


def _collapsed(element) -> bool:
    for node in [element, *element.parents]:
        if getattr(node, "name", None) == "details":
            return True
        classes = " ".join(node.get("class", [])) if hasattr(node, "get") else ""
        if COLLAPSED.search(classes):
            return True
        parent = " ".join(node.parent.get("class", [])) if node.parent is not None \
            and hasattr(node.parent, "get") else ""
        if ("cell_input" in classes and "tag_hide-input" in parent) or (
                "cell_output" in classes and "tag_hide-output" in parent):
            return True
    return False


def count(body: str) -> tuple[int, int]:
    """(words, code lines) of a page's main path, from its HTML body."""
    soup = BeautifulSoup(body, "html.parser")
    article = soup.find("article") or soup
    for junk in article.find_all(["script", "style", "mjx-assistive-mml"]):
        junk.decompose()
    words = 0
    for element in article.find_all(PROSE):
        in_cell = element.find_parent(class_="cell") and element.name != "figcaption"
        if in_cell or element.find_parent(CONTAINERS) or _collapsed(element):
            continue
        if "il-reading-time" in element.get("class", []):
            continue
        words += len(element.get_text(" ", strip=True).split())
    code = 0
    for pre in article.find_all("pre"):
        listing = pre.find_parent(class_="cell_output") is not None and pre.find_parent(
            class_=re.compile(r"highlight-(python|ipython3|default|js|javascript)"))
        if (pre.find_parent(class_="cell_input") or listing) and not _collapsed(pre):
            code += sum(1 for line in pre.get_text().splitlines() if line.strip())
    return words, code


def minutes(words: int, code: int) -> int:
    """Reading time of a main path, in whole minutes (at least 1)."""
    return max(1, math.ceil(words / WORDS_PER_MINUTE + code / CODE_LINES_PER_MINUTE))


def _page(app, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    if not pagename.startswith("chapters/") or not context.get("body"):
        return
    words, code = count(context["body"])
    app.env.il_main_path = {**getattr(app.env, "il_main_path", {}), pagename: (words, code)}
    line = (f'<p class="il-reading-time">About {minutes(words, code)} minutes to read '
            f'({words} words, {code} lines of code; more under the dropdowns).</p>')
    context["body"] = re.sub(r"(</h1>)", r"\1" + line.replace("\\", r"\\"), context["body"],
                             count=1)


def _finished(app, exception) -> None:
    pages = getattr(app.env, "il_main_path", {})
    if exception is not None or not pages:
        return
    words = sum(w for w, _ in pages.values())
    code = sum(c for _, c in pages.values())
    print(f"main path of the chapters: {words} words, {code} code lines "
          f"(limits {MAX_WORDS}, {MAX_CODE_LINES})")
    if words > MAX_WORDS or code > MAX_CODE_LINES:
        from sphinx.util import logging
        logging.getLogger(__name__).warning(
            "the chapters' main path is %d words and %d code lines, over the limits of %d and "
            "%d: move evidence into 'Under the hood' dropdowns or the closing part", words, code,
            MAX_WORDS, MAX_CODE_LINES, type="main_path", subtype="size")


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", _page, priority=700)
    app.connect("build-finished", _finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}


if __name__ == "__main__":
    total = [0, 0]
    for page in sorted(Path(sys.argv[1]).glob("chapters/*.html")):
        w, c = count(page.read_text(errors="ignore"))
        total[0] += w
        total[1] += c
        print(f"{page.name}: {w} words, {c} code lines, about {minutes(w, c)} minutes")
    print(f"main path: {total[0]} words, {total[1]} code lines")
