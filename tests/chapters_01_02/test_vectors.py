"""The vector drawings of chapter 02: boxes, values, colours and links they draw."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from illustrated.plots import vectors  # noqa: E402
from illustrated.plots.style import COLORS, DIVERGING_CMAP  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def gids(ax, prefix: str):
    artists = [*ax.patches, *ax.texts, *ax.lines]
    return {a.get_gid(): a for a in artists if a.get_gid() and a.get_gid().startswith(prefix)}


def test_small_vectors_are_boxes_with_their_values_written():
    values = np.array([[2.0, 2.0, 1.0, 1.0], [0.0, 1.0, -0.25, 2.0]])
    fig = vectors.vector_rows(values, ["Thinking", "Machines"], names=["x1", "x2"])
    ax = fig.axes[0]
    assert len(fig.axes) == 1  # no colour bar when the values are written
    for i in range(2):
        for j in range(4):
            cell = gids(ax, f"row-{i}-{j}")[f"row-{i}-{j}"]
            assert cell.get_facecolor() == to_rgba(COLORS["input"])
            assert gids(ax, f"row-{i}-{j}-value")[f"row-{i}-{j}-value"].get_text() == \
                f"{values[i, j]:.2f}"
    assert gids(ax, "label-1")["label-1"].get_text() == "Machines"
    assert gids(ax, "name-0")["name-0"].get_text() == "x1"


def test_long_vectors_are_coloured_by_value_with_a_colour_bar():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3, 32))
    fig = vectors.vector_rows(values, ["je", "suis", "étudiant"], title="embeddings")
    ax = fig.axes[0]
    assert len(fig.axes) == 2  # the drawing and its colour bar
    assert ax.get_title() == "embeddings"
    cells = {g: a for g, a in gids(ax, "row-").items() if g.split("-")[-1].isdigit()}
    assert len(cells) == 3 * 32
    assert not [t for t in ax.texts if (t.get_gid() or "").endswith("-value")]
    i, j = np.unravel_index(np.argmax(np.abs(values)), values.shape)
    cmap = plt.get_cmap(DIVERGING_CMAP)
    expected = cmap(1.0) if values[i, j] > 0 else cmap(0.0)
    np.testing.assert_allclose(cells[f"row-{i}-{j}"].get_facecolor(), expected)


def test_encoder_flow_draws_x_z_r_per_position_with_shared_attention_and_separate_ffns():
    rng = np.random.default_rng(1)
    x, z, r = (rng.normal(size=(3, 4)) for _ in range(3))
    fig = vectors.encoder_flow(x, z, r, ["je", "suis", "étudiant"])
    ax = fig.axes[0]
    for name, values in (("x", x), ("z", z), ("r", r)):
        for i in range(3):
            texts = [gids(ax, f"{name}-{i}-{j}-value")[f"{name}-{i}-{j}-value"].get_text()
                     for j in range(4)]
            assert texts == [f"{v:.2f}" for v in values[i]]
            assert gids(ax, f"{name}-{i}-name")[f"{name}-{i}-name"].get_text() == f"{name}{i + 1}"
    assert len(gids(ax, "self-attention")) == 2  # one box (and its label) for all positions
    assert len([g for g in gids(ax, "ffn-") if g.count("-") == 1]) == 3  # one network per position
    assert len(gids(ax, "attn-link-")) == 9  # every input reaches every output
    # the columns are ordered like the sentence and x lies below z below r
    assert [gids(ax, f"word-{i}")[f"word-{i}"].get_text() for i in range(3)] == \
        ["je", "suis", "étudiant"]
    ys = [gids(ax, f"{n}-0-0")[f"{n}-0-0"].get_y() for n in "xzr"]
    assert ys == sorted(ys)


def test_encoder_flow_checks_shapes():
    with pytest.raises(ValueError, match="z, r"):
        vectors.encoder_flow(np.ones((2, 4)), np.ones((2, 3)), np.ones((2, 4)), ["a", "b"])
    with pytest.raises(ValueError, match="words"):
        vectors.encoder_flow(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), ["a"])
    with pytest.raises(ValueError, match="vectors"):
        vectors.vector_rows(np.ones(4), ["a"])


def test_change_heatmaps_show_the_given_changes_and_frame_the_nudged_row():
    attention = np.abs(np.random.default_rng(2).normal(size=(4, 6)))
    ffn = np.zeros((4, 6))
    ffn[1] = 0.5
    fig = vectors.change_heatmaps({"self-attention": attention, "feed-forward": ffn},
                                  ["a", "b", "c", "d"], perturbed=1,
                                  row_change={"self-attention": attention.sum(1),
                                              "feed-forward": ffn.sum(1)})
    panels = fig.axes[:2]
    assert len(fig.axes) == 3  # two panels and the colour bar
    assert [ax.get_title() for ax in panels] == ["self-attention", "feed-forward"]
    np.testing.assert_array_equal(panels[0].images[0].get_array(), attention)
    np.testing.assert_array_equal(panels[1].images[0].get_array(), ffn)
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["a", "b", "c", "d"]
    for ax in panels:
        (frame,) = [p for p in ax.patches if p.get_gid() == "perturbed"]
        assert frame.get_y() == pytest.approx(0.5)
    texts = [gids(panels[1], f"row-change-{i}")[f"row-change-{i}"].get_text() for i in range(4)]
    assert texts == ["0", "3", "0", "0"]


def test_change_heatmaps_reject_bad_input():
    with pytest.raises(ValueError, match="changes"):
        vectors.change_heatmaps({}, [])
    with pytest.raises(ValueError, match="perturbed"):
        vectors.change_heatmaps({"a": np.ones((2, 3))}, ["x", "y"], perturbed=2)
    with pytest.raises(ValueError, match="changes"):
        vectors.change_heatmaps({"a": np.ones((2, 3)), "b": np.ones((3, 3))}, ["x", "y"])
