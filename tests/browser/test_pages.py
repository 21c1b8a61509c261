"""Every page of the book in headless Chromium, with the network cut off.

Each page (from _toc.yml) is loaded once from the local server; then the tests check what a
reader would see: no request left 127.0.0.1, none failed, no JavaScript error (but the listed
harmless ones), math typeset by MathJax, the post's figures present under their names with
captions, every image loaded, no ipywidget and no Jupyter widget manager (no page shows an
ipywidget: their cells are tagged remove-output and the site loads no manager), every kernel-free
player (matplotlib `to_jshtml`) changing its frame when its slider moves; no math left as plain
text with ^ or _ outside code; no token such as <bos> swallowed as an HTML tag; every figure's
smallest text legible (>= 9 px) at the width the page shows it; a full-page screenshot of each
page goes to _build/screenshots/<page>.png. Plus: the search box finds a chapter.
"""
from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from builtbook import (KNOWN_HARMLESS_CONSOLE_ERRORS, LOCAL_SCHEMES, chapter_number,
                       figure_names, html_path, toc_pages)
from pages import MIN_TEXT_PX, figure_text_px

PAGES = toc_pages()
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: Plain-text math in prose (JavaScript regex, flags "gu"): a letter, digit or closing bracket,
#: then ^ or _, then what would be its superscript or subscript; W^Q, d_k, e^14, (11/6)^α.
RAW_MATH = r"[\p{L}\p{N})\]]+[\^_][\p{L}\p{N}({\-−][\p{L}\p{N}{}]*"
MAX_SCREENSHOT_HEIGHT = 16000  # px; Chromium cannot capture much taller pages in one image


@dataclass
class PageReport:
    page: str
    url: str
    external_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    js_errors: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    players: list[dict] = field(default_factory=list)
    screenshot: Path | None = None

    def __repr__(self) -> str:  # keeps pytest's assertion messages short
        return f"PageReport({self.page!r})"


def _wait(driver, script: str, timeout: float, interval: float = 0.2):
    """Poll ``script`` (returning a truthy value when done) until ``timeout``; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def _harmless(message: str) -> bool:
    return any(re.search(pattern, message) for pattern in KNOWN_HARMLESS_CONSOLE_ERRORS)


IMAGES_DONE = "return Array.from(document.images).every(i => i.complete);"

MATHJAX_DONE = """
const done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done('no MathJax'); return; }
MathJax.startup.promise.then(() => done('ok'), e => done('MathJax failed: ' + e));
"""

FACTS = f"""
const figureIds = arguments[0];
const RAW_MATH = new RegExp(arguments[1], 'gu');
const text = el => (el ? el.textContent.replace(/\\s+/g, ' ').trim() : '');
// Text a reader sees that still holds TeX delimiters (code and MathJax output excluded).
const rawTex = [];
const walker = document.createTreeWalker(document.querySelector('main') || document.body,
                                         NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {{
  if (n.parentElement.closest('pre, code, script, style, textarea, mjx-container, .highlight'))
    continue;
  if (/\\\\\\(|\\\\\\[|\\$\\$/.test(n.nodeValue)) rawTex.push(n.nodeValue.trim().slice(0, 80));
}}
// What the reader reads: the article (not the navigation), outside code, math and scripts.
const article = document.querySelector('article') || document.querySelector('main') || document.body;
// Widget controls are labelled with their keyword arguments (d_k, n_heads): code, not prose.
const NOT_PROSE = 'pre, code, kbd, samp, script, style, textarea, mjx-container, .math, ' +
                  '.highlight, svg, .widget-subarea, .il-widget label';
// Raw math: x^y or x_y left as plain text (W^Q, d_k, e^14, (11/6)^α) instead of typeset math;
// identifiers such as beam_size belong in code, which is excluded.
const rawMath = [];
const proseWalker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
for (let n = proseWalker.nextNode(); n; n = proseWalker.nextNode()) {{
  if (n.parentElement.closest(NOT_PROSE)) continue;
  const found = n.nodeValue.match(RAW_MATH);
  if (found) rawMath.push(found.map(f => f.trim()).join(' ') + '  in: ' +
                          text(n.parentElement).slice(0, 100));
}}
// A token such as <bos> written unescaped in Markdown, a caption or an HTML output is taken
// for a tag: the browser makes it an element it does not know, and the reader never sees it.
const lostTokens = Array.from(article.querySelectorAll('*'))
    .filter(e => e instanceof HTMLUnknownElement)
    .map(e => '<' + e.tagName.toLowerCase() + '> in: ' + text(e.parentElement).slice(0, 100));
const views = Array.from(document.querySelectorAll('script[type="{WIDGET_VIEW}"]'));
return {{
  rawMath: rawMath,
  lostTokens: lostTokens,
  math: document.querySelectorAll('.math').length,
  mathUntypeset: Array.from(document.querySelectorAll('.math'))
      .filter(m => !m.querySelector('mjx-container')).map(m => text(m).slice(0, 80)),
  mjx: document.querySelectorAll('mjx-container').length,
  mathErrors: Array.from(document.querySelectorAll('mjx-merror'))
      .map(e => e.getAttribute('data-mjx-error') || text(e)),
  rawTex: rawTex,
  figures: figureIds.map(id => {{
    const el = document.getElementById(id);
    const fig = el && (el.tagName === 'FIGURE' ? el : el.querySelector('figure'));
    return {{id: id, found: !!el, tag: el ? el.tagName.toLowerCase() : null,
             caption: fig ? text(fig.querySelector('figcaption')) : null}};
  }}),
  images: Array.from(document.images).map(i => ({{
    src: (i.getAttribute('src') || '').slice(0, 100), complete: i.complete,
    width: i.naturalWidth}})),
  // Every picture of the article with the width it is shown at; players' frames (data URIs)
  // are read whole, to find their resolution.
  figureImages: Array.from(article.querySelectorAll('img')).map(i => {{
    const figure = i.closest('figure'), src = i.getAttribute('src') || '';
    return {{name: figure && figure.id ? figure.id : (i.closest('.animation') ? 'player' : 'output'),
             src: src.startsWith('data:') ? src : i.src, natural: i.naturalWidth,
             shown: i.getBoundingClientRect().width}};
  }}),
  // Text outputs (printed text, shown source code, HTML tables) wider than the column: their
  // right part is cut off or hidden behind a sideways scroll bar (issue 13).
  scrolledOutputs: Array.from(article.querySelectorAll('.cell_output pre, .cell_output table'))
      .filter(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      .map(e => ({{text: text(e).slice(0, 60), scroll: e.scrollWidth, shown: e.clientWidth}})),
  widgetViews: views.length,
  // What ipywidgets would leave in the page: their views' areas, and the AMD loader and widget
  // manager the site no longer loads.
  widgetAreas: document.querySelectorAll('.widget-subarea, .jupyter-widgets').length,
  widgetManager: ['requirejs', 'define'].filter(name => typeof window[name] !== 'undefined'),
  players: Array.from(document.querySelectorAll('.animation input[type=range]')).map(s => s.id),
  pageErrors: window.__pageErrors || [],
}};
"""


def _screenshot(driver, path: Path) -> Path:
    """A full-page PNG (up to MAX_SCREENSHOT_HEIGHT px tall): the viewport is made as tall as
    the page for the shot (capturing beyond the viewport instead shifts the theme's layout)."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    width = driver.execute_script("return window.innerWidth;")
    height = int(min(size["height"], MAX_SCREENSHOT_HEIGHT))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        time.sleep(0.3)  # one layout at the new size
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def _move_players(driver, slider_ids: list[str]) -> list[dict]:
    """Move each player's slider to its last frame with the keyboard; did its frame change?"""
    from selenium.webdriver.common.keys import Keys

    results = []
    for slider_id in slider_ids:
        slider = driver.find_element("id", slider_id)
        frame = f"""return document.getElementById('{slider_id}').closest('.animation')
                        .querySelector('img').getAttribute('src');"""
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
        lo, hi = (int(float(slider.get_attribute(a))) for a in ("min", "max"))
        driver.execute_script(f"arguments[0].value = {lo};"
                              "arguments[0].dispatchEvent(new Event('input'));", slider)
        before = driver.execute_script(frame)
        slider.send_keys(Keys.END)  # a real key press on the range input: its oninput moves
        deadline = time.monotonic() + 5
        after = driver.execute_script(frame)
        while after == before and time.monotonic() < deadline:
            time.sleep(0.1)
            after = driver.execute_script(frame)
        results.append({"id": slider_id, "frames": hi - lo + 1,
                        "value": int(float(slider.get_attribute("value"))), "max": hi,
                        "changed": bool(before) and bool(after) and before != after})
    return results


def _requests(performance_log: list[dict], base_url: str) -> tuple[list[str], list[str]]:
    """External request URLs, and failed ones (with why), from Chromium's performance log."""
    urls: dict[str, str] = {}
    external, failed = [], []
    for entry in performance_log:
        message = json.loads(entry["message"])["message"]
        method, params = message["method"], message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            if not url.startswith(base_url + "/") and not url.startswith(LOCAL_SCHEMES):
                external.append(url)
        elif method == "Network.responseReceived":
            response = params["response"]
            if response["status"] >= 400 and not _harmless(f"{response['url']} - Failed to load resource"):
                failed.append(f"{response['url']}: HTTP {response['status']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            url = urls.get(params["requestId"], "?")
            if not _harmless(f"{url} - Failed to load resource"):
                failed.append(f"{url}: {params.get('errorText')}")
    return list(dict.fromkeys(external)), list(dict.fromkeys(failed))


_reports: dict[str, PageReport] = {}


@pytest.fixture
def report(request, browser, server, screenshots) -> PageReport:
    """The page's report: loaded once per page, then shared by its tests."""
    page = request.node.callspec.params["page"]
    if page in _reports:
        return _reports[page]
    driver = browser
    url = f"{server.base_url}/{page}.html"
    driver.get_log("browser"), driver.get_log("performance")
    served_before = len(server.requests)
    driver.get(url)
    _wait(driver, "return document.readyState === 'complete';", 30)
    mathjax = driver.execute_async_script(MATHJAX_DONE)
    _wait(driver, IMAGES_DONE, 15)
    time.sleep(0.5)  # let late scripts (theme, fonts) settle and report
    figure_ids = figure_names().get(chapter_number(page) or "", [])
    facts = driver.execute_script(FACTS, figure_ids, RAW_MATH)
    facts["mathjax"] = mathjax
    shot = _screenshot(driver, screenshots / f"{Path(page).name}.png")
    players = _move_players(driver, facts["players"])
    facts["pageErrors"] += driver.execute_script("return window.__pageErrors || [];")
    external, failed = _requests(driver.get_log("performance"), server.base_url)
    failed += [f"{server.base_url}{path}: HTTP {status} (server log)"
               for path, status in server.requests[served_before:]
               if status >= 400 and not _harmless(f"{path} - Failed to load resource")]
    js_errors = [e["message"] for e in driver.get_log("browser")
                 if e["level"] == "SEVERE" and e.get("source") != "network"
                 and not _harmless(e["message"])]
    js_errors += [e for e in dict.fromkeys(facts["pageErrors"]) if not _harmless(e)]
    _reports[page] = PageReport(page, url, external, failed, js_errors, facts, players, shot)
    return _reports[page]


pages = pytest.mark.parametrize("page", PAGES)


@pages
def test_no_request_leaves_the_machine(page, report):
    assert not report.external_requests, (
        f"{page}: the page tried to load from other hosts (the book must need no CDN): "
        f"{report.external_requests}")


@pages
def test_no_failed_request(page, report):
    assert not report.failed_requests, f"{page}: failed requests: {report.failed_requests}"


@pages
def test_no_javascript_error(page, report):
    assert not report.js_errors, (
        f"{page}: JavaScript errors (known-harmless ones are listed in tests/browser/conftest.py): "
        f"{report.js_errors}")


@pages
def test_math_is_typeset(page, report):
    facts = report.facts
    if facts["math"] == 0:
        assert not facts["rawTex"], f"{page}: TeX left as text: {facts['rawTex']}"
        return
    assert facts["mathjax"] == "ok", f"{page}: MathJax did not start: {facts['mathjax']}"
    assert facts["mjx"] > 0, f"{page}: no MathJax output (mjx-container) on a page with math"
    assert not facts["mathUntypeset"], f"{page}: math not typeset: {facts['mathUntypeset']}"
    assert not facts["mathErrors"], f"{page}: TeX errors: {facts['mathErrors']}"
    assert not facts["rawTex"], f"{page}: TeX left as text: {facts['rawTex']}"


@pages
def test_no_raw_math_in_prose(page, report):
    """Math is typeset (MathJax) or code, never plain text with ^ or _ (issue 13)."""
    assert not report.facts["rawMath"], (
        f"{page}: math written as plain text (typeset it with $...$, or mark code with "
        f"backticks): {report.facts['rawMath']}")


@pages
def test_no_token_is_taken_for_an_html_tag(page, report):
    """<bos>, <eos>, <pad>, <unk> shown in prose, captions and HTML outputs reach the reader."""
    assert not report.facts["lostTokens"], (
        f"{page}: tokens written unescaped became unknown HTML elements, invisible to the "
        f"reader (write them as code or escape < and >): {report.facts['lostTokens']}")


@pages
def test_figure_text_is_legible_at_the_content_width(page, report):
    """No figure is drawn so much wider than the page shows it that its smallest text (the
    figure kit's MIN_FONT_PT) renders below MIN_TEXT_PX: every figure is drawn for the content
    width (book.kit.MAX_FIGURE_WIDTH_IN)."""
    sizes = figure_text_px(page, report.facts["figureImages"])
    small = [s for s in sizes if s["text_px"] < MIN_TEXT_PX]
    assert not small, (f"{page}: figures whose text renders below {MIN_TEXT_PX} px at the "
                       f"content width (draw them narrower or with larger text): {small}")


@pages
def test_no_text_output_is_clipped(page, report):
    """Every line of a cell's text output can be read at 1280 px without scrolling sideways:
    long lines wrap at the content column (_static/outputs.css), none runs out of view."""
    scrolled = report.facts["scrolledOutputs"]
    assert not scrolled, (f"{page}: text outputs wider than the content column (their right "
                          f"part is hidden): {scrolled}")


@pages
def test_post_figures_are_named_and_captioned(page, report):
    problems = []
    for figure in report.facts["figures"]:
        if not figure["found"]:
            problems.append(f"{figure['id']}: no element with this id")
        elif figure["caption"] is None:
            problems.append(f"{figure['id']}: a <{figure['tag']}>, not a figure")
        elif not figure["caption"]:
            problems.append(f"{figure['id']}: figure without a caption")
    assert not problems, f"{page}: post figures (tests/browser/figure_names.txt): {problems}"


@pages
def test_every_image_loads(page, report):
    broken = [i for i in report.facts["images"] if not i["src"] or not i["complete"] or i["width"] == 0]
    assert not broken, f"{page}: images not loaded: {broken}"


@pages
def test_no_ipywidget_and_no_widget_manager(page, report):
    """No ipywidget view (without a manager it would be an empty output: the cell must be tagged
    remove-output) and no require.js or widget manager on the page."""
    facts = report.facts
    assert facts["widgetViews"] == 0 and facts["widgetAreas"] == 0, (
        f"{page}: {facts['widgetViews']} ipywidget views, {facts['widgetAreas']} widget areas")
    assert not facts["widgetManager"], f"{page}: an AMD loader is defined: {facts['widgetManager']}"


@pages
def test_players_change_frame_when_their_slider_moves(page, report):
    stuck = [p for p in report.players if p["frames"] > 1 and not (p["changed"] and p["value"] == p["max"])]
    assert not stuck, f"{page}: kernel-free players whose frame did not follow the slider: {stuck}"


@pages
def test_screenshot_saved(page, report):
    assert report.screenshot and report.screenshot.stat().st_size > 10_000, (
        f"{page}: no screenshot at {report.screenshot}")


def test_search_box_finds_a_chapter(browser, server, site):
    """Type the first chapter's title into the search box of the front page: it is found."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    chapters = [p for p in PAGES if p.startswith("chapters/") and html_path(p).exists()]
    if not chapters:
        pytest.skip("the book has no chapter yet")
    title = re.search(r"<title>(.*?)(?: &#8212;| —|</title>)", html_path(chapters[0]).read_text(
        encoding="utf-8"), re.S).group(1)
    word = max(re.findall(r"[A-Za-z]{4,}", title), key=len)
    driver = browser
    driver.get(f"{server.base_url}/index.html")
    buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, "button.search-button__button")
               if b.is_displayed()]
    assert buttons, "no search button on the front page"
    buttons[0].click()
    box = driver.find_element(By.CSS_SELECTOR, "#pst-search-dialog input[name=q]")
    assert _wait(driver, "return document.activeElement && document.activeElement.name === 'q';", 5)
    box.send_keys(word + Keys.ENTER)
    hits = _wait(driver, "const r = document.querySelectorAll('#search-results li a');"
                         "return r.length ? Array.from(r).map(a => a.getAttribute('href')) : null;", 30)
    assert "search.html" in driver.current_url
    assert hits, f"the search box found nothing for {word!r} (from the title {title!r})"
    assert any(h.split("#")[0].split("?")[0].endswith(chapters[0] + ".html") for h in hits), (
        f"{chapters[0]} not among the results for {word!r}: {hits}")
