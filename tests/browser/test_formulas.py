"""Chapter 05's display formulas, every "Under the hood" dropdown open, written in lines short
enough for a phone's column ({math} with ``:class: il-fits``): at 390 px each is set at the size
it has at 1280 px, not shrunk, and fits its box (no line wraps, nothing scrolls), the rotation
matrix inside a dropdown included. Needs the built book.
"""
from __future__ import annotations

import pytest

from builtbook import html_path
from pages import PHONE, DESKTOP, open_on_a_phone

PAGE = "chapters/05_positional_encoding"

#: Each display formula, dropdowns open: its font size (CSS px), its width and its container's.
FORMULAS = """
for (const details of document.querySelectorAll('details')) details.open = true;
return Array.from(document.querySelectorAll('article mjx-container[display=true]')).map(m => {
  const math = m.querySelector('mjx-math').getBoundingClientRect();
  return {size: parseFloat(getComputedStyle(m).fontSize), width: math.width, room: m.clientWidth,
          scrolls: m.scrollWidth > m.clientWidth + 1,
          text: (m.querySelector('mjx-assistive-mml') || m).textContent.slice(0, 24)};
});
"""


def test_chapter_05s_formulas_keep_their_size_on_a_phone(browser, server):
    if not html_path(PAGE).exists():
        pytest.skip(f"{PAGE} is not in the built book")
    seen = {}
    try:
        for name, metrics in (("1280px", DESKTOP), ("390px", PHONE)):
            open_on_a_phone(browser, server, PAGE, metrics)
            seen[name] = browser.execute_script(FORMULAS)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    # the frequencies, PE(pos), the paper's layout, the rotation (in a dropdown)
    assert len(seen["390px"]) == len(seen["1280px"]) == 4, seen
    for desktop, phone in zip(seen["1280px"], seen["390px"]):
        assert phone["size"] == pytest.approx(desktop["size"], abs=0.1), (desktop, phone)
        assert phone["width"] <= phone["room"] and not phone["scrolls"], phone
