"""Sphinx extension: the pictures of the book's figures as files of the site, not data: URIs.

``illustrated.book.interactive`` writes every picture (each frame of an interactive figure, for
the desktop column and for a phone's) as a data: URI, so that a notebook output stands alone in
Jupyter and Colab. In the built book each becomes ``_images/<sha256>.png``: a page's HTML stays
small, the browser fetches only the drawing its ``<picture>`` picks (the phone one or the
desktop one), the same picture is fetched once, and the link around a figure opens it full size
(browsers refuse to open a data: URI from a page).

Loaded from ``_config.yml``: ``sphinx.local_extensions: {picture_files: site/}``.
"""
from __future__ import annotations

import base64
import hashlib
import posixpath
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def to_files(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Write each data: URI of the page's raw HTML to _images/ and link the file instead."""
    if app.builder.format != "html":
        return
    folder = Path(app.outdir) / "_images"
    prefix = posixpath.relpath("_images", posixpath.dirname(docname) or ".")

    def file(match: re.Match) -> str:
        data = base64.b64decode(match.group(1))
        name = f"{hashlib.sha256(data).hexdigest()}.png"
        if not (folder / name).exists():
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        return f"{prefix}/{name}"

    for node in list(doctree.findall(nodes.raw)):
        if "html" in node.get("format", "").split() and "data:image/png" in node.astext():
            node[:] = [nodes.Text(DATA_URI.sub(file, node.astext()))]


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-resolved", to_files)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
