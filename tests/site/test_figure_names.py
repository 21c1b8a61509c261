"""Every one of the post's 36 figures can be found by its name on its chapter's page (issue 26):
tests/browser/figure_names.txt lists all 36, each the MyST figure name of one captioned cell of
its chapter's notebook, none the name of a frame of another figure. (tests/browser checks the
built pages.)"""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIST = ROOT / "tests/browser/figure_names.txt"


def _listed() -> list[tuple[str, str, int]]:
    rows = [line.split() for line in LIST.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    return [(name, chapter, int(number)) for name, chapter, number in rows]


def _figures(chapter: str) -> dict[str, str]:
    """MyST figure name -> caption of every figure cell of chapter ``chapter``'s notebook."""
    [path] = ROOT.glob(f"chapters/{chapter}_*.ipynb")
    figures = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        if figure and "name" in figure:
            assert figure["name"] not in figures, f"{path.name}: {figure['name']} named twice"
            figures[figure["name"]] = figure.get("caption", "")
    return figures


def test_the_list_holds_the_posts_36_figures_once_each():
    listed = _listed()
    assert [number for _, _, number in listed] == list(range(1, 37))
    assert len({name for name, _, _ in listed}) == 36
    assert all(re.fullmatch(r"post-[a-z0-9-]+", name) for name, _, _ in listed)


def test_every_figure_is_a_captioned_figure_of_its_chapter():
    problems = []
    for name, chapter, number in _listed():
        figures = _figures(chapter)
        if name not in figures:
            problems.append(f"figure {number} {name}: no figure of chapter {chapter} has this name")
        elif len(figures[name].split()) < 5:
            problems.append(f"figure {number} {name}: caption {figures[name]!r}")
    assert not problems, problems
