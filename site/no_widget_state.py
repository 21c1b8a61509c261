"""Sphinx extension: no page carries Jupyter widget state, and none shows a widget view.

A Python callback cannot run in a static page. Every interactive figure of the book
(``illustrated.book.interactive``) therefore displays two versions of itself: the ipywidget for
Jupyter and Colab, and the page's own HTML (precomputed frames, or a live widget that
``site/js/`` computes), which ``nb_mime_priority_overrides`` in ``_config.yml`` picks for the
html build. The site loads no Jupyter widget manager
(``nb_ipywidgets_js: {}`` in ``_config.yml``). Yet the executed notebook still saves the state
of every widget its kernel made (nbclient's ``store_widget_state``, which myst-nb does not let a
book switch off), and myst-nb writes it into the page as a
``<script type="application/vnd.jupyter.widget-state+json">``: 50 to 150 kB of JSON per chapter
that nothing reads. This extension

* drops that script from every page (``html-page-context``, after myst-nb has added it), and
* warns, with the page's name, about any page that would show a widget view (an ipywidget cell
  whose output is not removed): without a widget manager the reader would see an empty output.
  The book is built with ``-W``, so this fails the build: draw it through
  ``illustrated.book.interactive``, or tag the cell ``remove-output``.

Loaded from ``_config.yml``: ``sphinx.local_extensions: {no_widget_state: site/}``.
"""
from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def drop_widget_state(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                      doctree: Any) -> None:
    """Remove the saved widget state from the page's scripts; warn about any widget view."""
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts
                      if (getattr(js, "attributes", None) or {}).get("type") != WIDGET_STATE]
    if f'<script type="{WIDGET_VIEW}"' in (context.get("body") or ""):
        location = pagename if pagename in app.env.found_docs else None
        logger.warning("page %r shows an ipywidget, which the static site cannot render (it "
                       "loads no widget manager): draw it with illustrated.book.interactive or "
                       "tag its cell remove-output", pagename,
                       location=location, type="no_widget_state", subtype="view")


def setup(app: Sphinx) -> dict[str, Any]:
    # After myst-nb's handler (default priority 500), which adds the state script to the page.
    app.connect("html-page-context", drop_widget_state, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
