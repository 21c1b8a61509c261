"""Chapter 05's display formulas, written in lines short enough for a phone's column ({math} with
``:class: il-fits``): at 390 px they are set at the size they have at 1280 px, not shrunk, and
each fits the column (no line wraps, nothing scrolls). Needs the built book.
"""
from __future__ import annotations

import pytest

from builtbook import html_path
from test_reading import PHONE, _open_on_a_phone

PAGE = "chapters/05_positional_encoding"
DESKTOP = {**PHONE, "width": 1280, "height": 1000, "mobile": False}

#: Each fitted formula: its font size (CSS px), its width and its container's, and its height.
FORMULAS = """
return Array.from(document.querySelectorAll('div.math.il-fits mjx-container[display=true]')).map(m => {
  const math = m.querySelector('mjx-math').getBoundingClientRect();
  return {size: parseFloat(getComputedStyle(m).fontSize), width: math.width, room: m.clientWidth,
          scrolls: m.scrollWidth > m.clientWidth + 1, text: m.textContent.slice(0, 24)};
});
"""


def test_chapter_05s_formulas_keep_their_size_on_a_phone(browser, server):
    if not html_path(PAGE).exists():
        pytest.skip(f"{PAGE} is not in the built book")
    seen = {}
    try:
        for name, metrics in (("1280px", DESKTOP), ("390px", PHONE)):
            _open_on_a_phone(browser, server, PAGE, metrics)
            seen[name] = browser.execute_script(FORMULAS)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert len(seen["390px"]) == 3, seen  # the frequencies, PE(pos), the paper's layout
    for desktop, phone in zip(seen["1280px"], seen["390px"]):
        assert phone["size"] == pytest.approx(desktop["size"], abs=0.1), (desktop, phone)
        assert phone["width"] <= phone["room"] and not phone["scrolls"], phone
