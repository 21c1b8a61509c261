"""Sphinx extension: every page of the book loads its assets from the site itself, never a CDN.

Notebook outputs can carry links to a CDN: matplotlib's ``FuncAnimation.to_jshtml()`` player
links Font Awesome 4 from maxcdn for its buttons. The book has no such player any more (an
interactive figure is ``illustrated.book.interactive``), so this warns about every page asset
(script, stylesheet, image, frame) that would come from another host, naming the player when it
is one. The book is built with ``-W``, so such an asset fails the build with the page's name.

Loaded from ``_config.yml``: ``sphinx.local_extensions: {offline_html: site/}``.
"""
from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: What a known CDN address means, for the warning.
KNOWN = {"font-awesome/4.4.0": "a matplotlib to_jshtml() player: use illustrated.book.interactive"}

#: An element the browser fetches by itself, with an absolute (or protocol-relative) address.
EXTERNAL_ASSET = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\s(?:src|href|data)\s*=\s*"
    r"[\"']?((?:https?:)?//[^\"'\s>]+)", re.IGNORECASE)


def _external(uri: str) -> bool:
    return uri.startswith(("http://", "https://", "//"))


def check_page(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                  doctree: Any) -> None:
    """Warn about every asset of the page from another host."""
    location = pagename if pagename in app.env.found_docs else None
    body = context.get("body") or ""
    external = [m.group(1) for m in EXTERNAL_ASSET.finditer(body)]
    external += [str(getattr(f, "filename", f)) for f in context.get("script_files", [])
                 + context.get("css_files", []) if _external(str(getattr(f, "filename", f) or ""))]
    for uri in dict.fromkeys(external):
        what = next((f" ({why})" for key, why in KNOWN.items() if key in uri), "")
        logger.warning("page %r loads %s%s from another host; the book must work offline: "
                       "vendor it (site/build.mjs) or drop it", pagename, uri, what,
                       location=location, type="offline_html", subtype="external")


def setup(app: Sphinx) -> dict[str, Any]:
    # After the other handlers (myst-nb adds the widget scripts, sphinx.ext.mathjax MathJax).
    app.connect("html-page-context", check_page, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
