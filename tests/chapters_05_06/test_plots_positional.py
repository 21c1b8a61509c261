"""Chapter 05's drawings: what they draw (images, texts, lines), never pixels."""
from __future__ import annotations

import numpy as np
import pytest

import illustrated as il
from illustrated.plots import positional as P


@pytest.mark.parametrize("value, text", [(0.84147, "0.8415"), (0.0001, "0.0001"), (1.0, "1"),
                                         (0.0, "0"), (-0.4161468, "-0.4161"), (-1e-9, "0")])
def test_format_value_writes_like_the_post(value, text):
    assert P.format_value(value) == text


def test_plot_vector_rows_draws_every_vector():
    rng = np.random.default_rng(0)
    rows = {"embedding": rng.normal(size=(3, 6)), "positional": rng.normal(size=(3, 6)),
            "input": rng.normal(size=(3, 6))}
    fig = P.plot_vector_rows(rows, ["a", "b", "c"], symbols=["+", "="], title="t")
    axes = fig.axes[:9]
    assert len(fig.axes) == 10  # 3 x 3 strips and a colour bar
    for r, array in enumerate(rows.values()):
        for i in range(3):
            np.testing.assert_allclose(axes[3 * r + i].images[0].get_array()[0], array[i])
    assert [ax.get_title() for ax in axes[:3]] == ["a", "b", "c"]
    assert [axes[3 * r].get_ylabel() for r in range(3)] == list(rows)
    assert fig.get_suptitle() == "t"
    assert [t.get_text() for t in fig.texts if t.get_text() != "t"] == ["+", "="]
    assert len(axes[0].texts) == 6  # d <= 8: values written
    with pytest.raises(ValueError, match="symbols"):
        P.plot_vector_rows(rows, ["a", "b", "c"], symbols=["+"])
    with pytest.raises(ValueError, match="words"):
        P.plot_vector_rows(rows, ["a", "b"])
    with pytest.raises(ValueError, match="rows"):
        P.plot_vector_rows({"x": np.zeros((3, 2)), "y": np.zeros((3, 4))}, ["a", "b", "c"])


def test_plot_position_boxes_writes_the_posts_values():
    pe = il.reference.positional_encoding(3, 4, "concatenated")
    fig = P.plot_position_boxes(pe, ["je", "suis", "étudiant"])
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes[:3]]
    assert texts == [["0", "0", "1", "1"], ["0.8415", "0.0001", "0.5403", "1"],
                     ["0.9093", "0.0002", "-0.4161", "1"]]
    assert [ax.get_xlabel() for ax in fig.axes[:3]] == ["t1 (position 0)", "t2 (position 1)",
                                                        "t3 (position 2)"]


def test_plot_positional_heatmap_shows_the_table():
    pe = il.reference.positional_encoding(20, 512, "concatenated")
    fig = P.plot_positional_heatmap(pe, title="post", split=True)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), pe)
    assert ax.images[0].get_clim() == (-1, 1)
    assert [t.get_text() for t in ax.texts] == ["sin", "cos"]
    assert len(ax.lines) == 1 and ax.get_title() == "post"
    fig2 = P.plot_positional_heatmap(pe[:5, :8], fig=fig)
    assert fig2 is fig and fig.axes[0].images[0].get_array().shape == (5, 8)
    assert not fig.axes[0].texts
    with pytest.raises(ValueError, match="pe"):
        P.plot_positional_heatmap(np.zeros(5))


def test_plot_layout_difference_and_frequency_spacing():
    a, b = np.ones((4, 6)), np.zeros((4, 6))
    fig = P.plot_layout_difference(a, b, a - b)
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 3
    np.testing.assert_array_equal(heatmaps[2].images[0].get_array(), a - b)
    with pytest.raises(ValueError, match="regrouped"):
        P.plot_layout_difference(a, np.zeros((4, 5)), a)
    fig = P.plot_frequency_spacing({"p": [1, 0.1, 0.01], "t": [1, 0.2, 0.02]}, ratio=[1, 2, 3])
    assert len(fig.axes) == 2
    assert [line.get_label() for line in fig.axes[0].lines] == ["p", "t"]
    np.testing.assert_array_equal(fig.axes[1].lines[0].get_ydata(), [1, 2, 3])
    assert fig.axes[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="frequencies"):
        P.plot_frequency_spacing({"p": [1, 2], "t": [1]})


def test_plot_relative_shift_draws_matrix_and_three_vectors():
    M = il.reference.relative_position_matrix(2, 4)
    v = np.arange(4.0) / 4
    fig = P.plot_relative_shift(M, v, v, v, k=2, position=1)
    assert len(fig.axes) == 4
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), M)
    assert [ax.get_title() for ax in fig.axes[1:]] == ["PE(1)", "M_2 PE(1)", "PE(3)"]
    np.testing.assert_array_equal(fig.axes[2].images[0].get_array()[:, 0], v)
    with pytest.raises(ValueError, match="rotated"):
        P.plot_relative_shift(M, v, v[:3], v, k=2, position=1)


def test_plot_order_blindness_labels_rows_with_words():
    z = np.arange(12.0).reshape(3, 4)
    fig = P.plot_order_blindness(z, z, z, z, ["a", "b", "c"], ["c", "b", "a"])
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 4
    assert [t.get_text() for t in heatmaps[1].get_yticklabels()] == ["c", "b", "a"]
    with pytest.raises(ValueError, match="words_b"):
        P.plot_order_blindness(z, z, z, z, ["a", "b", "c"], ["a"])


def test_position_scan_and_player():
    pe = il.reference.positional_encoding(4, 8, "interleaved")
    fig = P.plot_position_scan(pe, 2)
    np.testing.assert_array_equal(fig.axes[1].lines[0].get_ydata(), pe[2])
    assert fig.axes[0].patches[0].get_y() == 1.5
    P.update_position_scan(fig, pe, 3)
    np.testing.assert_array_equal(fig.axes[1].lines[0].get_ydata(), pe[3])
    assert "position 3" in fig.axes[1].get_title()
    with pytest.raises(ValueError, match="position"):
        P.update_position_scan(fig, pe, 4)
    html = P.position_player(pe)
    assert "<script" in html and "animation" in html.lower()
