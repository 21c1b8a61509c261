"""Helpers of the training widget's browser tests: its pages, opening one, setting a field,
waiting for a run, reading the run bench."""
from __future__ import annotations

PAGE = "chapters/10_playground.html"


WIDGET = "[data-il-widget=train]"


#: The trained model's file, fetched from the download link's blob URL, as base64.
DOWNLOAD = """
const done = arguments[arguments.length - 1];
fetch(document.querySelector(arguments[0] + " [data-role=download]").href)
  .then((r) => r.arrayBuffer())
  .then((b) => {
    let s = "";
    new Uint8Array(b).forEach((x) => { s += String.fromCharCode(x); });
    done(btoa(s));
  }, (e) => done("error: " + e.message));
"""


def _open(browser, server, width=1280):
    browser.set_window_size(width, 1000)
    browser.get(f"{server.base_url}/{PAGE}")
    browser.execute_script("document.querySelector(arguments[0]).scrollIntoView()", WIDGET)
    _wait(browser, "ready", 30)


def _wait(browser, state, seconds):
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, seconds).until(lambda d: d.execute_script(
        "return document.querySelector(arguments[0]).dataset.state", WIDGET) == state)


def _set(browser, control, value):
    browser.execute_script("""
      const c = document.querySelector(arguments[0] + ' [data-control=' + arguments[1] + ']');
      c.value = arguments[2]; c.dispatchEvent(new Event('change'));""", WIDGET, control, value)


CH06, CH08 = "chapters/06_residuals.html", "chapters/08_training_and_loss.html"


def _page(browser, server, page, width=1280):
    browser.set_window_size(width, 1000)
    browser.get(f"{server.base_url}/{page}")
    browser.execute_script("document.querySelector(arguments[0]).scrollIntoView()", WIDGET)
    _wait(browser, "ready", 30)


def _bench(browser):
    """What the bench shows: curves (name, points), legend, axis labels, table rows, read-back."""
    return browser.execute_script("""
      const w = document.querySelector(arguments[0]);
      const all = (sel, f) => [...w.querySelectorAll(sel)].map(f);
      return {curves: all('[data-role=curve-line]', (e) => [e.dataset.name,
                                                              e.getAttribute('points').split(' ').length]),
              legend: all('[data-role=legend] li[data-name]', (e) => e.textContent),  // the runs
              legendAll: all('[data-role=legend] li', (e) => e.textContent),
              baselines: all('[data-role=baseline-label]', (e) => e.textContent),
              baselineLines: w.querySelectorAll('[data-role=curve] [data-role=baseline]').length,
              x: w.querySelector('[data-role=x-label]')?.textContent,
              y: w.querySelector('[data-role=y-label]')?.textContent,
              rows: all('[data-role=run-row]', (e) => [e.dataset.name,
                    Number(e.querySelector('[data-role=final-loss]').textContent)]),
              floors: all('[data-role=floor-label]', (e) => e.textContent),
              readback: w.querySelector('[data-role=readback]').textContent,
              result: w.querySelector('[data-role=result]').textContent};""", WIDGET)
