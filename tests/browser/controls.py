"""Every control in a page's cell outputs, used as a reader would: does the page respond?

A control is *dead* when using it changes nothing but itself and its own readout: the slider of
an ipywidget in the static book moves and its number changes, while the figure stays. For each
control (input, select, button, textarea, and ipywidgets 8's ``role=slider`` handles) inside a
cell output, :func:`dead_controls` takes a snapshot of the control's cell output without the
controls and their labels and readouts, uses the control (keyboard for sliders and text boxes,
a different option for menus, a click for buttons and check boxes), and reports it when the
snapshot stays the same. Canvases count by their pixels, pictures by their source and whether
they are hidden.

Left out: matplotlib's kernel-free players (``div.animation``, ``FuncAnimation.to_jshtml``),
whose frames tests/browser/test_pages.py already checks; their loop-mode radio buttons only
matter while playing.

Used by test_closed_form_widgets.py (chapters 01-06, 08); any chapter can be added.
"""
from __future__ import annotations

import time

CONTROLS = ("input:not([type=hidden]), select, button, textarea, [role=slider]")

#: Returns the controls of the page's cell outputs, outside the players.
FIND = f"""
return Array.from(document.querySelectorAll('.cell_output'))
  .flatMap(o => Array.from(o.querySelectorAll('{CONTROLS}')))
  .filter(c => !c.closest('.animation') && !c.classList.contains('copybtn'));
"""

#: The cell output of arguments[0], without controls, labels and readouts, as a string.
SNAPSHOT = """
const output = arguments[0].closest('.cell_output');
const copy = output.cloneNode(true);
copy.querySelectorAll('input, select, button, textarea, label, output, [role=slider], ' +
  '.widget-readout, .widget-label, .widget-inline-hbox, .widget-toggle-buttons')
  .forEach(e => e.remove());
const pixels = Array.from(output.querySelectorAll('canvas')).map(c => c.toDataURL());
return copy.innerHTML + pixels.join('');
"""

DESCRIBE = """
const c = arguments[0];
const box = c.closest('.widget-inline-hbox, .widget-inline-vbox');
const label = c.closest('label');
const name = c.getAttribute('aria-label') || c.getAttribute('data-name') ||
  (box && box.querySelector('.widget-label') || {}).textContent ||
  (label && label.firstChild || {}).textContent || c.textContent || '';
return `${c.tagName.toLowerCase()}${c.type ? '[' + c.type + ']' : ''} "${name.trim()}"`;
"""


def controls_of(driver) -> list:
    """The WebElements of every control in the loaded page's cell outputs (players excepted)."""
    return driver.execute_script(FIND)


def use(driver, control) -> None:
    """Use ``control`` as a reader would; afterwards it holds a different value or was clicked."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", control)
    tag = control.tag_name.lower()
    kind = (control.get_attribute("type") or "").lower()
    if tag == "select":
        menu = Select(control)
        current = menu.options.index(menu.first_selected_option)
        menu.select_by_index((current + 1) % len(menu.options))
    elif control.get_attribute("role") == "slider" or kind == "range":
        at_max = (control.get_attribute("aria-valuenow") or control.get_attribute("value")) == \
            (control.get_attribute("aria-valuemax") or control.get_attribute("max"))
        control.click()
        control.send_keys(Keys.HOME if at_max else Keys.END)
    elif tag == "textarea" or kind in ("text", "number", "search", ""):
        control.click()
        control.send_keys(Keys.END, "1", Keys.TAB)
    else:
        control.click()


def dead_controls(driver, url: str, *, timeout: float = 3.0) -> tuple[int, list[str]]:
    """Load ``url``, use each control in turn; (number of controls, descriptions of dead ones).

    A control is alive when its cell output (controls, labels and readouts left out) differs
    within ``timeout`` seconds after it was used.
    """
    driver.get(url)
    dead = []
    count = len(controls_of(driver))
    for index in range(count):
        control = controls_of(driver)[index]
        before = driver.execute_script(SNAPSHOT, control)
        name = driver.execute_script(DESCRIBE, control)
        use(driver, control)
        deadline = time.monotonic() + timeout
        while driver.execute_script(SNAPSHOT, control) == before:
            if time.monotonic() > deadline:
                dead.append(name)
                break
            time.sleep(0.1)
    return count, dead
