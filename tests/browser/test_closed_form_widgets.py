"""The live widgets of the static book (site/js/closed_form_*.js) against the package.

Headless Chromium, offline, on the built book (`node site/build.mjs`, then the book build):
each closed-form widget is moved to several settings and the numbers it displays must equal
the package's (il.reference.softmax, positional_encoding in both layouts, layer_norm_steps,
smooth_labels) within 1e-4; each widget of precomputed panels must show the panel its
parameters name for every combination; and no control in chapters 01-06 and 08 may be dead.
"""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import illustrated as il
from builtbook import html_path
from controls import dead_controls

TOL = 1e-4
SOFTMAX = "chapters/03_self_attention"
POSITIONAL = "chapters/05_positional_encoding"
ADD_NORM = "chapters/06_residuals"
SMOOTHING = "chapters/08_training_and_loss"

#: Chapters whose every control must respond, with the least number of controls each has.
LIVE_CHAPTERS = {"chapters/01_a_high_level_look": 1, "chapters/02_encoders": 2,
                 SOFTMAX: 4, "chapters/04_multi_head_attention": 1, POSITIONAL: 3,
                 ADD_NORM: 5, SMOOTHING: 3}

SET = """
const [root, name, value] = arguments;
const input = root.querySelector(`[data-name="${name}"]`);
input.value = String(value);
input.dispatchEvent(new Event('input', {bubbles: true}));
input.dispatchEvent(new Event('change', {bubbles: true}));
return input.value;
"""

#: Each row of the widget's tables: {data-row: [numbers]}.
ROWS = """
const out = {};
arguments[0].querySelectorAll('table [data-row]').forEach(tr => {
  out[tr.dataset.row] = Array.from(tr.querySelectorAll('td')).map(td => td.textContent);
});
return out;
"""


@pytest.fixture(scope="module")
def open_page(browser, server):
    def load(page: str, kind: str):
        if not html_path(page).exists():
            pytest.fail(f"{page}.html was not built")
        browser.get(f"{server.base_url}/{page}.html")
        roots = browser.find_elements("css selector", f".il-live-{kind}")
        assert roots, f"{page}: no live {kind} widget"
        browser.execute_script("arguments[0].scrollIntoView();", roots[0])
        assert not roots[0].find_elements("css selector", ".il-live-fallback"), \
            f"{page}: the {kind} widget was not mounted (fallback line still shown)"
        assert browser.execute_script("return window.__pageErrors") == []
        return roots[0]
    return load


def _set(browser, root, **values) -> None:
    for name, value in values.items():
        browser.execute_script(SET, root, name, value)


def _rows(browser, root) -> dict[str, np.ndarray]:
    return {k: np.array([float(x) for x in v])
            for k, v in browser.execute_script(ROWS, root).items()}


def test_softmax_with_d_k_equals_the_package(browser, open_page):
    root = open_page(SOFTMAX, "softmax")
    rows = _rows(browser, root)
    np.testing.assert_allclose(rows["scaled"], [14, 12], atol=TOL)  # the post's numbers
    np.testing.assert_allclose(rows["weights"], [0.8808, 0.1192], atol=TOL)
    for s1, s2, d_k in [(200, 0, 1), (37, 150, 3), (112, 112, 64), (5, 9, 1024), (0, 200, 2)]:
        _set(browser, root, **{"q1·k1": s1, "q1·k2": s2, "d_k": d_k})
        rows = _rows(browser, root)
        scaled = np.array([s1, s2]) / np.sqrt(d_k)
        np.testing.assert_allclose(rows["scaled"], scaled, atol=TOL)
        np.testing.assert_allclose(rows["weights"], il.reference.softmax(scaled), atol=TOL)


CELL = """
const readout = arguments[0].querySelector('[data-row=cell]');
const first = arguments[0].querySelector('[data-row=first]').textContent;
return [Number(readout.dataset.pos), Number(readout.dataset.dim),
        Number(readout.textContent.split('= ')[1]),
        first.slice(first.indexOf('[') + 1, -1).split(', ').map(Number)];
"""


@pytest.mark.parametrize("layout", ["concatenated", "interleaved"])
def test_positional_encoding_equals_the_package(browser, open_page, layout):
    from selenium.webdriver.common.action_chains import ActionChains

    root = open_page(POSITIONAL, "positional")
    canvas = root.find_element("css selector", "canvas")
    for n, d in [(20, 512), (7, 4), (50, 10), (200, 1024)]:
        _set(browser, root, positions=n, d_model=d, layout=["concatenated", "interleaved"]
             .index(layout))
        table = il.reference.positional_encoding(n, d, layout)
        pos, _, _, first = browser.execute_script(CELL, root)  # the row last clicked
        np.testing.assert_allclose(first, table[pos, :8], atol=TOL)
        for pos, dim in [(n - 1, d - 1), (n // 2, d // 3), (min(3, n - 1), 1)]:
            size = canvas.size  # click the middle of cell (pos, dim), from the canvas' centre
            x = (dim + 0.5) / d * size["width"] - size["width"] / 2
            y = (pos + 0.5) / n * size["height"] - size["height"] / 2
            ActionChains(browser).move_to_element_with_offset(canvas, round(x), round(y)) \
                .click().perform()
            got_pos, got_dim, value, _ = browser.execute_script(CELL, root)
            if size["width"] / d >= 4 and size["height"] / n >= 4:  # cells large enough to aim
                assert (got_pos, got_dim) == (pos, dim)
            assert abs(value - table[got_pos, got_dim]) <= TOL
    if layout == "concatenated":  # the post's d = 4 example: position 1 (shown on loading)
        root = open_page(POSITIONAL, "positional")
        _set(browser, root, d_model=4)
        assert browser.execute_script(CELL, root)[:2] == [1, 0]
        np.testing.assert_allclose(browser.execute_script(CELL, root)[3],
                                   [0.8415, 0.0001, 0.5403, 1.0], atol=TOL)


def test_add_and_norm_equals_the_package(browser, open_page):
    root = open_page(ADD_NORM, "add_norm")
    cases = [("1, 2, 3, 4", "0.5, -0.5, 1, -1"), ("3, -1, 2.5, 0, 7", "1 1 1 1 1"),
             ("[100, 101]", "[0.25, -0.25]"), ("2, 2, 2", "0, 0, 0")]
    for x, z in cases:
        _set(browser, root, x=x, **{"z = Sublayer(x)": z})
        rows = _rows(browser, root)
        summed = np.array(x.strip("[]").replace(",", " ").split(), float) + \
            np.array(z.strip("[]").replace(",", " ").split(), float)
        steps = il.reference.layer_norm_steps(summed, eps=1e-5)
        np.testing.assert_allclose(rows["summed"], summed, atol=TOL)
        np.testing.assert_allclose(rows["normalized"], il.reference.layer_norm(summed), atol=TOL)
        stats = root.find_element("css selector", "[data-row=stats]").text
        assert f"mean {steps.mean.item():.4f}, variance {steps.variance.item():.4f}" in stats
    _set(browser, root, x="1, 2, 3", **{"z = Sublayer(x)": "1, 2"})
    assert root.find_element("css selector", ".il-live-error").text.startswith(
        "z: expected 3 numbers (as many as x), got 2")


def test_label_smoothing_equals_the_package(browser, open_page):
    root = open_page(SMOOTHING, "smoothing")
    params = json.loads(root.get_attribute("data-params"))
    _, _, tgt_vocab = il.data.load_corpus("post")
    assert params["tokens"] == list(tgt_vocab.tokens)
    ids, V0 = params["target_ids"], len(params["tokens"])
    assert [params["tokens"][i] for i in ids] == ["i", "am", "a", "student", "<eos>"]
    for epsilon, V in [(0.1, V0), (0.0, V0), (0.37, 50), (1.0, 200), (0.5, V0)]:
        _set(browser, root, **{"label_smoothing ε": epsilon, "vocabulary size V": V})
        rows = _rows(browser, root)
        targets = il.reference.smooth_labels(ids, V, epsilon)
        entropy = -(targets[0] * np.log(np.where(targets[0] > 0, targets[0], 1))).sum()
        np.testing.assert_allclose(rows["correct"], targets[0, ids[0]], atol=TOL)
        np.testing.assert_allclose(rows["other"], epsilon / V, atol=TOL)
        np.testing.assert_allclose(rows["entropy"], entropy, atol=TOL)
        if V == V0:
            shown = np.array([rows[f"position-{p}"] for p in range(len(ids))])
            np.testing.assert_allclose(shown, targets, atol=TOL)


PANELS = """
const root = arguments[0];
const shown = Array.from(root.querySelectorAll('img.il-live-panel')).filter(i => !i.hidden);
return [root.dataset.shown, shown.map(i => i.dataset.panel)];
"""


@pytest.mark.parametrize("page", [p for p in LIVE_CHAPTERS if p not in (SOFTMAX, POSITIONAL)]
                         + [SOFTMAX])
def test_panels_show_the_picture_of_every_combination(browser, server, page):
    browser.get(f"{server.base_url}/{page}.html")
    roots = browser.find_elements("css selector", ".il-live-panels")
    assert roots, f"{page}: no panels widget"
    for root in roots:
        params = json.loads(root.get_attribute("data-params"))
        controls = params["controls"]
        for combo in itertools.product(*(range(len(c["labels"])) for c in controls)):
            for control, value in zip(controls, combo):
                browser.execute_script(SET, root, control["name"], value)
            key = "-".join(map(str, combo))
            assert browser.execute_script(PANELS, root) == [key, [str(params["panels"][key])]]
        assert len(set(params["panels"].values())) > 1


@pytest.mark.parametrize("page", list(LIVE_CHAPTERS))
def test_no_dead_control(browser, server, page):
    count, dead = dead_controls(browser, f"{server.base_url}/{page}.html")
    assert count >= LIVE_CHAPTERS[page], f"{page}: only {count} controls found"
    assert not dead, f"{page}: controls that change nothing but themselves: {dead}"
