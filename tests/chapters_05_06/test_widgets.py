"""The widgets of chapters 05-06: controls, defaults (the post's figures), redraw on change."""
from __future__ import annotations

from dataclasses import replace

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest

import illustrated as il
from illustrated.widgets import positional, residual


def test_positional_widget_defaults_to_the_posts_figure():
    box = positional.positional_encoding_widget()
    controls, out = box.children
    n, d, layout = controls.children
    assert isinstance(out, widgets.Output)
    assert (n.value, d.value, layout.value) == (20, 512, "concatenated")
    assert set(layout.options) == {"concatenated", "interleaved"}
    assert d.step == 2
    layout.value = "interleaved"
    n.value = 5
    assert not plt.get_fignums()


@pytest.mark.parametrize("kwargs", [{"d_model": 7}, {"n_positions": 0}, {"layout": "spiral"},
                                    {"n_positions": 300}])
def test_positional_widget_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        positional.positional_encoding_widget(**kwargs)


def test_norm_placement_widget_switches():
    cfg = replace(il.TINY, src_vocab_size=10, tgt_vocab_size=10)
    box = residual.norm_placement_widget(cfg)
    placement, row, out = box.children
    layers, view = row.children
    assert placement.value is False and layers.value == 2
    assert view.value == "encoders and decoders"
    placement.value = True
    view.value = "one encoder layer"
    layers.value = 1
    assert not plt.get_fignums()
    with pytest.raises(ValueError, match="view"):
        residual.norm_placement_widget(cfg, view="side")
    with pytest.raises(ValueError, match="cfg"):
        residual.norm_placement_widget(replace(cfg, n_layers=6))
