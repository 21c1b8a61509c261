"""What several browser test files share: opening a page as a phone shows it, the live widgets
(site/js/widgets/) driven as a reader drives them, and the size figure text renders at. A helpers
module, not a test file: the tests import it, never one another."""
from __future__ import annotations

import base64
import json
import struct
from collections import Counter
from urllib.parse import unquote, urlparse

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from builtbook import HTML, html_path, require, toc_pages
import illustrated as il
from illustrated.book.kit import MIN_FONT_PT

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
DESKTOP = {**PHONE, "width": 1280, "height": 1000, "mobile": False}
MIN_TEXT_PX = 9.0  # the smallest figure text a reader should have to read (issue 20)

# ---------------------------------------------------------------------------------------------
# Pages on a phone.

LIVE_SETTLED = """
const live = Array.from(document.querySelectorAll('[data-il-widget]'));
return document.readyState === 'complete' && live.every(w => w.dataset.mounted !== undefined
  && (w.dataset.ilWidget === 'frames' || ['ready', 'error'].includes(w.dataset.state)));
"""


def open_on_a_phone(browser, server, page, metrics=PHONE):
    """Open ``page`` emulating ``metrics`` (a phone unless told), each live widget computed in
    view and MathJax done."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    browser.get(f"{server.base_url}/{page}.html")
    # A live widget computes once it is seen: each in view until it is drawn (scrolled past at
    # once, one would never start).
    for widget in browser.find_elements("css selector", "[data-il-widget]:not([data-il-widget=frames])"):
        browser.execute_script("arguments[0].scrollIntoView()", widget)
        WebDriverWait(browser, 180, poll_frequency=0.2).until(lambda d, w=widget: d.execute_script(
            "return ['ready', 'error'].includes(arguments[0].dataset.state);", w))
    WebDriverWait(browser, 180, poll_frequency=0.2).until(lambda d: d.execute_script(LIVE_SETTLED))
    browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(window.MathJax && MathJax.startup && MathJax.startup.promise || Promise.resolve())"
        ".then(() => setTimeout(done, 300), () => done());")


# ---------------------------------------------------------------------------------------------
# The live widgets.

TIMEOUT = 180  # the first translation of a page loads jax-js and compiles the model
LIVE = "[data-il-widget=translate], [data-il-widget=beam], [data-il-widget=selfattention]"


def pages_with(kind: str) -> list[str]:
    """The pages of the built book that carry a widget of this kind."""
    found = [p for p in toc_pages() if html_path(p).exists()
             and f'data-il-widget="{kind}"' in html_path(p).read_text(encoding="utf-8")]
    if not found:
        require(f"no page of the built book has a {kind} widget")
    return found


def open_page(driver, server, page: str, kind: str) -> list:
    """Load a page, wait until all its live widgets are mounted; those of ``kind``, in order."""
    driver.get(f"{server.base_url}/{page}.html")
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(
        f"const all = document.querySelectorAll('{LIVE}');"
        "return all.length > 0 && Array.from(all).every(w => w.querySelector('.il-live'));"))
    return driver.find_elements(By.CSS_SELECTOR, f"[data-il-widget={kind}]")


def params(widget) -> dict:
    return json.loads(widget.get_attribute("data-params"))


def settle(driver, widget) -> str:
    """Wait until the widget is done (ready or error) and return its state."""
    driver.execute_script("arguments[0].scrollIntoView()", widget)
    WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(
        lambda _: widget.get_attribute("data-state") in ("ready", "error"))
    return widget.get_attribute("data-state")


def wait_shown(driver, widget, expected: dict) -> None:
    """Until the widget has drawn the result for ``expected`` (its input as data-shown holds it;
    keys left out of ``expected``, such as a beam's settings, are not compared)."""
    def done(_):
        if widget.get_attribute("data-state") == "error":
            raise AssertionError(widget.find_element(By.CSS_SELECTOR, "[data-role=result]").text)
        shown = widget.get_attribute("data-shown")
        return (widget.get_attribute("data-state") == "ready" and bool(shown)
                and expected.items() <= json.loads(shown).items())
    driver.execute_script("arguments[0].scrollIntoView()", widget)
    WebDriverWait(driver, TIMEOUT, poll_frequency=0.1).until(done)


def type_sentence(widget, sentence: str, enter: bool = True) -> None:
    box = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    box.send_keys(sentence + (Keys.ENTER if enter else ""))


def choose(widget, control: str, value) -> None:
    menu = widget.find_element(By.CSS_SELECTOR, f"select[data-control={control}]")
    Select(menu).select_by_value(str(value))


def text_of(widget, role: str) -> str:
    found = widget.find_elements(By.CSS_SELECTOR, f"[data-role={role}]")
    return found[0].text if found else ""


def sentences_of(corpus: str, n: int) -> list[str]:
    pairs, _, _ = il.data.load_corpus(corpus, "test")
    return [s for s, _ in pairs[:n]]


def corpora_of(widget) -> list[str]:
    p = params(widget)
    return p.get("corpora") or [p["corpus"]]


def start(driver, widget, corpus: str) -> str:
    """Show ``corpus``, choosing it if another is shown (its example sentence comes with it);
    the sentence shown."""
    menus = widget.find_elements(By.CSS_SELECTOR, "select[data-control=corpus]")
    if menus and Select(menus[0]).first_selected_option.get_attribute("value") != corpus:
        choose(widget, "corpus", corpus)
    sentence = widget.find_element(By.CSS_SELECTOR, "input[data-control=sentence]").get_attribute("value")
    wait_shown(driver, widget, {"corpus": corpus, "sentence": sentence})
    return sentence


# ---------------------------------------------------------------------------------------------
# Figures' text.

def _png_size_and_dpi(data: bytes) -> tuple[int, float | None]:
    """Width in pixels and resolution (from the pHYs chunk matplotlib writes) of a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, None
    width = struct.unpack(">I", data[16:20])[0]
    at = 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"pHYs":
            x, _y, unit = struct.unpack(">IIB", data[at + 8:at + 17])
            return width, x * 0.0254 if unit == 1 else None
        if kind == b"IDAT":
            break
        at += 12 + length
    return width, None


def figure_text_px(page: str, images: list[dict]) -> list[dict]:
    """For each matplotlib figure shown in ``page``: how tall its smallest allowed text
    (book.kit.MIN_FONT_PT) renders in CSS px, from the PNG's own size and resolution and the
    width the page shows it at. Unnamed figures are labelled "player 1", "output 2", ..."""
    results, counts = [], Counter()
    for image in images:
        src = image["src"]
        if src.startswith("data:image/png;base64,"):
            data = base64.b64decode(src.split(",", 1)[1])
        elif src.startswith("data:") or not src.split("?")[0].endswith(".png"):
            continue
        else:
            local = HTML / unquote(urlparse(src).path).lstrip("/")
            data = local.read_bytes() if local.is_file() else b""
        width, dpi = _png_size_and_dpi(data)
        if not width or not dpi or not image["shown"]:
            continue  # not a matplotlib figure (no resolution recorded), or not shown
        label = image["name"]
        if label in ("player", "output"):
            counts[label] += 1
            label = f"{label} {counts[label]}"
        scale = image["shown"] / width
        results.append({"figure": label, "png_px": width, "shown_px": round(image["shown"]),
                        "dpi": round(dpi), "text_px": round(MIN_FONT_PT * dpi / 72 * scale, 1)})
    return results
