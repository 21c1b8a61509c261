"""Every citation is a link (issue 26): a section, equation or table of the paper ("§3.2.1",
"Eq. 2", "Table 3") and every "et al." in the book's prose sit inside a Markdown link, and
chapter 10 ends with a further-reading list of links. Links are <a href>: the site still makes no
request to another host (tests/browser checks that)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(ROOT.glob("chapters/*.ipynb")) + [ROOT / "closing/how_we_know.ipynb",
                                                 ROOT / "index.md", ROOT / "deviations.md"]
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\((?:https?://[^)\s]+|[^)\s]+)\)")
CITATION = re.compile(r"§\s?\d+(?:\.\d+)*|\bEq\.\s?\d+|\bTable\s\d+|\bet al\.")
CODE = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$", re.S)


def _prose(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def _unlinked(text: str) -> list[str]:
    """Citations outside every link's text, each with a little context."""
    text = CODE.sub(" ", text)
    inside = [m.span() for m in LINK.finditer(text)]
    return [text[max(0, m.start() - 40):m.end() + 10].replace("\n", " ")
            for m in CITATION.finditer(text)
            if not any(a <= m.start() < b for a, b in inside)]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_citation_is_a_link(path):
    unlinked = _unlinked(_prose(path))
    assert not unlinked, f"{path.name}: citations that are not links: {unlinked}"


def test_the_check_finds_an_unlinked_citation():
    found = _unlinked("as the paper does (§3.4), after Ba et al. (2016)")
    assert len(found) == 2 and "§3.4" in found[0] and "Ba et al." in found[1]
    assert not _unlinked("the paper ([§3.4](https://arxiv.org/abs/1706.03762)), "
                         "[Ba et al., 2016](https://arxiv.org/abs/1607.06450), `x § 3`")


def test_chapter_10_ends_with_further_reading():
    cells = json.loads((ROOT / "chapters/10_playground.ipynb").read_text(encoding="utf-8"))["cells"]
    last = "".join(cells[-1]["source"])
    assert "## Further reading" in last
    links = re.findall(r"\]\((https://[^)\s]+)\)", last)
    assert len(links) >= 10 and "https://arxiv.org/abs/1706.03762" in links
