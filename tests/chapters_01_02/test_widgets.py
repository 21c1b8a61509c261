"""The widgets of chapters 01-02: their controls, defaults, and that moving a control redraws."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from illustrated import reference  # noqa: E402
from illustrated.widgets import stack  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_stack_widget_defaults_to_the_papers_six_layers():
    box = stack.stack_widget("je suis étudiant", "i am a student")
    slider, out = box.children
    assert isinstance(slider, widgets.IntSlider)
    assert isinstance(out, widgets.Output)
    assert (slider.value, slider.min, slider.max) == (6, 1, 6)
    slider.value = 2  # the callback redraws without error
    assert not plt.get_fignums()  # and closes its figure


@pytest.mark.parametrize("kwargs", [{"n_layers": 0}, {"n_layers": 7}, {"max_layers": 13}])
def test_stack_widget_rejects_bad_sizes(kwargs):
    with pytest.raises(ValueError):
        stack.stack_widget("a", "b", **kwargs)


def test_perturbation_widget_offers_every_word():
    x = np.random.default_rng(0).normal(size=(3, 8))
    params = reference.init_encoder_params(8, 16)
    box = stack.perturbation_widget(x, params, 2, ["je", "suis", "étudiant"])
    controls, out = box.children
    choice, size = controls.children
    assert [label for label, _ in choice.options] == ["0: je", "1: suis", "2: étudiant"]
    assert (choice.value, size.value) == (0, 1.0)
    choice.value = 2
    size.value = 2.5
    assert not plt.get_fignums()
    with pytest.raises(ValueError, match="words"):
        stack.perturbation_widget(x, params, 2, ["je"])
    with pytest.raises(ValueError, match="position"):
        stack.perturbation_widget(x, params, 2, ["a", "b", "c"], position=3)
