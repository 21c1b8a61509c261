"""The chapter 07-08 widgets: controls wired to compute + plot, defaults, bad starting values."""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from illustrated.explain import loss as L
from illustrated.widgets import decoding as WD
from illustrated.widgets import loss as WL


def _controls(box):
    found = []
    for child in box.children:
        if isinstance(child, widgets.Box):
            found += _controls(child)
        elif not isinstance(child, widgets.Output):
            found.append(child)
    return found


def test_decoding_widget_controls_and_scan(post_trained):
    model, sv, tv = post_trained
    box = WD.decoding_widget(model, sv, tv, "je suis étudiant", step=1)
    text, step, layer, head = _controls(box)
    assert text.value == "je suis étudiant" and step.value == 1
    assert layer.value == model.cfg.n_layers - 1 and head.value == -1
    assert isinstance(box.children[-1], widgets.Output)
    step.value = 9  # past <eos>: shows the last step, no error
    head.value = 0
    with pytest.raises(ValueError, match="step"):
        WD.decoding_widget(model, sv, tv, step=0)


def test_attention_title_names_layer_and_heads():
    assert WD.attention_title(1, None) == "encoder-decoder attention\n(decoder layer 2, mean over heads)"
    assert WD.attention_title(0, 3).endswith("(decoder layer 1, head 3)")


def test_leak_test_widget(post_trained):
    model, sv, tv = post_trained
    box = WD.leak_test_widget(model, sv, tv, position=2, new_word="a")
    slider, menu = _controls(box)
    assert (slider.min, slider.max, slider.value) == (1, 4, 2)
    assert "<bos>" not in menu.options and menu.value == "a"
    slider.value = 4
    with pytest.raises(ValueError, match="position"):
        WD.leak_test_widget(model, sv, tv, position=5, new_word="a")
    with pytest.raises(ValueError, match="new_word"):
        WD.leak_test_widget(model, sv, tv, position=1, new_word="<pad>")


def test_label_smoothing_widget():
    box = WL.label_smoothing_widget(np.array([2, 1]), ["a", "am", "i"], ["1", "2"], epsilon=0.1)
    slider, = _controls(box)
    assert slider.value == pytest.approx(0.1) and slider.max == pytest.approx(0.5)
    slider.value = 0.3
    with pytest.raises(ValueError, match="epsilon"):
        WL.label_smoothing_widget([2], ["a", "am", "i"], ["1"], epsilon=0.7)
    with pytest.raises(ValueError, match="position_labels"):
        WL.label_smoothing_widget([2], ["a", "am", "i"], ["1", "2"])


def test_training_widget_defaults_to_the_trained_model():
    run = L.train_with_snapshots("post", snapshot_steps=[0, 1], steps=2)
    box = WL.training_widget(run)
    slider, = _controls(box)
    assert slider.options == ("0", "1", "2") or [o[0] for o in slider.options] == ["0", "1", "2"]
    assert slider.value == 2
    slider.value = 0
    with pytest.raises(ValueError, match="index"):
        WL.training_widget(run, index=3)
