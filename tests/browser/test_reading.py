"""Reading the built book as issue 20 asks: opened as a file, a page says how to serve it
(browsers run no ES module from file://); on a phone (390 px) no page scrolls sideways, with
its live widgets drawn; and what every page loads before its own content (theme, icon fonts,
MathJax, the book's scripts) stays under 1.5 MB. Needs the built book (`make book`).
"""
from __future__ import annotations

import time

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from builtbook import html_path, toc_pages

PAGES = [p for p in toc_pages() if html_path(p).exists()]
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
#: What a page may load before its own content: theme, fonts, MathJax, the book's scripts.
FIXED_WEIGHT_BYTES = 1_500_000
#: Not fixed weight: the page's own pictures, and what a live widget loads when it first runs.
OWN_CONTENT = ("/_images/", "data:", "/_illustrated/models/", "/_vendor/jax-js/")

LIVE_SETTLED = """
const live = Array.from(document.querySelectorAll('[data-il-widget]'));
return document.readyState === 'complete' && live.every(w => w.dataset.mounted !== undefined
  && (w.dataset.ilWidget === 'frames' || ['ready', 'error'].includes(w.dataset.state)));
"""

#: Elements reaching past the phone's width that are not inside a box scrolling on its own.
TOO_WIDE = """
const width = arguments[0];
const scrolls = (e) => {
  for (let p = e.parentElement; p; p = p.parentElement) {
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
  }
  return false;
};
return Array.from(document.querySelectorAll('body *')).filter(e => {
  const r = e.getBoundingClientRect(); return r.width > 0 && r.right > width + 1 && !scrolls(e);
}).slice(0, 5).map(e => `${e.tagName.toLowerCase()}.${e.className} right=${e.getBoundingClientRect().right}`);
"""


def test_a_page_opened_as_a_file_says_how_to_serve_it(browser):
    page = next(p for p in PAGES if p.startswith("chapters/"))
    browser.get(html_path(page).as_uri())
    banner = WebDriverWait(browser, 10).until(
        lambda d: d.execute_script("return document.querySelector('.il-file-banner');"))
    assert "make serve" in banner.text and "http://127.0.0.1:8000/" in banner.text, banner.text
    assert banner.get_attribute("role") == "alert"


def test_a_served_page_has_no_file_banner(browser, server):
    browser.get(f"{server.base_url}/{PAGES[0]}.html")
    time.sleep(0.5)
    assert not browser.execute_script("return document.querySelector('.il-file-banner');")


@pytest.mark.parametrize("page", PAGES)
def test_no_page_scrolls_sideways_on_a_phone(browser, server, page):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        browser.get(f"{server.base_url}/{page}.html")
        for widget in browser.find_elements("css selector", "[data-il-widget]"):
            browser.execute_script("arguments[0].scrollIntoView()", widget)  # live widgets compute
        WebDriverWait(browser, 180, poll_frequency=0.2).until(lambda d: d.execute_script(LIVE_SETTLED))
        # (a mobile window grows to what overflows it: compare with the phone's width)
        width = browser.execute_script("return document.documentElement.scrollWidth;")
        wide = browser.execute_script(TOO_WIDE, PHONE["width"])
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert width <= PHONE["width"], f"{page}: {width} px wide on a {PHONE['width']} px phone: {wide}"


@pytest.mark.parametrize("page", PAGES)
def test_what_a_page_loads_before_its_content_stays_under_1_5_mb(browser, server, page):
    """Everything the page fetches (fresh, no cache) but its HTML, its pictures and the models
    and runtime of its live widgets: the theme's CSS, scripts and icon fonts, MathJax and its
    fonts, the book's own scripts. Issue 20 measured 3.8 MB, 1.49 MB of it Font Awesome's
    JavaScript, which site/lean_theme.py removes."""
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        browser.get(f"{server.base_url}/{page}.html")
        browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "(window.MathJax && MathJax.startup && MathJax.startup.promise || Promise.resolve())"
            ".then(() => setTimeout(done, 500), () => done());")
        entries = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => [e.name, e.decodedBodySize]);")
    finally:
        browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    fixed = {name.split("?")[0].replace(server.base_url, ""): size for name, size in entries
             if not any(part in name for part in OWN_CONTENT)}
    assert not [n for n in fixed if "fontawesome.js" in n], "Font Awesome's JavaScript is back"
    total = sum(fixed.values())
    biggest = sorted(fixed.items(), key=lambda item: -item[1])[:5]
    assert total <= FIXED_WEIGHT_BYTES, f"{page}: {total / 1e6:.2f} MB before its content: {biggest}"
