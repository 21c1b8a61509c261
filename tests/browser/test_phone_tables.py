"""The tables a reader meets in chapters 01, 05, 07, 09 and 10 and the closing part, read on a
phone (390 px) and at 1280 px: the printed tables (chapter 01's parameter tables, chapter 05's
comparisons of the two layouts, chapter 07's decoding steps, leak test and logits;
chapter 09's beam candidates, decoders compared and cache times; the closing part's parity,
manifest, retraining, throughput and trained-models tables) keep every row on one line, and
the translate widget's attention table (chapter 10) fits the column for every corpus its menu
offers, the coreference corpus's dozen words included, with nothing scrolling inside the widget
or reaching past the column. Needs the built book.
"""
from __future__ import annotations

import pytest

from builtbook import html_path
from pages import PHONE, open_on_a_phone, pages_with, corpora_of, start
from illustrated.book import kit

#: The pages whose printed tables are read on a phone.
PRINTED = ["chapters/01_a_high_level_look", "chapters/05_positional_encoding",
           "chapters/07_decoder", "chapters/09_decoding", "closing/how_we_know"]
WIDTHS = {"1280px": {**PHONE, "width": 1280, "height": 1000, "mobile": False}, "390px": PHONE}

#: Every row of a printed table (a line of what a cell prints, its columns set apart by two spaces
#: or more) that the column wraps, and how many characters a printed line holds. Code a cell shows
#: (show_source) wraps by design (_static/illustrated.css).
WRAPPED_ROWS = """
for (const d of document.querySelectorAll('details')) d.open = true;
const rows = [], rooms = [];
for (const pre of document.querySelectorAll('div.cell_output div.output.stream pre')) {
  if (!pre.getClientRects().length) continue;
  const lines = pre.textContent.split('\\n');
  const style = getComputedStyle(pre);
  const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const probe = document.createElement('span');
  probe.style.whiteSpace = 'pre';
  pre.appendChild(probe);
  probe.textContent = 'x'.repeat(100);
  rooms.push(Math.floor(100 * room / probe.getBoundingClientRect().width));
  for (const line of lines.filter(l => /\\S {2,}\\S/.test(l))) {
    probe.textContent = line;
    if (probe.getBoundingClientRect().width > room + 0.5) rows.push(line);
  }
  probe.remove();
}
return {rows, chars: Math.min(...rooms)};
"""

#: In a widget: boxes that scroll sideways, and elements past the article's column.
OVERFLOW = """
const widget = arguments[0];
const article = document.querySelector('article.bd-article') || document.querySelector('article');
const style = getComputedStyle(article), box = article.getBoundingClientRect();
const right = box.right - parseFloat(style.paddingRight);
const name = (e) => `${e.tagName.toLowerCase()} ${e.textContent.trim().slice(0, 30)}`;
const scrolled = Array.from(widget.querySelectorAll('*')).filter(e => e.scrollWidth > e.clientWidth + 1
  && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
  .map(e => `${name(e)}: ${e.scrollWidth} > ${e.clientWidth}`);
const past = Array.from(widget.querySelectorAll('*')).filter(e => e.getClientRects().length
  && e.getBoundingClientRect().right > right + 1).map(name);
return {scrolled, past: past.slice(0, 5)};
"""


@pytest.mark.parametrize("page", PRINTED)
@pytest.mark.parametrize("width", WIDTHS, ids=list(WIDTHS))
def test_printed_tables_keep_each_row_on_one_line(browser, server, width, page):
    if not html_path(page).exists():
        pytest.skip(f"{page} is not in the built book")
    try:
        open_on_a_phone(browser, server, page, WIDTHS[width])
        found = browser.execute_script(WRAPPED_ROWS)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert not found["rows"], f"{page} at {width}: rows wrapped by the column: {found['rows']}"
    # the width the chapter modules write their tables for (kit.PHONE_TEXT_CHARS) holds on a phone
    assert found["chars"] >= kit.PHONE_TEXT_CHARS, found


@pytest.mark.parametrize("width", WIDTHS, ids=list(WIDTHS))
def test_the_translate_widgets_attention_table_fits_the_column(browser, server, width):
    problems = []
    try:
        for page in pages_with("translate"):
            open_on_a_phone(browser, server, page, WIDTHS[width])
            for widget in browser.find_elements("css selector", "[data-il-widget=translate]"):
                for corpus in corpora_of(widget):
                    sentence = start(browser, widget, corpus)
                    found = browser.execute_script(OVERFLOW, widget)
                    problems += [f"{page}, {corpus} ({sentence!r}): scrolls sideways: {s}"
                                 for s in found["scrolled"]]
                    problems += [f"{page}, {corpus} ({sentence!r}): past the column: {p}"
                                 for p in found["past"]]
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert not problems, f"at {width}:\n" + "\n".join(problems)
