"""The closing part as built: its speed sentence says the range of its own throughput table (the
smallest and the largest ratio printed below it), and every code toggle says "Show the code", as
its introduction promises. Reads the built page's HTML. Needs the built book.
"""
from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from builtbook import html_path

PAGE = "closing/how_we_know"


@pytest.fixture(scope="module")
def page():
    if not html_path(PAGE).exists():
        pytest.skip(f"{PAGE} is not in the built book")
    return BeautifulSoup(html_path(PAGE).read_text(encoding="utf-8"), "html.parser")


def test_the_speed_sentence_reads_the_tables_range(page):
    sentence = next(s for s in page.find_all("strong") if "times as fast" in s.get_text())
    said = [float(x) for x in re.findall(r"\d+\.\d+", sentence.get_text())]
    table = next(p.get_text() for p in page.select("div.cell_output pre")
                 if "kernels, threads" in p.get_text())
    ratios = [float(x) for x in re.findall(r"(\d+\.\d+)x", table)]
    assert len(ratios) >= 4 and said == [min(ratios), max(ratios)], (sentence.get_text(), ratios)


def test_every_code_toggle_says_show_the_code(page):
    assert "Show the code" in page.get_text()
    assert "Show code cell" not in page.get_text()
