"""Sphinx extension: a launch button (Colab) only on the pages that are notebooks.

sphinx-book-theme offers "open in Colab" on every page that runs code, Markdown notebooks
included: on the front page (index.md, a MyST page whose one code cell draws its figure) it
would send the reader to Colab with a ``.md`` file, which Colab cannot open. This removes the
launch buttons from every page whose source is not an ``.ipynb`` file, after the theme adds them.

Loaded from ``_config.yml``: ``sphinx.local_extensions: {notebook_launch: site/}``; checked by
tests/browser/test_static_site.py (test_launch_download_and_repository_buttons).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx


def drop_launch_buttons(app: Sphinx, pagename: str, templatename: str, context: dict,
                        doctree: Any) -> None:
    """Remove the theme's launch buttons from ``pagename`` unless its source is a notebook."""
    if Path(app.env.doc2path(pagename)).suffix == ".ipynb":
        return
    buttons = context.get("header_buttons")
    if buttons:
        buttons[:] = [b for b in buttons if b.get("label") != "launch-buttons"]


def setup(app: Sphinx) -> dict[str, Any]:
    # after the theme's add_launch_buttons (priority 501), before the page is written
    app.connect("html-page-context", drop_launch_buttons, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
