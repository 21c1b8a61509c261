"""Chapter 05: order blindness, the positional vectors in both layouts, the shift matrix M_k."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch05, kit

WORDS = ["je", "suis", "étudiant"]
POST_D4 = [[0, 0, 1, 1], [0.8415, 0.0001, 0.5403, 1.0], [0.9093, 0.0002, -0.4161, 1.0]]


@pytest.fixture(scope="module")
def fr_en():
    return il.pretrained("fr-en")


def test_the_posts_d4_example_is_written_in_the_figure(legible, width):
    pe = il.reference.positional_encoding(3, 4, "concatenated")
    np.testing.assert_allclose(pe, POST_D4, atol=5e-5)
    fig = ch05.draw_vectors({"positional\nvector": pe}, WORDS, values=True, vmax=1.0,
                            names={"positional\nvector": ["p0", "p1", "p2"]}, width=width)
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes[:3]]
    assert texts == [["0", "0", "1", "1"], ["0.8415", "0.0001", "0.5403", "1"],
                     ["0.9093", "0.0002", "-0.4161", "1"]]
    assert [ax.get_title() or ax.get_title("left") for ax in fig.axes[:3]] == WORDS
    assert [ax.get_xlabel() for ax in fig.axes[:3]] == ["p0", "p1", "p2"]
    legible(fig, width)


def test_draw_vectors_draws_each_row_of_each_kind(legible, width):
    rng = np.random.default_rng(0)
    rows = {"embedding": rng.normal(size=(3, 64)), "+ position": rng.normal(size=(3, 64)),
            "= input": rng.normal(size=(3, 64))}
    fig = ch05.draw_vectors(rows, WORDS, title="t", width=width)
    assert len(fig.axes) == 10  # 3 x 3 strips and a colour bar
    for r, array in enumerate(rows.values()):
        for i in range(3):
            np.testing.assert_array_equal(fig.axes[3 * r + i].images[0].get_array()[0], array[i])
    assert [fig.axes[3 * r].get_ylabel() for r in range(3)] == list(rows)
    assert not fig.axes[0].texts  # 64 values are not written
    legible(fig, width)


def test_the_shipped_models_input_is_embedding_plus_the_papers_table(fr_en):
    model, src_vocab, _ = fr_en
    t = il.trace(model, "je suis étudiant", src_vocab=src_vocab)
    table = il.reference.positional_encoding(3, model.cfg.d_model, "interleaved")
    assert model.cfg.pe_layout == "interleaved"
    np.testing.assert_allclose(t.src_positions, table, atol=1e-6)
    np.testing.assert_allclose(t.encoder_input, t.src_embeddings + table, atol=1e-5)
    assert [name for name, _ in model.positional.named_parameters()] == []


def test_order_blindness_without_and_with_positions(legible, width):
    b = ch05.order_blindness("the dog bit the man", "the man bit the dog")
    assert b.permutation == [0, 4, 2, 3, 1]
    assert [b.words_a[i] for i in b.permutation] == b.words_b
    np.testing.assert_allclose(b.z_b, b.z_a[b.permutation], atol=1e-12)
    assert np.abs(b.z_b_positions - b.z_a_positions[b.permutation]).max() > 0.1
    # Both "the" get one vector without positions, two different ones with them.
    np.testing.assert_allclose(b.z_a[0], b.z_a[3], atol=1e-12)
    assert np.abs(b.z_a_positions[0] - b.z_a_positions[3]).max() > 0.01
    fig = ch05.draw_order_blindness(b, width=width)
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 4
    assert [t.get_text() for t in heatmaps[1].get_yticklabels()] == b.words_b
    np.testing.assert_array_equal(heatmaps[3].images[0].get_array(), b.z_b_positions)
    legible(fig, width)


def test_an_encoder_layer_of_the_shipped_model_is_order_blind(fr_en):
    layer = fr_en[0].encoder.layers[0]
    x = torch.randn(1, 5, fr_en[0].cfg.d_model, generator=torch.Generator().manual_seed(0))
    order = torch.tensor([0, 4, 2, 3, 1])
    with torch.no_grad():
        torch.testing.assert_close(layer(x[:, order]), layer(x)[:, order])


def test_compare_layouts_is_not_a_permutation():
    c = ch05.compare_layouts(20, 512)
    np.testing.assert_array_equal(c.concatenated,
                                  il.reference.positional_encoding(20, 512, "concatenated"))
    np.testing.assert_array_equal(c.interleaved,
                                  il.reference.positional_encoding(20, 512, "interleaved"))
    np.testing.assert_array_equal(c.regrouped[:, :256], c.interleaved[:, 0::2])
    np.testing.assert_array_equal(c.regrouped[:, 256:], c.interleaved[:, 1::2])
    assert c.max_difference == pytest.approx(np.abs(c.concatenated - c.regrouped).max())
    assert c.max_difference == pytest.approx(0.0271, abs=5e-5)
    # Same first frequency, different spacing after it: the last is 1e-4 vs 10000^(-510/512).
    assert c.frequencies_concatenated[0] == c.frequencies_interleaved[0] == 1.0
    assert c.frequencies_concatenated[-1] == pytest.approx(1e-4)
    assert c.frequencies_interleaved[-1] == pytest.approx(10000 ** (-510 / 512))
    assert 0.01 < c.worst_column_match <= c.max_difference + 1e-12
    assert ch05.compare_layouts(200, 512).max_difference > 10 * c.max_difference


@pytest.mark.parametrize("split", [True, False])
def test_draw_table_shows_the_table(split, legible, width):
    pe = il.reference.positional_encoding(20, 512, "concatenated")
    fig = ch05.draw_table(pe, title="post", split=split, width=width)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), pe)
    assert ax.images[0].get_clim() == (-1, 1)
    assert [t.get_text() for t in ax.texts] == (["sin", "cos"] if split else [])
    assert ax.get_title() == "post"
    legible(fig, width)


def test_an_interleaved_table_is_drawn_in_windows_of_columns_wide_enough_to_read(legible, width):
    """Issue 33: 512 interleaved columns in one picture alias into a moiré; each window shows its
    columns exactly, each column at least 3 pixels wide, so that sin and cos columns alternate
    visibly."""
    pe = il.reference.positional_encoding(20, 512, "interleaved")
    windows = [(0, 64), (448, 512)]
    fig = ch05.draw_table(pe, title="paper", windows=windows, width=width)
    fig.draw(fig.canvas.get_renderer())
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 2
    for ax, (first, stop) in zip(panels, windows):
        np.testing.assert_array_equal(ax.images[0].get_array(), pe[:, first:stop])
        assert ax.images[0].get_interpolation() == "nearest"
        assert ax.get_window_extent().width / (stop - first) >= 3
        assert ax.get_xticklabels()[0].get_text() == str(first)
    legible(fig, width)


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
@pytest.mark.parametrize("position", [0, 7, 19])
def test_draw_position_frames_the_row_and_draws_its_sines_and_cosines(position, width, legible):
    """The explorer reads the models' interleaved table: the framed row, drawn as its sines (even
    dimensions) and its cosines (odd dimensions) over the frequencies."""
    pe = il.reference.positional_encoding(20, 64, "interleaved")
    fig = ch05.draw_position(pe, position, width=width)
    top, bottom = fig.axes[0], fig.axes[1]
    np.testing.assert_array_equal(top.images[0].get_array(), pe)
    assert top.patches[0].get_y() == position - 0.5
    sines, cosines = (line.get_ydata() for line in bottom.lines)
    np.testing.assert_array_equal(sines, pe[position, 0::2])
    np.testing.assert_array_equal(cosines, pe[position, 1::2])
    w = il.reference.positional_frequencies(64, "interleaved")
    np.testing.assert_allclose(sines, np.sin(position * w), atol=1e-12)
    assert f"position {position}" in bottom.get_title()
    # the legend names the frequency as the text does, ω with subscript i (mathtext), not "ω_i"
    legend = [t.get_text() for t in bottom.get_legend().get_texts()]
    assert all(r"\omega_i" in t and "ω_i" not in t for t in legend), legend
    fig.draw(fig.canvas.get_renderer())
    assert fig.get_tightbbox().width <= width + 0.05
    legible(fig)


def test_draw_shift_shows_that_m_k_moves_every_position(legible, width):
    fig = ch05.draw_shift(k=3, position=5, d_model=16, width=width)
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(),
                                  il.reference.relative_position_matrix(3, 16))
    pe = il.reference.positional_encoding(9, 16)
    columns = [ax.images[0].get_array()[:, 0] for ax in fig.axes[1:4]]
    np.testing.assert_array_equal(columns[0], pe[5])
    np.testing.assert_allclose(columns[1], pe[8], atol=1e-12)  # M_3 PE(5) = PE(8)
    np.testing.assert_array_equal(columns[2], pe[8])
    assert [ax.get_title() for ax in fig.axes[1:4]] == ["PE(5)", "M_3 PE(5)", "PE(8)"]
    legible(fig, width)


def test_figures_are_closed_by_legible():
    assert not plt.get_fignums()
