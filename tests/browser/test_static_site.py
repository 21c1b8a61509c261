"""The built HTML itself (no browser needed, only `make book`): no CDN anywhere, every internal
link and anchor resolves, the launch buttons point where _config.yml says, the vendored scripts
are wired into the pages that need them, every image has alt text that says what it shows, and
no page carries a Jupyter widget manager, widget state or a widget view."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from builtbook import book_config, html_path, source_of, toc_pages

#: Text that must appear in no built page: addresses of CDNs.
CDN = re.compile(r"https?://cdn\b|//cdn\.|unpkg\.com|jsdelivr|cdnjs|bootstrapcdn|maxcdn|"
                 r"fonts\.googleapis|fonts\.gstatic|ajax\.googleapis", re.IGNORECASE)
#: Attributes whose URL the browser fetches by itself (not links a reader follows).
FETCHED = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"),
           ("source", "src"), ("video", "src"), ("audio", "src"), ("embed", "src"),
           ("object", "data"), ("video", "poster")}
NOT_FETCHED_LINK_RELS = {"canonical", "alternate", "author", "license", "help", "search", "next",
                         "prev", "index"}


class Page(HTMLParser):
    """Ids, links and fetched resources of one HTML page."""

    def __init__(self, path: Path):
        super().__init__(convert_charrefs=True)
        self.path = path
        self.ids: set[str] = set()
        self.links: list[tuple[str, str, str]] = []      # (tag, attribute, url)
        self.fetched: list[tuple[str, str]] = []         # (tag, url)
        self.scripts: list[str] = []                     # script src in document order
        self.images: list[dict[str, str | None]] = []    # every <img>'s attributes
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for attribute in ("href", "src", "data", "poster"):
            url = attrs.get(attribute)
            if url is None:
                continue
            self.links.append((tag, attribute, url))
            rel = set((attrs.get("rel") or "").lower().split())
            if (tag, attribute) in FETCHED and not (tag == "link" and rel & NOT_FETCHED_LINK_RELS):
                self.fetched.append((tag, url))
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        if tag == "img":
            self.images.append(attrs)


@pytest.fixture(scope="module")
def pages(site) -> dict[Path, Page]:
    """Every built page (not the theme's template snippets under _static/, nor _vendor/...)."""
    return {path: Page(path) for path in sorted(site.rglob("*.html"))
            if not path.relative_to(site).parts[0].startswith("_")}


@lru_cache(maxsize=None)
def _ids(path: Path) -> frozenset[str]:
    return frozenset(Page(path).ids)


def _external(url: str) -> bool:
    """An address on another host (a data: URI, such as an interactive figure's pictures, is not)."""
    return urlsplit(url).scheme not in ("", "data") or url.startswith("//")


def test_no_cdn_address_in_any_page(site, pages):
    found = {}
    for path in pages:
        hits = sorted(set(m.group(0) for m in CDN.finditer(path.read_text(encoding="utf-8"))))
        if hits:
            found[str(path.relative_to(site))] = hits
    assert not found, f"CDN addresses in built pages (the site must need no CDN): {found}"


def test_pages_fetch_nothing_from_another_host(site, pages):
    found = {str(p.relative_to(site)): [u for _, u in page.fetched if _external(u)]
             for p, page in pages.items()}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"pages that fetch from other hosts: {found}"


def test_internal_links_and_anchors_resolve(site, pages):
    broken = []
    for path, page in pages.items():
        here = path.relative_to(site).as_posix()
        for tag, attribute, url in page.links:
            if _external(url) or url.startswith(("mailto:", "javascript:", "data:", "tel:")):
                continue
            if url in ("", "#"):
                continue
            target = urlsplit(urljoin("http://site/" + here, url))
            file = site / unquote(target.path.lstrip("/"))
            if target.path.endswith("/"):
                file = file / "index.html"
            where = f"{here}: <{tag} {attribute}={url!r}>"
            if not file.exists():
                broken.append(f"{where}: no file {file.relative_to(site)}")
            elif target.fragment and file.suffix == ".html":
                if unquote(target.fragment) not in _ids(file):
                    broken.append(f"{where}: no id {target.fragment!r} in {file.relative_to(site)}")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def _markdown_table_headers(notebook: Path) -> list[list[str]]:
    """The header cells of every Markdown table that the notebook's saved outputs display."""
    headers = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/markdown", ""))
            lines = text.splitlines()
            for first, second in zip(lines, lines[1:]):
                if first.startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", second.strip()):
                    headers.append([c.strip() for c in first.strip().strip("|").split("|")])
    return headers


@pytest.mark.parametrize("page", [p for p in toc_pages()
                                  if (source_of(p) or Path()).suffix == ".ipynb"])
def test_markdown_tables_in_outputs_render_as_tables(site, page):
    """A table printed with display(Markdown(...)) is an HTML table in the page, not pipes."""
    headers = _markdown_table_headers(source_of(page))
    html = html_path(page).read_text(encoding="utf-8")
    assert "|---|" not in html, f"{page}: a Markdown table was left as text"
    tables = re.findall(r"<table.*?</table>", html, flags=re.S)
    for header in headers:
        assert any(all(f">{cell}<" in t for cell in header) for t in tables), (
            f"{page}: no HTML table with the header {header}")


def _repository() -> tuple[str, str]:
    config = book_config()
    return config["repository"]["url"].rstrip("/"), config["repository"].get("branch", "main")


@pytest.mark.parametrize("page", toc_pages())
def test_launch_download_and_repository_buttons(site, page):
    html = html_path(page).read_text(encoding="utf-8")
    url, branch = _repository()
    assert f'href="{url}"' in html, f"{page}: no repository button to {url}"
    source = source_of(page)
    if source is not None and source.suffix == ".ipynb":
        github = urlsplit(url).path.strip("/")
        colab = (f"https://colab.research.google.com/github/{github}/blob/{branch}/"
                 f"{source.relative_to(source.parents[len(Path(page).parts) - 1]).as_posix()}")
        assert colab in html, f"{page}: no Colab button to {colab}"
        download = f"_sources/{page}.ipynb"
        assert re.search(rf'href="(\.\./)*{re.escape(download)}"', html), (
            f"{page}: no download button for the notebook ({download})")
        assert (site / download).exists()
    else:  # Colab opens notebooks only: no launch button to a .md page (site/notebook_launch.py)
        assert "colab.research.google.com" not in html, f"{page}: a Colab button to a non-notebook"


#: The Jupyter widget manager and what it needs, which the site no longer loads: no page shows
#: an ipywidget (_config.yml: nb_ipywidgets_js: {}; site/no_widget_state.py).
WIDGET_MANAGER = re.compile(r"(^|/)(require(\.min)?\.js|embed-amd\.js|widgets-bootstrap\.js)$|html-manager")
WIDGET_MIME = re.compile(r"application/vnd\.jupyter\.widget-(state|view)\+json")


def test_vendored_scripts_are_wired_where_needed(site, pages):
    """Pages with math load MathJax from _vendor/, and no page any other script from there."""
    problems = []
    for path, page in pages.items():
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(site))
        scripts = [urlsplit(s).path for s in page.scripts]
        vendored = [s.split("_vendor/", 1)[1] for s in scripts if "_vendor/" in s]
        if 'class="math' in text and "mathjax/startup.js" not in vendored:
            problems.append(f"{name}: math but no _vendor/mathjax/startup.js")
        if [s for s in vendored if s != "mathjax/startup.js"]:
            problems.append(f"{name}: unexpected _vendor/ scripts {vendored}")
        if any("_static/_vendor" in s or s.startswith("_vendor") and "/" in name for s in scripts):
            problems.append(f"{name}: badly resolved _vendor path in {scripts}")
    assert not problems, "\n".join(problems)


def test_no_page_loads_a_jupyter_widget_manager(site, pages):
    """No require.js, widget manager or its bootstrap in any page (they were 3.7 MB of scripts on
    every chapter), no saved widget state (50-150 kB of JSON per chapter that nothing reads) and
    no widget view, which without a manager would be an empty output."""
    problems = []
    for path, page in pages.items():
        name = str(path.relative_to(site))
        text = path.read_text(encoding="utf-8")
        loaded = [s for s in page.scripts if WIDGET_MANAGER.search(urlsplit(s).path)]
        if loaded:
            problems.append(f"{name}: loads {loaded}")
        found = sorted({m.group(0) for m in WIDGET_MIME.finditer(text)})
        if found:
            problems.append(f"{name}: carries {found}")
    assert pages, "no built page"
    assert not problems, "\n".join(problems)
    # (MathJax has a require.js of its own, the TeX \require extension: not this one.)
    left = [name for name in ("require.js", "widgets-bootstrap.js", "html-manager")
            if (site / "_vendor" / name).exists()]
    assert not left, f"_vendor/ still holds the widget manager's {left} (site/build.mjs)"


def test_vendored_assets_were_built(site):
    versions = site / "_vendor" / "VERSIONS.json"
    assert versions.exists(), "no _vendor/ in the site: `make book` runs site/build.mjs first"
    assert not (site / "_static" / "_vendor").exists(), "_vendor must not be under _static/"


#: An alt text that is a file name or path ("_images/fig.png", "output_12_0.png"), not words.
PATH_LIKE = re.compile(r"\S*\.(png|jpe?g|gif|svg|webp)|\S*/\S*", re.IGNORECASE)


def test_every_image_has_alt_text_that_says_what_it_shows(site, pages):
    """Issue 20: every figure's alt text was its file path, the players had none."""
    problems = []
    for path, page in pages.items():
        for image in page.images:
            alt = (image.get("alt") or "").strip()
            if len(alt) < 3 or PATH_LIKE.fullmatch(alt):
                problems.append(f"{path.relative_to(site)}: <img src={(image.get('src') or '')[:60]!r}> "
                                f"alt={image.get('alt')!r}")
    assert not problems, f"{len(problems)} images without a description:\n" + "\n".join(problems[:20])


def test_pages_carry_no_icon_javascript_and_small_icon_fonts(site, pages):
    """site/lean_theme.py: no page loads Font Awesome's JavaScript (1.5 MB), or, but the search
    page, the search index, or, without tabs, sphinx-design's tab script; the icon fonts hold
    only the icons the pages use."""
    problems = []
    for path, page in pages.items():
        name = str(path.relative_to(site))
        scripts = [urlsplit(s).path for s in page.scripts]
        if any(s.endswith("fontawesome.js") for s in scripts):
            problems.append(f"{name}: loads fontawesome.js")
        if name != "search.html" and any(s.endswith("searchindex.js") for s in scripts):
            problems.append(f"{name}: loads the search index")
        if "sd-tab-set" not in path.read_text(encoding="utf-8") and any(
                s.endswith("design-tabs.js") for s in scripts):
            problems.append(f"{name}: loads sphinx-design's tab script without a tab set")
    fonts = {f.name: f.stat().st_size for f in (site / "_static/vendor/fontawesome/webfonts").iterdir()}
    assert fonts and all(n.endswith(".woff") and size < 20_000 for n, size in fonts.items()), fonts
    assert not (site / "_static/scripts/fontawesome.js").exists()
    assert not problems, "\n".join(problems)
