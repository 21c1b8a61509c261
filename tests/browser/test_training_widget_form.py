"""The training widget's form and chart (site/js/widgets/train.js, fields.js, runs.js,
loss_chart.js) at 1280 and 390 px: an empty or unreadable field is refused by its label; a stopped run
says so; d_model's refusal uses the labels and the limits line's rule, and a refusal moves
nothing below the fields; the chart is drawn again for a new width; the floor's label is crossed
by no curve; every tick label lies inside the chart. The runs here are stubbed (train() answers
with a made-up loss curve at once): what is tested is the widget, not the engine
(test_training_widget.py trains for real)."""
from __future__ import annotations

import re

import pytest
from trainer_page import CH06, CH08, WIDGET, _bench, _open, _page, _set, _wait

#: Stands in for illustrated.train: a loss curve falling from 3.3 to just above the run's floor
#: (arguments[0], label smoothing on) or to 0.01 (off), every step reported at once; with
#: arguments[1] (a step), it stops there and waits for Stop (the AbortSignal), as the worker does.
STUB = """
const [floor, stopAt] = arguments;
window.__runs = [];
window.illustrated.train = (o, onProgress) => o.measure ? Promise.resolve({measure: true, msPerStep: 7})
  : new Promise((resolve) => {
    window.__runs.push(o);
    const base = o.labelSmoothing > 0 ? floor + 0.06 : 0.03;
    const losses = [];
    const end = (stopped) => resolve({corpus: o.corpus, losses, referentLosses: [], exactMatch: 0.25,
      heldOut: true, steps: losses.length, msPerStep: 1, seconds: 2.5, stopped, weights: new Uint8Array(8)});
    for (let step = 1; step <= (stopAt || o.steps); step += 1) {
      losses.push(base + (3.3 - base) * Math.exp(-step / 12) + 0.02 * Math.sin(step));
      onProgress({step, steps: o.steps, loss: losses.at(-1), accuracy: 0, msPerStep: 1});
    }
    if (!stopAt) return end(false);
    o.signal.addEventListener('abort', () => setTimeout(() => end(true), 300));  // the exact match
  });
"""


def _show_bench(browser):
    browser.execute_script("document.querySelector(arguments[0] + ' [data-role=bench]')"
                           ".scrollIntoView()", WIDGET)


def _click(browser, css):
    element = browser.find_element("css selector", css)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def _type(browser, field, keys):
    from selenium.webdriver.common.keys import Keys
    box = browser.find_element("css selector", f"{WIDGET} [data-control={field}]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(*keys)


def _text(browser, role):
    return browser.find_element("css selector", f"{WIDGET} [data-role={role}]").text


@pytest.mark.parametrize("keys", [["abc"], ["1e"], ["\ue003"]], ids=["abc", "1e", "emptied"])
def test_an_empty_or_unreadable_field_is_refused_by_its_label(browser, server, keys):
    """Finding 1: "abc" typed into label smoothing (a number input reads "" then) was taken as 0
    and a run started; now it is refused as an out-of-range value is, by the field's label, and
    text that is no number ("1e") is said to be that, not "nothing"."""
    _open(browser, server)
    browser.execute_script(STUB, 0.7, 0)
    _type(browser, "labelSmoothing", keys)
    _click(browser, f"{WIDGET} button")
    assert browser.execute_script("return window.__runs.length") == 0
    assert _text(browser, "status") == "Not trained: fix label smoothing (marked beside it)."
    said = browser.find_element("css selector", f"{WIDGET} [data-field=labelSmoothing]").text
    # a number input takes no letters ("abc" leaves it empty); "1e" stays, as text that is no number
    got = "text that is not a number" if keys == ["1e"] else "nothing"
    assert said == f"expected a number in [0, 0.5], got {got}"
    state = browser.execute_script("return document.querySelector(arguments[0]).dataset.state", WIDGET)
    assert state == "error"


def test_a_stopped_run_says_where_it_stopped(browser, server):
    """Finding 2: a run stopped at step 40 of 300 read back as if it had finished."""
    _open(browser, server)
    browser.execute_script(STUB, 0.7, 40)
    _set(browser, "steps", "300")
    _click(browser, f"{WIDGET} button")
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 10).until(lambda d: "step 40 of 300" in _text(d, "status"))
    _click(browser, f"{WIDGET} button:nth-of-type(2)")  # Stop (chapter 10 has no comparison button)
    status = _text(browser, "status")  # at once, while the exact match is computed
    assert status.startswith("fr-en, 300 steps: step 40 of 300") and status.endswith(
        " · stopping · exact match…"), status
    _wait(browser, "done", 10)
    readback, loss = _bench(browser)["readback"], _bench(browser)["rows"][0][1]
    said = f"Your fr-en, 300 steps run stopped at step 40 of 300: a loss of {loss:.3f} nats"
    assert readback.startswith(said), readback
    assert _text(browser, "status").endswith("step 40 of 300 · loss " f"{loss:.3f} · stopped")
    time_cell = browser.find_element("css selector", f"{WIDGET} [data-role=run-time]").text
    assert time_cell == "2.5 s, stopped at step 40 of 300", time_cell
    assert _text(browser, "exact-match").startswith("Stopped after 40 steps")


#: The widget's folded settings opened, as a reader on a phone opens "More settings".
UNFOLD = "document.querySelectorAll(arguments[0] + ' details').forEach((d) => { d.open = true; })"

#: Where the widget's controls below its row of fields are (the limits line, the buttons, the
#: lines under them), top and height in px.
BELOW = """
const w = document.querySelector(arguments[0]);
return [...w.querySelectorAll('.il-about, button, [data-role=status]')]
  .filter((e) => e.getClientRects().length)
  .map((e) => [Math.round(e.getBoundingClientRect().top + window.scrollY), e.getBoundingClientRect().height]);
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_d_models_refusal_says_the_limits_rule_by_the_labels_and_moves_nothing(browser, server, width,
                                                                                 screenshots):
    """Finding 3: d_model 30 said "an even multiple of nHeads=4" (the code's name, another rule:
    12 with 4 heads is allowed) and the message made the fields' row taller, pushing the buttons
    down. Now the limits line and the refusal say the rule in the same words, by the labels, and
    no refusal (the longest ones at once) moves anything below the fields."""
    _open(browser, server, width)
    about = browser.find_element("css selector", f"{WIDGET} .il-about").text
    assert "d_model 8-128 (an even number divisible by n_heads)" in about, about
    browser.execute_script(UNFOLD, WIDGET)  # on a phone, "More settings" opened by the reader
    before = browser.execute_script(BELOW, WIDGET)
    for field, keys in (("dModel", ["30"]), ("seed", ["\ue003"]), ("lr", ["0.5"])):
        _type(browser, field, keys)
    said = browser.execute_script("""
      return Object.fromEntries([...document.querySelectorAll(arguments[0] + ' [data-role=field-error]')]
        .filter((e) => e.textContent).map((e) => [e.dataset.field, [e.textContent,
          e.scrollHeight <= e.clientHeight + 1]]));""", WIDGET)
    assert said == {"dModel": ["expected an even number divisible by n_heads (4), got 30", True],
                    "seed": ["expected an integer in [0, 4294967295], got nothing", True],
                    "lr": ["expected a number in [0.00001, 0.05], got 0.5", True]}, said
    browser.execute_script("document.querySelector(arguments[0] + ' [data-control=dModel]')"
                           ".scrollIntoView({block: 'center'})", WIDGET)
    browser.save_screenshot(str(screenshots / f"train-refusal-{width}.png"))
    assert browser.execute_script(BELOW, WIDGET) == before


#: The chart: its drawn width, the width it is shown at, and every text's box and the chart's.
CHART = """
const svg = document.querySelector(arguments[0] + ' [data-role=curve]');
const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
return {drawn: svg.viewBox.baseVal.width, shown: svg.getBoundingClientRect().width, svg: box(svg),
        texts: [...svg.querySelectorAll('text')].map((t) => [t.textContent, box(t)])};
"""


def _train_stubbed(browser, steps):
    browser.execute_script(STUB, 0.7, 0)
    _set(browser, "steps", str(steps))
    _click(browser, f"{WIDGET} button")
    _wait(browser, "done", 60)
    return browser.execute_script(CHART, WIDGET)


def test_the_chart_is_drawn_again_for_a_new_width(browser, server, screenshots):
    """Finding 4: trained at 1280 px then read at 390 px, the chart was the desktop's scaled down
    (its labels about 5 px); now it is drawn for 390 px, its text as a fresh 390 px chart's."""
    from selenium.webdriver.support.ui import WebDriverWait
    _open(browser, server, 390)
    fresh = _train_stubbed(browser, 300)
    _open(browser, server, 1280)
    wide = _train_stubbed(browser, 300)
    assert wide["drawn"] > 600
    browser.set_window_size(390, 1000)
    WebDriverWait(browser, 5).until(lambda d: d.execute_script(CHART, WIDGET)["drawn"] < 400)
    got = browser.execute_script(CHART, WIDGET)
    assert got["drawn"] == fresh["drawn"], (got["drawn"], fresh["drawn"])
    assert abs(got["shown"] - got["drawn"]) < 1, got["shown"]
    height = lambda chart: [round(b[3] - b[1], 1) for _, b in chart["texts"]]  # noqa: E731
    assert height(got) == height(fresh), (height(got), height(fresh))
    _show_bench(browser)
    browser.save_screenshot(str(screenshots / "train-chart-resized-390.png"))


#: Every curve's points on the screen, and the floor's label's box (wherever it is drawn).
FLOOR = """
const w = document.querySelector(arguments[0]);
const label = [...w.querySelectorAll('[data-role=bench] text, [data-role=bench] li')]
  .find((e) => e.textContent.startsWith('floor '));
const r = label.getBoundingClientRect();
const curves = [...w.querySelectorAll('[data-role=curve-line]')].map((line) => {
  const m = line.getScreenCTM();
  return [...line.points].map((p) => [m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]);
});
return {label: [r.left, r.top, r.right, r.bottom], text: label.textContent, curves};
"""


def _crosses(points, box):
    """Whether the polyline through `points` passes through `box` (sampled every 0.25 px or so)."""
    left, top, right, bottom = box
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        n = max(2, int(4 * max(abs(x1 - x0), abs(y1 - y0))))
        for i in range(n + 1):
            x, y = x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n
            if left <= x <= right and top <= y <= bottom:
                return True
    return False


@pytest.mark.parametrize("width", [1280, 390])
def test_no_curve_crosses_the_floors_label(browser, server, width, screenshots):
    """Finding 5: at 390 px chapter 08's smoothed curve ran through "floor 0.698 (label smoothing
    0.1)"; now no curve passes through the label, at either width; runs sharing a floor name it
    once."""
    from illustrated.book import runs
    floor = runs.floors("post")[10]
    _page(browser, server, CH08, width)
    _set(browser, "corpus", "post")
    browser.execute_script(STUB, floor, 0)
    _click(browser, f"{WIDGET} button:nth-of-type(2)")  # label smoothing 0, then 0.1
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 10).until(lambda d: len(_bench(d)["rows"]) == 2)
    got = browser.execute_script(FLOOR, WIDGET)
    assert got["text"] == f"floor {floor:.3f} (label smoothing 0.1)", got["text"]
    assert not any(_crosses(points, got["label"]) for points in got["curves"]), got["label"]
    _show_bench(browser)
    browser.save_screenshot(str(screenshots / f"train-floor-{width}.png"))
    _click(browser, f"{WIDGET} button:nth-of-type(2)")  # the same two runs again: one floor, named once
    WebDriverWait(browser, 10).until(lambda d: len(_bench(d)["rows"]) == 4)
    assert _bench(browser)["floors"] == [got["text"]], _bench(browser)["floors"]


@pytest.mark.parametrize("steps", [300, 3000])
@pytest.mark.parametrize("width", [1280, 390])
def test_every_tick_label_is_inside_the_chart(browser, server, width, steps):
    """Finding 6: at 1280 px the x axis's last label ("300") was cut at the chart's right edge."""
    _open(browser, server, width)
    got = _train_stubbed(browser, steps)
    left, top, right, bottom = got["svg"]
    outside = [(t, b) for t, b in got["texts"]
               if b[0] < left - 0.5 or b[1] < top - 0.5 or b[2] > right + 0.5 or b[3] > bottom + 0.5]
    assert not outside, (got["svg"], outside)


#: The runs table as the reader sees it: whether its box scrolls sideways, each row's text, the
#: right edge of every link and button against the column's, and the headings' display.
TABLE = """
const w = document.querySelector(arguments[0]);
const box = w.querySelector('[data-role=runs]').parentNode;
const column = w.getBoundingClientRect().right;
// what CSS writes before or after a cell (its data-label), as the reader sees it
const said = (td, where) => {
  const c = getComputedStyle(td, where).content;
  if (c === 'none' || c === 'normal') return '';
  return c.replace(/attr\\(data-label\\)/, JSON.stringify(td.dataset.label)).replace(/"([^"]*)"\\s*/g, '$1');
};
return {scrolls: box.scrollWidth > box.clientWidth + 1,
        rows: [...w.querySelectorAll('[data-role=run-row]')].map((r) => [...r.cells]
          .filter((td) => getComputedStyle(td).display !== 'none')
          .map((td) => said(td, '::before') + td.innerText + said(td, '::after')).join(' ')
          .replace(/\\s+/g, ' ').trim()),
        outside: [...w.querySelectorAll('[data-role=run-row] a, [data-role=run-row] button')]
          .filter((e) => e.getBoundingClientRect().right > column + 0.5).map((e) => e.textContent),
        headings: getComputedStyle(w.querySelector('[data-role=runs] thead')).display};
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_runs_table_fits_the_column(browser, server, width, screenshots):
    """Readers' findings: on a phone the runs table scrolled sideways in its box, its links and
    "remove" buttons at the edge; at 1280 px a stopped run's time pushed "remove" out of sight.
    At 390 px each run is now a block of lines, every cell named ("final loss: 0.031"), its
    settings on a line of their own (a reader found them left out); at 1280
    px a table under its headings, within the column. Runs of a page that offers several corpora
    are named by theirs."""
    from selenium.webdriver.support.ui import WebDriverWait
    _open(browser, server, width)
    browser.execute_script(STUB, 0.7, 0)
    _set(browser, "steps", "30")
    _click(browser, f"{WIDGET} button")
    _wait(browser, "done", 10)
    browser.execute_script(STUB, 0.7, 40)  # the next run stops at step 40: the longest time cell
    _set(browser, "corpus", "coreference")
    _click(browser, f"{WIDGET} button")
    WebDriverWait(browser, 10).until(lambda d: "step 40 of 300" in _text(d, "status"))
    _click(browser, f"{WIDGET} button:nth-of-type(2)")  # Stop
    WebDriverWait(browser, 10).until(lambda d: len(_bench(d)["rows"]) == 2)
    assert [n for n, _ in _bench(browser)["rows"]] == ["fr-en, 30 steps",
                                                       "coreference, “it” objective"]
    _show_bench(browser)
    browser.save_screenshot(str(screenshots / f"train-runs-table-{width}.png"))
    got = browser.execute_script(TABLE, WIDGET)
    assert not got["scrolls"] and not got["outside"], got
    if width == 390:
        assert got["headings"] == "none", got
        for row in got["rows"]:
            assert re.fullmatch(r"(fr-en, 30 steps|coreference, “it” objective) settings: "
                                r"(fr-en|coreference), \d+ steps, lr [^·]+ time: 2\.5 s"
                                r"(, stopped at step 40 of 300)? · final loss: \d\.\d{3} · exact match: "
                                r"25\.0 % · model: (fr-en|coreference)-\d\.safetensors remove", row), row
    else:
        assert got["headings"] != "none", got


def test_the_corpus_menu_lines_up_with_the_fields(browser, server):
    """A reader's finding at 1280 px: the corpus menu sat about 15 px lower than the number
    fields beside it (it was centred on a field and the slot for its problem under it)."""
    _open(browser, server, 1280)
    tops = browser.execute_script("""
        const w = document.querySelector(arguments[0]);
        const top = (css) => w.querySelector(css).getBoundingClientRect().top;
        return [top('[data-control=corpus]'), top('[data-control=steps]')];""", WIDGET)
    assert abs(tops[0] - tops[1]) <= 3, tops


def test_on_a_phone_the_buttons_sit_two_to_a_row(browser, server):
    """A reader's finding at 390 px: chapter 06's Reset wrapped onto a line of its own, under
    "Train", "Train post-LN, then pre-LN" and "Stop"; now the buttons fill two rows of two."""
    _page(browser, server, CH06, 390)
    rows = browser.execute_script("""
        const tops = {};
        for (const b of document.querySelectorAll(arguments[0] + ' .il-buttons button')) {
          const top = Math.round(b.getBoundingClientRect().top);
          (tops[top] = tops[top] || []).push(b.textContent);
        }
        return Object.values(tops);""", WIDGET)
    assert rows == [["Train", "Train post-LN, then pre-LN"], ["Stop", "Reset"]], rows


#: A run whose loss falls to 1e-4, so that the log scale's lowest tick reads "0.0001".
TINY_LOSS = """
window.illustrated.train = (o, onProgress) => o.measure ? Promise.resolve({measure: true, msPerStep: 7})
  : new Promise((resolve) => {
    const losses = Array.from({length: o.steps}, (_, i) => 3 * Math.exp(-i * Math.log(3e4) / (o.steps - 1)));
    losses.forEach((loss, i) => onProgress({step: i + 1, steps: o.steps, loss, accuracy: 0, msPerStep: 1}));
    resolve({corpus: o.corpus, losses, referentLosses: [], exactMatch: 1, heldOut: true,
             steps: o.steps, msPerStep: 1, seconds: 1, stopped: false, weights: new Uint8Array(8)});
  });
"""

#: The y axis's title and every other text of the chart, as boxes on the page.
TITLE_AND_TICKS = """
const svg = document.querySelector(arguments[0] + ' [data-role=curve]');
const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const title = svg.querySelector('[data-role=y-label]');
return {title: box(title), ticks: [...svg.querySelectorAll('text')].filter((t) => t !== title)
  .map((t) => [t.textContent, box(t)])};
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_y_title_crosses_no_tick_label_on_the_log_scale(browser, server, width):
    """Issue 47, defect 3: at 1280 px with the log scale, the y axis's title overlapped the
    0.001 and 0.0001 ticks (the margin was fixed at 52 px)."""
    _open(browser, server, width)
    browser.execute_script(TINY_LOSS)
    _set(browser, "steps", "300")
    _click(browser, f"{WIDGET} button")
    _wait(browser, "done", 60)
    _click(browser, f"{WIDGET} [data-control=logScale]")
    got = browser.execute_script(TITLE_AND_TICKS, WIDGET)
    assert "0.0001" in [t for t, _ in got["ticks"]], got["ticks"]
    a = got["title"]
    crossed = [t for t, b in got["ticks"] if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]
    assert not crossed, (a, crossed)
