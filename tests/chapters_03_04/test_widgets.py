"""The widgets of chapters 03 and 04: their controls and defaults, and the kernel-free players."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from illustrated.plots import matrices as M  # noqa: E402
from illustrated.widgets import attention as W  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_softmax_widget_defaults_are_the_posts_numbers():
    box = W.softmax_widget()
    s1, s2, d_k = box.children[0].children
    assert (s1.value, s2.value, d_k.value) == (112.0, 96.0, 64)
    assert isinstance(box.children[1], widgets.Output)
    with pytest.raises(ValueError, match="d_k"):
        W.softmax_widget(d_k=0)


def test_saturation_widget_offers_powers_of_two():
    box = W.saturation_widget()
    slider = box.children[0]
    assert slider.value == 64 and list(slider.options) == [2 ** i for i in range(11)]
    with pytest.raises(ValueError, match="d_k"):
        W.saturation_widget(d_k=3)


def test_heads_widget_offers_the_divisors():
    box = W.heads_widget()
    assert list(box.children[0].options) == [1, 2, 4, 8] and box.children[0].value == 2
    with pytest.raises(ValueError, match="n_heads"):
        W.heads_widget(n_heads=3)


@pytest.mark.parametrize("n_heads", [1, 4])
def test_head_split_picture_follows_n_heads(n_heads):
    fig = W.draw_head_split(8, n_heads)
    names = [t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").endswith("/name")]
    assert names.count("X") == 1
    assert len([n for n in names if n.startswith("$Z_{")]) == n_heads
    assert f"d_k = d_model / n_heads = 8 / {n_heads} = {8 // n_heads}" in fig._suptitle.get_text()


def test_players_are_html_with_one_frame_per_setting():
    html = W.softmax_player(scores_2=[96, 112])
    assert "<script" in html and html.count("data:image/png;base64") >= 2
    html = W.heads_player(d_model=2)
    assert html.count("data:image/png;base64") >= 2
    html = W.saturation_player(d_k_values=[1, 64])
    assert html.count("data:image/png;base64") >= 2
    with pytest.raises(ValueError, match="scores_2"):
        W.softmax_player(scores_2=[])


def test_matrix_term_is_exported():
    assert "MatrixTerm" in M.__all__
