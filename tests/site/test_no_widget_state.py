"""site/no_widget_state.py, the Sphinx extension that keeps ipywidgets out of the pages: it drops
the saved widget state myst-nb adds to a page's scripts and warns about a page that would show a
widget view. (tests/browser/test_static_site.py checks the built pages themselves.)"""
from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from types import SimpleNamespace

from sphinx.builders.html._assets import _JavaScript

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("no_widget_state", ROOT / "site" / "no_widget_state.py")
no_widget_state = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(no_widget_state)

APP = SimpleNamespace(env=SimpleNamespace(found_docs={"chapters/07_decoder"}))


def _state():
    return _JavaScript(None, type=no_widget_state.WIDGET_STATE, body='{"state": {}}')


def _page(body: str, scripts: list) -> dict:
    context = {"body": body, "script_files": list(scripts)}
    no_widget_state.drop_widget_state(APP, "chapters/07_decoder", "page.html", context, None)
    return context


def test_the_saved_state_is_dropped_and_every_other_script_kept(caplog):
    mathjax = _JavaScript("../_vendor/mathjax/tex-chtml.js", defer="defer")
    api = _JavaScript("../_illustrated/js/api.js", type="module")
    with caplog.at_level(logging.WARNING):
        context = _page("<p>text</p>", [mathjax, _state(), api])
    assert context["script_files"] == [mathjax, api]
    assert not caplog.records


def test_a_widget_view_in_a_page_is_a_warning(caplog):
    body = ('<div class="cell_output"><script type="application/vnd.jupyter.widget-view+json">'
            '{"version_major": 2, "model_id": "abc"}</script></div>')
    with caplog.at_level(logging.WARNING):
        _page(body, [_state()])
    [record] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "chapters/07_decoder" in record.getMessage()
    assert "remove-output" in record.getMessage()
