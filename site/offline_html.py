"""Sphinx extension: every page of the book loads its assets from the site itself, never a CDN.

Notebook outputs can carry links to a CDN: matplotlib's ``FuncAnimation.to_jshtml()`` player
links Font Awesome 4 from maxcdn for its buttons. This extension points each such known link at
the copy under ``_vendor/`` (installed from the npm registry by ``site/build.mjs``) and warns
about any other page asset (script, stylesheet, image, frame) that would come from another host.
The book is built with ``-W``, so such an asset fails the build with the page's name.

Loaded from ``_config.yml``: ``sphinx.local_extensions: {offline_html: site/}``.
"""
from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: CDN address -> path of the vendored copy, relative to the site root.
VENDORED = {
    "https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/font-awesome.min.css":
        "_vendor/font-awesome/css/font-awesome.min.css",
}

#: An element the browser fetches by itself, with an absolute (or protocol-relative) address.
EXTERNAL_ASSET = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\s(?:src|href|data)\s*=\s*"
    r"[\"']?((?:https?:)?//[^\"'\s>]+)", re.IGNORECASE)


def _external(uri: str) -> bool:
    return uri.startswith(("http://", "https://", "//"))


def localise_page(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                  doctree: Any) -> None:
    """Point known CDN links in the page body at ``_vendor/``; warn about any other one."""
    location = pagename if pagename in app.env.found_docs else None
    body = context.get("body") or ""
    for url, local in VENDORED.items():
        if url in body:
            body = body.replace(url, context["pathto"](local, 1))
    if body:
        context["body"] = body
    external = [m.group(1) for m in EXTERNAL_ASSET.finditer(body)]
    external += [str(getattr(f, "filename", f)) for f in context.get("script_files", [])
                 + context.get("css_files", []) if _external(str(getattr(f, "filename", f) or ""))]
    for uri in dict.fromkeys(external):
        logger.warning("page %r loads %s from another host; the book must work offline: "
                       "vendor it (site/build.mjs, site/offline_html.py) or drop it",
                       pagename, uri, location=location, type="offline_html", subtype="external")


def setup(app: Sphinx) -> dict[str, Any]:
    # After the other handlers (myst-nb adds the widget scripts, sphinx.ext.mathjax MathJax).
    app.connect("html-page-context", localise_page, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
