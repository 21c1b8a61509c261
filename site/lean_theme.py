"""Sphinx extension: what every page loads before its own content stays small.

pydata-sphinx-theme (under sphinx-book-theme) adds to every page Font Awesome's JavaScript
(``_static/scripts/fontawesome.js``, 1.5 MB, which turns each ``<i class="fa-...">`` into an
SVG), the full Font Awesome stylesheet (about 1,900 icon rules, 90 kB, inside the theme's CSS)
with its three fonts (300 kB), and the search index with its tools on every page (80 kB), which
only the search page reads while search-as-you-type is off (the theme's default). After the
build this:

* removes the ``fontawesome.js`` script from every page and the file from the site: the ``<i>``
  icons are drawn by the theme's stylesheet with the icon fonts instead, as Font Awesome's CSS
  does without its JavaScript;
* keeps, in the theme's stylesheet, only the icon rules of the icons that the pages and the
  theme's scripts use, and subsets the three fonts to those icons and to the ones the theme's
  own rules name (admonitions, external links, ...), as WOFF files of a few kB;
* removes the search scripts from every page but ``search.html``;
* removes sphinx-design's tab script (``design-tabs.js``, 7 kB) from every page without a tab set.

Loaded from ``_config.yml``: ``sphinx.local_extensions: {lean_theme: site/}``. The page weight is
checked by tests/browser/test_page_weight.py.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

THEME_CSS = Path("_static/styles/pydata-sphinx-theme.css")
FONTS = Path("_static/vendor/fontawesome/webfonts")
DROPPED = ["_static/scripts/fontawesome.js", "_static/scripts/fontawesome.js.map",
           "_static/scripts/fontawesome.js.LICENSE.txt"]
SEARCH_SCRIPTS = ("_static/searchtools.js", "_static/language_data.js", "searchindex.js")
TABS_SCRIPT = "_static/design-tabs.js"
#: One icon rule of Font Awesome's stylesheet: ``.fa-bars:before,.fa-navicon:before{content:"\f0c9"}``.
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"\\([0-9a-f]+)"\}')
#: A codepoint of the icon fonts' private use area in a CSS string: "\f0c9", "\e521".
CODEPOINT = re.compile(r'"\\([ef][0-9a-f]{3})"')
FONT_FACE = re.compile(r'src:url\(\.\./vendor/fontawesome/webfonts/(fa-[a-z]+-\d+)\.woff2\) '
                       r'format\("woff2"\),url\(\.\./vendor/fontawesome/webfonts/\1\.ttf\) '
                       r'format\("truetype"\)')


def _script(path: str) -> re.Pattern:
    return re.compile(r'\s*<script[^>]*\ssrc="[^"]*' + re.escape(path) + r'[^"]*"[^>]*></script>')


def _icons_used(outdir: Path) -> set[str]:
    """Every ``fa-NAME`` written in a page or in one of the theme's scripts (a superset)."""
    texts = [p.read_text(encoding="utf-8") for p in outdir.rglob("*.html")
             if not p.relative_to(outdir).parts[0].startswith("_")]
    texts += [p.read_text(encoding="utf-8", errors="replace")
              for p in (outdir / "_static").rglob("*.js") if "fontawesome" not in p.name]
    return {name for text in texts for name in re.findall(r"\bfa-[a-z0-9-]+", text)}


def _slim_css(css: str, used: set[str]) -> tuple[str, set[int]]:
    """The stylesheet with only the used icon rules; the codepoints it still names."""
    def keep(match: re.Match) -> str:
        names = re.findall(r"\.(fa-[a-z0-9-]+):before", match.group(1))
        return match.group(0) if used.intersection(names) else ""

    slim = ICON_RULE.sub(keep, css)
    return slim, {int(c, 16) for c in CODEPOINT.findall(slim)}


def _subset(ttf: Path, codepoints: set[int], out: Path) -> None:
    from fontTools import subset  # matplotlib's dependency; only this build step needs it

    options = subset.Options()
    options.flavor = "woff"
    font = subset.load_font(str(ttf), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints & set(font.getBestCmap())))
    subsetter.subset(font)
    subset.save_font(font, str(out), options)


def slim_site(outdir: Path) -> dict[str, int]:
    """Apply the four changes above to a built site; return the bytes before and after."""
    css_path = outdir / THEME_CSS
    css = css_path.read_text(encoding="utf-8")
    other_css = "".join(p.read_text(encoding="utf-8") for p in (outdir / "_static").rglob("*.css")
                        if p != css_path)
    slim, codepoints = _slim_css(css, _icons_used(outdir))
    codepoints |= {int(c, 16) for c in CODEPOINT.findall(other_css)}
    sizes = {"css_before": len(css.encode()), "fonts_before": 0, "fonts_after": 0}
    for name in sorted(set(FONT_FACE.findall(slim))):
        ttf, woff = outdir / FONTS / f"{name}.ttf", outdir / FONTS / f"{name}.woff"
        _subset(ttf, codepoints, woff)
        sizes["fonts_before"] += (outdir / FONTS / f"{name}.woff2").stat().st_size
        sizes["fonts_after"] += woff.stat().st_size
        for suffix in (".ttf", ".woff2"):
            (outdir / FONTS / f"{name}{suffix}").unlink()
    slim = FONT_FACE.sub(r'src:url(../vendor/fontawesome/webfonts/\1.woff) format("woff")', slim)
    css_path.write_text(slim, encoding="utf-8")
    sizes["css_after"] = len(slim.encode())
    for name in DROPPED:
        (outdir / name).unlink(missing_ok=True)
    fontawesome, search = _script("_static/scripts/fontawesome.js"), [_script(s) for s in SEARCH_SCRIPTS]
    tabs = _script(TABS_SCRIPT)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0].startswith("_"):
            continue  # the theme's template snippets, not pages
        text = page.read_text(encoding="utf-8")
        new = fontawesome.sub("", text)
        if page != outdir / "search.html":
            for script in search:
                new = script.sub("", new)
        if "sd-tab-set" not in new:  # sphinx-design's tabs: the script only they need
            new = tabs.sub("", new)
        if new != text:
            page.write_text(new, encoding="utf-8")
    return sizes


def on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    sizes = slim_site(outdir)
    logger.info("lean_theme: fontawesome.js dropped; theme CSS %.0f -> %.0f kB; icon fonts "
                "%.0f -> %.0f kB", sizes["css_before"] / 1e3, sizes["css_after"] / 1e3,
                sizes["fonts_before"] / 1e3, sizes["fonts_after"] / 1e3)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
