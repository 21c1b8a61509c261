"""Sphinx extension: an "Under the hood" dropdown opens straight onto its evidence.

In a chapter notebook, an "Under the hood" dropdown (a Markdown cell ending with a
``{dropdown}`` whose title starts "Under the hood") is followed by the code cells that hold its
evidence, tagged ``hide-cell`` so that Jupyter and Colab show them collapsed. In the page each of
those cells would be a second toggle under the first; this moves them into the dropdown, shown
whole, so one click opens the explanation with its code and outputs. They sit below the
dropdown's padded text, at the full width of the column, so that a figure among them is shown
as wide as any other.

Loaded from ``_config.yml`` (``sphinx.local_extensions: {under_the_hood: site/}``).
"""
from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_design.dropdown import dropdown_main
from sphinx_design.shared import is_component

TITLE = "Under the hood"
MOVED = "il-under-the-hood"  # a class on the cells moved


def _hidden_cell(node) -> bool:
    return (isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"
            and node.get("hide_mode") == "all")


class UnderTheHood(SphinxPostTransform):
    """Moves the hide-cell code cells right after an "Under the hood" dropdown into it."""

    # Before myst-nb wraps hidden cells in toggles and sphinx-design turns dropdowns into
    # <details> (both at 199).
    default_priority = 150
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for dropdown in list(self.document.findall(lambda n: is_component(n, "dropdown"))):
            title = dropdown.children[0].astext() if dropdown.children else ""
            if not title.startswith(TITLE) or dropdown.parent is None:
                continue
            parent = dropdown.parent
            while True:
                following = parent.index(dropdown) + 1
                if following >= len(parent.children) or not _hidden_cell(parent[following]):
                    break
                cell = parent[following]
                parent.remove(cell)
                del cell["hide_mode"]
                cell["classes"].append(MOVED)
                dropdown.append(cell)


class FullWidth(SphinxPostTransform):
    """Lifts the moved cells out of the dropdown's padded body, to the end of its <details>."""

    default_priority = 250  # after sphinx-design has built the dropdown (199)
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for details in self.document.findall(dropdown_main):
            for cell in list(details.findall(nodes.container)):
                if MOVED in cell["classes"] and cell.parent is not details:
                    cell.parent.remove(cell)
                    details.append(cell)


def setup(app):
    app.add_post_transform(UnderTheHood)
    app.add_post_transform(FullWidth)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
