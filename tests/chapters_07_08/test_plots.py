"""The chapter 07-08 plots draw what they are given: axes, titles, texts and artist data."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from illustrated.plots import decoding as P
from illustrated.plots import distributions as Q

TOKENS = ["a", "am", "i", "thanks", "student", "<eos>", "<pad>", "<bos>", "<unk>"]
SOURCE = ["je", "suis", "étudiant"]


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def _heights(ax):
    return np.array([p.get_height() for p in ax.patches])


def test_plot_vocabulary_writes_words_and_indexes():
    fig = Q.plot_vocabulary(TOKENS[:6])
    ax, = fig.axes
    texts = _texts(ax)  # row by row: the row's label, then one text per cell
    assert texts == ["word", *TOKENS[:6], "index", *[str(i) for i in range(6)]]
    assert len(ax.patches) == 12 and ax.get_title() == "output vocabulary"
    with pytest.raises(ValueError, match="ids"):
        Q.plot_vocabulary(TOKENS[:6], ids=[0, 1])


def test_plot_one_hot_colours_the_one_cell():
    vector = np.eye(6)[1]
    fig = Q.plot_one_hot(TOKENS[:6], vector, title="am")
    ax, = fig.axes
    assert _texts(ax) == ["word", *TOKENS[:6], "value", "0", "1", "0", "0", "0", "0"]
    value_cells = ax.patches[6:]
    colours = {tuple(p.get_facecolor()) for i, p in enumerate(value_cells) if i != 1}
    assert len(colours) == 1 and tuple(value_cells[1].get_facecolor()) not in colours
    with pytest.raises(ValueError, match="vector"):
        Q.plot_one_hot(TOKENS[:6], np.ones(5))


def test_plot_distributions_one_axes_per_row_and_position():
    rng = np.random.default_rng(0)
    model = rng.dirichlet(np.ones(9), size=5)
    target = np.eye(9)[[2, 1, 0, 4, 5]]
    fig = Q.plot_distributions({"model": model, "target": target}, TOKENS,
                               position_labels=list("12345"), highlight=[2, 1, 0, 4, 5],
                               title="t")
    assert len(fig.axes) == 10 and fig._suptitle.get_text() == "t"
    for p in range(5):
        np.testing.assert_allclose(_heights(fig.axes[p]), model[p])
        np.testing.assert_allclose(_heights(fig.axes[5 + p]), target[p])
        assert fig.axes[p].get_title() == str(p + 1)
        widths = [b.get_linewidth() for b in fig.axes[p].patches]
        assert widths[[2, 1, 0, 4, 5][p]] == 2.0 and sorted(widths)[-2] < 2.0
    assert fig.axes[0].get_ylabel() == "model" and fig.axes[5].get_ylabel() == "target"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == TOKENS


def test_plot_distributions_single_vector_annotate_log_and_reuse():
    q = np.full(9, 1 / 9)
    fig = Q.plot_distributions({"uniform": q}, TOKENS, annotate=True, log=True)
    ax, = fig.axes
    assert _texts(ax) == ["0.11"] * 9 and ax.get_yscale() == "log"
    again = Q.plot_distributions({"a": np.eye(9)[:2], "b": np.eye(9)[:2]}, TOKENS, fig=fig)
    assert again is fig and len(fig.axes) == 4


def test_update_distributions_moves_only_the_bars():
    fig = Q.plot_distributions({"step 0": np.full((2, 9), 1 / 9)}, TOKENS, annotate=True)
    new = np.eye(9)[[3, 5]]
    Q.update_distributions(fig, {"step 9": new})
    for p in range(2):
        np.testing.assert_allclose(_heights(fig.axes[p]), new[p])
    assert fig.axes[0].get_ylabel() == "step 9"
    assert _texts(fig.axes[1])[5] == "1.00"
    with pytest.raises(ValueError, match="rows"):
        Q.update_distributions(fig, {"x": np.eye(9)[:3]})
    with pytest.raises(ValueError, match="rows"):
        Q.update_distributions(fig, {"x": np.eye(8)[:2]})


def test_plot_distributions_rejects_mismatches():
    with pytest.raises(ValueError, match="rows"):
        Q.plot_distributions({}, TOKENS)
    with pytest.raises(ValueError, match="rows"):
        Q.plot_distributions({"a": np.ones((2, 8))}, TOKENS)
    with pytest.raises(ValueError, match="rows"):
        Q.plot_distributions({"a": np.ones((2, 9)), "b": np.ones((3, 9))}, TOKENS)
    with pytest.raises(ValueError, match="highlight"):
        Q.plot_distributions({"a": np.ones((2, 9))}, TOKENS, highlight=[1])


def test_plot_decoding_step_draws_input_attention_and_bars():
    weights = np.array([[0.5, 0.4, 0.1], [0.2, 0.7, 0.1]])
    fig = P.plot_decoding_step(SOURCE, ["<bos>", "i"], weights, ["am", "have"], [0.9, 0.05],
                               "am", step=2, n_rows=5, attention_title="layer 2")
    boxes, heat, bars = fig.axes
    assert [t for t in _texts(boxes) if t] == ["<bos>", "i", "am"]
    image = heat.images[0].get_array()
    np.testing.assert_allclose(image[:2], weights)
    assert image.shape == (5, 3) and image.mask[2:].all() and not image.mask[:2].any()
    assert [t.get_text() for t in heat.get_xticklabels()] == SOURCE
    assert heat.get_title() == "layer 2"
    np.testing.assert_allclose([p.get_width() for p in bars.patches], [0.9, 0.05])
    assert bars.patches[0].get_facecolor() != bars.patches[1].get_facecolor()
    assert "step 2" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="n_rows"):
        P.plot_decoding_step(SOURCE, ["<bos>", "i"], weights, ["am"], [0.9], "am", step=2, n_rows=1)
    with pytest.raises(ValueError, match="cross_attention"):
        P.plot_decoding_step(SOURCE, ["<bos>"], weights, ["am"], [0.9], "am", step=1)


def test_plot_decoding_grid_one_column_per_step():
    att = [np.array([0.6, 0.3, 0.1]), np.array([0.1, 0.8, 0.1])]
    fig = P.plot_decoding_grid(SOURCE, [["<bos>"], ["<bos>", "i"]], att, [["i", "a"], ["am"]],
                               [np.array([0.9, 0.1]), np.array([0.99])], ["i", "am"])
    assert len(fig.axes) == 4
    np.testing.assert_allclose(_heights(fig.axes[0]), att[0])
    np.testing.assert_allclose(_heights(fig.axes[1]), att[1])
    np.testing.assert_allclose([p.get_width() for p in fig.axes[3].patches], [0.99])
    assert fig.axes[1].get_title() == "step 2\n<bos> i" and "am" in fig.axes[3].get_xlabel()
    with pytest.raises(ValueError, match="top_tokens"):
        P.plot_decoding_grid(SOURCE, [["<bos>"]], att[:1], [], [], ["i"])


def test_plot_causal_mask_shows_the_mask_and_the_weights():
    mask = np.tril(np.ones((4, 4), dtype=bool))
    weights = np.tril(np.full((4, 4), 0.25))
    fig = P.plot_causal_mask(["<bos>", "i", "am", "a"], mask, weights)
    left, right = fig.axes[:2]
    np.testing.assert_array_equal(left.images[0].get_array(), mask.astype(float))
    assert _texts(left).count("−∞") == 6 and _texts(left).count("0") == 10
    np.testing.assert_allclose(right.images[0].get_array(), weights)
    assert len(P.plot_causal_mask(["x", "y"], np.tril(np.ones((2, 2)))).axes) == 1
    with pytest.raises(ValueError, match="mask"):
        P.plot_causal_mask(["x"], mask)


def test_plot_leak_test_two_groups_of_bars():
    masked, unmasked = np.array([0, 0, 0.3, 0.1]), np.array([0.2, 0.4, 0.3, 0.1])
    fig = P.plot_leak_test(["<bos>", "i", "a→the", "student"], masked, unmasked, position=2)
    ax, = fig.axes
    np.testing.assert_allclose([b.get_height() for b in ax.containers[0]], masked)
    np.testing.assert_allclose([b.get_height() for b in ax.containers[1]], unmasked)
    assert "0.00" in _texts(ax) and "position 2" in ax.get_title()
    again = P.plot_leak_test(["a", "b", "c", "d"], masked, unmasked, position=1, ymax=2, fig=fig)
    assert again is fig and fig.axes[0].get_ylim() == (0, 2)
    with pytest.raises(ValueError, match="position"):
        P.plot_leak_test(["a", "b", "c", "d"], masked, unmasked, position=4)


def test_plot_output_softmax_from_vector_to_word():
    x = np.linspace(-1, 1, 8)
    fig = P.plot_output_softmax(x, ["am", "have"], [5.0, 1.0], [0.98, 0.02], "am", vocab_size=48,
                                chosen_index=5)
    vec, logit_ax, prob_ax, word_ax = fig.axes
    np.testing.assert_allclose(vec.images[0].get_array(), x[None, :])
    np.testing.assert_allclose(_heights(logit_ax), [5.0, 1.0])
    np.testing.assert_allclose(_heights(prob_ax), [0.98, 0.02])
    assert _texts(logit_ax) == ["5.00", "1.00"] and "48 words" in logit_ax.get_title()
    assert _texts(word_ax) == ["argmax (cell 5) → output word: 'am'"]
    with pytest.raises(ValueError, match="probs"):
        P.plot_output_softmax(x, ["am", "have"], [5.0, 1.0], [1.0], "am")


def test_plots_return_figures_without_leaking_open_ones():
    before = len(plt.get_fignums())
    fig = Q.plot_vocabulary(["a"])
    assert len(plt.get_fignums()) == before + 1 and fig.axes
