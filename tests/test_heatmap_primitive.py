"""The one heatmap of plots/ (issue 14): primitives.heatmap draws the values it is given, writes
them with format_value in a colour that reads on its cell, and puts the labels on the ticks;
primitives.colorbar gives every heatmap the same bar; and every heatmap-drawing public function
keeps its colour bar's label (and every other text) inside the figure, where a player (which
shows the whole figure, not a crop) can show it.
"""
from __future__ import annotations

import pathlib
import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize, to_rgb
from matplotlib.text import Text

from illustrated.plots import attention, decoding, playground, positional, primitives, vectors
from illustrated.plots.primitives import (COLORBAR_PAD_IN, COLORBAR_WIDTH_IN, colorbar,
                                          format_value, heatmap, ink_on)
from illustrated.plots.style import COLORS, DIVERGING_CMAP

matplotlib.use("Agg")

INK = COLORS["text"]
RNG = np.random.default_rng(14)
WORDS = "the animal didn't cross the street because it was too tired".split()
SOURCE = ["je", "suis", "étudiant", "<eos>"]


def _probs(*shape):
    x = np.exp(2 * RNG.standard_normal(shape))
    return x / x.sum(axis=-1, keepdims=True)


def _contrast(a, b) -> float:
    lum = [primitives._luminance(c) for c in (a, b)]
    return (max(lum) + 0.05) / (min(lum) + 0.05)


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


# --- primitives.heatmap -------------------------------------------------------------------------

def test_heatmap_draws_the_values_unchanged_on_the_given_scale(ax):
    values = RNG.standard_normal((3, 5))
    before = values.copy()
    image = heatmap(ax, values, cmap=DIVERGING_CMAP, vmin=-2.0, vmax=3.0)
    np.testing.assert_array_equal(image.get_array(), values)
    np.testing.assert_array_equal(values, before)  # the input is not touched
    assert image.get_clim() == (-2.0, 3.0)
    assert image.get_cmap().name == DIVERGING_CMAP
    assert list(ax.images) == [image] and not ax.texts  # nothing written unless asked


def test_heatmap_takes_a_shared_norm_and_leaves_nan_cells_blank(ax):
    norm = Normalize(-1.0, 1.0)
    values = np.array([[0.5, np.nan], [-0.25, 1.0]])
    image = heatmap(ax, values, norm=norm, annotate=True)
    assert image.norm is norm
    array = image.get_array()
    assert array.mask.tolist() == [[False, True], [False, False]]
    np.testing.assert_array_equal(array[~array.mask], [0.5, -0.25, 1.0])
    assert [t.get_text() for t in ax.texts] == ["0.50", "-0.25", "1"]


def test_heatmap_writes_format_value_in_a_colour_that_reads_on_its_cell(ax):
    values = np.array([[0.0, 0.004, 0.25], [0.5, 0.88, 1.0]])
    image = heatmap(ax, values, vmin=0.0, vmax=1.0, annotate=True, gid="w")
    texts = {t.get_gid(): t for t in ax.texts}
    assert len(texts) == values.size
    for (i, j), v in np.ndenumerate(values):
        text = texts[f"w-value-{i}-{j}"]
        assert text.get_text() == format_value(v)
        assert text.get_position() == (j, i)
        assert text.get_ha() == "center" and text.get_va() == "center"
        cell = image.cmap(image.norm(v))
        assert text.get_color() == ink_on(cell)
        other = "white" if text.get_color() == INK else INK
        assert _contrast(text.get_color(), cell) >= _contrast(other, cell)
    # viridis: dark purple at 0 (white text), yellow at 1 (dark ink)
    assert texts["w-value-0-0"].get_color() == "white"
    assert texts["w-value-1-2"].get_color() == INK
    assert [texts[f"w-value-0-{j}"].get_text() for j in range(3)] == ["0", "0", "0.25"]


def test_heatmap_takes_a_format_string_or_function(ax):
    heatmap(ax, [[0.5, 1.0]], annotate=True, fmt="{:.3f}")
    heatmap(ax, [[1.0, 0.0]], annotate=True, fmt=lambda v: "0" if v else "−∞")
    assert [t.get_text() for t in ax.texts] == ["0.500", "1.000", "0", "−∞"]
    with pytest.raises(ValueError, match="fmt"):
        heatmap(ax, [[1.0]], annotate=True, fmt=3)


def test_heatmap_puts_the_labels_on_the_ticks(ax):
    heatmap(ax, np.zeros((2, 3)), row_labels=["a", "b"], col_labels=["x", "y", "z"],
            col_rotation=45, label_fontsize=9)
    assert list(ax.get_xticks()) == [0, 1, 2] and list(ax.get_yticks()) == [0, 1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert all(t.get_rotation() == 45 and t.get_ha() == "right" for t in ax.get_xticklabels())
    assert all(t.get_fontsize() == 9 for t in ax.get_yticklabels())


def test_heatmap_without_labels_keeps_numbers_and_empty_labels_remove_ticks():
    fig, (left, right) = plt.subplots(1, 2)
    heatmap(left, np.zeros((20, 30)))
    heatmap(right, np.zeros((20, 30)), row_labels=(), col_labels=())
    assert len(left.get_xticks()) > 1 and len(left.get_yticks()) > 1
    assert len(right.get_xticks()) == 0 and len(right.get_yticks()) == 0
    plt.close(fig)


@pytest.mark.parametrize("values, kwargs, name", [
    (np.zeros(3), {}, "values"),
    (np.zeros((0, 3)), {}, "values"),
    (np.zeros((2, 3)), {"row_labels": ["a"]}, "row_labels"),
    (np.zeros((2, 3)), {"col_labels": ["a", "b"]}, "col_labels"),
    (np.zeros((2, 3)), {"vmin": 1.0, "vmax": 0.0}, "vmin"),
    (np.zeros((2, 3)), {"vmin": 0.0, "norm": Normalize(0, 1)}, "norm"),
])
def test_heatmap_rejects_bad_input(ax, values, kwargs, name):
    with pytest.raises(ValueError, match=name):
        heatmap(ax, values, **kwargs)


@pytest.mark.parametrize("fill, ink", [("black", "white"), ("white", INK), ("#440154", "white"),
                                       ("#fde725", INK), ("#053061", "white"), ("#f7f7f7", INK)])
def test_ink_on_picks_the_higher_contrast(fill, ink):
    assert ink_on(fill) == ink
    assert ink_on(to_rgb(fill) + (0.5,)) == ink  # alpha is ignored


# --- primitives.colorbar ------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["constrained", None])
def test_colorbar_has_one_size_and_its_label(layout):
    fig, axes = plt.subplots(1, 2, figsize=(6, 3), layout=layout)
    image = heatmap(axes[0], np.eye(3), vmin=0, vmax=1)
    heatmap(axes[1], np.eye(3), vmin=0, vmax=1)
    if layout is None:
        fig.subplots_adjust(right=1 - primitives.COLORBAR_ROOM_IN / 6)
    bar = colorbar(fig, image, axes, label="weight")
    fig.canvas.draw()
    assert bar.mappable is image and bar.ax.get_ylabel() == "weight"
    box = bar.ax.get_position()
    thick = box.width * 6
    assert thick == pytest.approx(COLORBAR_WIDTH_IN, rel=0.05)
    gap = (box.x0 - axes[1].get_position().x1) * 6
    assert gap == pytest.approx(COLORBAR_PAD_IN, abs=0.06)
    assert box.height == pytest.approx(axes[1].get_position().height, rel=0.02)
    plt.close(fig)


def test_colorbar_of_patches_takes_a_scalar_mappable(ax):
    mappable = ScalarMappable(norm=Normalize(-1, 1), cmap=DIVERGING_CMAP)
    bar = colorbar(ax.figure, mappable, ax)
    assert bar.mappable is mappable and bar.ax.get_ylabel() == ""
    with pytest.raises(ValueError, match="ax"):
        colorbar(ax.figure, mappable, [])


# --- every heatmap of plots/ ------------------------------------------------------------------------

def _player_figure():
    return plt.figure(dpi=72)


HEATMAPS = {
    "attention.plot_attention_heatmaps": lambda: attention.plot_attention_heatmaps(
        _probs(4, 5, 5), WORDS[:5], WORDS[:5], titles=[f"head {h}" for h in range(4)],
        suptitle="layer 1"),
    "attention.plot_attention_heatmaps (wide)": lambda: attention.plot_attention_heatmaps(
        _probs(2, 8, 12), [f"layer {i // 4}, head {i % 4}" for i in range(8)],
        [WORDS + ["<eos>"]] * 2, ncols=2, vmax=0.5),
    "decoding.plot_decoding_step": lambda: decoding.plot_decoding_step(
        SOURCE, ["<bos>", "i", "am"], _probs(3, 4), ["a", "the"], [0.7, 0.2], "a", step=3,
        n_rows=5),
    "decoding.plot_causal_mask": lambda: decoding.plot_causal_mask(
        ["<bos>", "i", "am", "a"], np.tril(np.ones((4, 4), bool)), np.tril(_probs(4, 4))),
    "decoding.plot_output_softmax": lambda: decoding.plot_output_softmax(
        RNG.standard_normal(64), ["a", "am", "i"], [2.0, 1.0, 0.5], [0.6, 0.3, 0.1], "a"),
    "playground.plot_cross_attention": lambda: playground.plot_cross_attention(
        _probs(5, 4), SOURCE, ["i", "am", "a", "student", "<eos>"], title="layer 2"),
    "positional.plot_vector_rows": lambda: positional.plot_vector_rows(
        {"embedding x": 0.01 * RNG.standard_normal((3, 64)),
         "positional\nencoding t": np.clip(RNG.standard_normal((3, 64)), -1, 1)},
        SOURCE[:3], symbols=["+"], title="x + t"),
    "positional.plot_position_boxes": lambda: positional.plot_position_boxes(
        np.clip(RNG.standard_normal((3, 4)), -1, 1), SOURCE[:3], title="d_model = 4"),
    "positional.plot_positional_heatmap": lambda: positional.plot_positional_heatmap(
        np.clip(RNG.standard_normal((20, 128)), -1, 1), split=True, title="post"),
    "positional.plot_positional_heatmap (player)": lambda: positional.plot_positional_heatmap(
        np.clip(RNG.standard_normal((20, 128)), -1, 1), fig=_player_figure()),
    "positional.plot_layout_difference": lambda: positional.plot_layout_difference(
        np.ones((20, 64)), np.zeros((20, 64)), 1e-3 * RNG.standard_normal((20, 64)), title="t"),
    "positional.plot_relative_shift": lambda: positional.plot_relative_shift(
        np.eye(8), np.ones(8), np.ones(8), np.ones(8), k=1, position=2, title="shift"),
    "positional.plot_order_blindness": lambda: positional.plot_order_blindness(
        *RNG.standard_normal((4, 5, 8)), "the dog bit the man".split(),
        "the man bit the dog".split(), title="z"),
    "positional.plot_position_scan": lambda: positional.plot_position_scan(
        np.clip(RNG.standard_normal((10, 32)), -1, 1), 3, title="scan"),
    "vectors.vector_rows": lambda: vectors.vector_rows(
        RNG.standard_normal((3, 64)), SOURCE[:3], title="64 numbers"),
    "vectors.vector_rows (small values)": lambda: vectors.vector_rows(
        0.013 * RNG.standard_normal((3, 12)), SOURCE[:3], show_values=False),
    "vectors.encoder_flow": lambda: vectors.encoder_flow(
        *RNG.standard_normal((3, 3, 64)), SOURCE[:3], title="first encoder"),
    "vectors.encoder_flow (two words)": lambda: vectors.encoder_flow(
        *(0.001 * RNG.standard_normal((3, 2, 16))), ["Thinking", "Machines"]),
    "vectors.change_heatmaps": lambda: vectors.change_heatmaps(
        {"attention output z": np.abs(RNG.standard_normal((11, 64))),
         "encoder output r": np.abs(RNG.standard_normal((11, 64)))}, WORDS, perturbed=3,
        row_change={"attention output z": np.abs(RNG.standard_normal(11)),
                    "encoder output r": np.abs(RNG.standard_normal(11))},
        title="nudging the input of 'cross'"),
    # chapter 02's player: small changes (wide tick labels), the whole figure shown
    "vectors.change_heatmaps (player)": lambda: vectors.change_heatmaps(
        {"attention output z": 1e-3 * np.abs(RNG.standard_normal((11, 64))),
         "encoder output r": 1e-3 * np.abs(RNG.standard_normal((11, 64)))}, WORDS,
        perturbed=0, title="nudging the input of 'the'", fig=_player_figure()),
}


def test_every_heatmap_function_is_checked_here():
    """Each public plot function that draws an image (a heatmap) has a case above."""
    drawn = {name.split(" (")[0] for name in HEATMAPS}
    source = pathlib.Path(primitives.__file__).parent
    callers = set()
    for path in source.glob("*.py"):
        if path.name == "primitives.py":
            continue
        text = path.read_text()
        assert ".imshow(" not in text and ".colorbar(" not in text, (
            f"{path.name}: draw heatmaps and colour bars with primitives.heatmap/colorbar")
        if re.search(r"\bheatmap\(|\b_heatmap\(|\b_column\(|\bcolorbar\(", text):
            callers.add(path.stem)
    assert callers == {"attention", "decoding", "playground", "positional", "vectors"}
    assert {name.split(".")[0] for name in drawn} == callers


def _drawn_texts(fig) -> list[Text]:
    """The texts a draw of ``fig`` shows: titles, axis labels, tick labels of ticks in view
    (on axes whose axis is on), texts in the axes and in the figure."""
    texts = list(fig.texts)
    if fig._suptitle is not None:
        texts.append(fig._suptitle)
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        if not ax.axison:
            continue
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            texts += [axis.label, axis.offsetText]
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    texts += [label for label, on in ((tick.label1, tick.label1.get_visible()),
                                                      (tick.label2, tick.label2.get_visible()))
                              if on]
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def _outside(fig) -> list[str]:
    """Drawn texts (tick labels and colour bar labels included) that stick out of the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    bad = []
    for text in _drawn_texts(fig):
        box = text.get_window_extent(renderer)
        if (box.x0 < frame.x0 - 0.5 or box.x1 > frame.x1 + 0.5 or box.y0 < frame.y0 - 0.5
                or box.y1 > frame.y1 + 0.5):
            bad.append(text.get_text()[:30])
    return bad


@pytest.mark.parametrize("name", sorted(HEATMAPS))
def test_colour_bar_labels_and_all_texts_lie_inside_the_figure(name):
    fig = HEATMAPS[name]()
    try:
        assert any(ax.images for ax in fig.axes) or name.startswith("vectors."), name
        bars = [ax for ax in fig.axes if hasattr(ax, "_colorbar")]
        for bar in bars:
            assert bar.get_ylabel() in {"", "value", "difference", "|change|"}
        assert not _outside(fig), f"{name}: texts outside the figure: {_outside(fig)}"
        if bars:  # the colour bar's label, when it has one, is among the texts checked
            labels = [bar.yaxis.label for bar in bars if bar.get_ylabel()]
            frame = fig.bbox
            for label in labels:
                box = label.get_window_extent(fig.canvas.get_renderer())
                assert frame.x0 <= box.x0 and box.x1 <= frame.x1 + 0.5, (name, label.get_text())
    finally:
        plt.close(fig)


def test_the_nudge_heatmap_keeps_its_colour_bar_label_inside():
    """The defect of issue 14: chapter 02's |change| label was cut off at the right edge."""
    fig = HEATMAPS["vectors.change_heatmaps (player)"]()
    try:
        fig.canvas.draw()
        (bar,) = [ax for ax in fig.axes if hasattr(ax, "_colorbar")]
        assert bar.get_ylabel() == "|change|"
        box = bar.yaxis.label.get_window_extent(fig.canvas.get_renderer())
        assert box.x1 <= fig.bbox.x1
    finally:
        plt.close(fig)
