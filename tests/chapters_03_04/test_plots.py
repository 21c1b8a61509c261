"""The drawings of chapters 03 and 04: what they draw (artists, texts, data), never pixels."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

import illustrated as il  # noqa: E402
from illustrated.plots import attention as A  # noqa: E402
from illustrated.plots import matrices as M  # noqa: E402
from illustrated.plots.style import COLORS  # noqa: E402

TOKENS = "the animal didn't cross the street because it was too tired".split()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def by_gid(fig, prefix: str = "") -> dict:
    found = {}
    for ax in fig.axes:
        for artist in [*ax.patches, *ax.texts, *ax.lines]:
            gid = artist.get_gid()
            if gid and gid.startswith(prefix):
                found[gid] = artist
    return found


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


# --- matrices ----------------------------------------------------------------------------------

def test_format_value_writes_integers_plainly():
    assert M.format_value(112.0) == "112"
    assert M.format_value(0.8808) == "0.88"
    assert M.format_value(-0.001) == "0"
    assert M.format_value(0.8808, 3) == "0.881"
    with pytest.raises(ValueError, match="decimals"):
        M.format_value(1.0, -1)


def test_equation_draws_every_number_and_operator():
    ex = il.reference.thinking_machines_example()
    q = ex.X @ ex.W_Q
    fig = M.plot_equations([[M.MatrixTerm("X", ex.X), "×",
                             M.MatrixTerm("W_Q", ex.W_Q, COLORS["query"]), "=",
                             M.MatrixTerm("Q", q, COLORS["query"])]])
    gids = by_gid(fig)
    assert len(fig.axes) == 1
    assert gids["0/0/0/name"].get_text() == "X"
    assert gids["0/0/1/operator"].get_text() == "×"
    assert gids["0/0/3/operator"].get_text() == "="
    for (i, j), value in np.ndenumerate(q):
        assert gids[f"0/0/4/value-{i}-{j}"].get_text() == f"{int(value)}"
        assert gids[f"0/0/4/cell-{i}-{j}"].get_facecolor()[:3] == to_rgba(COLORS["query"])[:3]
    assert len([g for g in gids if g.startswith("0/0/2/cell-")]) == ex.W_Q.size
    assert gids["0/0/4/value-0-2"].get_text() == "10"  # q1 = [8, 6, 10]


def test_panels_have_titles_and_column_colours():
    z = np.arange(8.0).reshape(2, 4) / 8
    fig = M.plot_equation_panels(
        [[[M.MatrixTerm("Z_0", z[:, :2])]], [[M.MatrixTerm("Z_1", z[:, 2:])]]],
        panel_titles=["head 0", "head 1"], show_shapes=True)
    gids = by_gid(fig)
    assert gids["0/title"].get_text() == "head 0" and gids["1/title"].get_text() == "head 1"
    assert gids["1/0/0/name"].get_text() == "Z_1  (2×2)"
    assert gids["1/0/0/value-1-1"].get_text() == f"{z[1, 3]:.2f}"
    fig = M.plot_equations([[M.MatrixTerm("concat", z, column_colors=["red"] * 2 + ["blue"] * 2)]])
    gids = by_gid(fig)
    assert gids["0/0/0/cell-0-0"].get_facecolor()[:3] == to_rgba("red")[:3]
    assert gids["0/0/0/cell-1-3"].get_facecolor()[:3] == to_rgba("blue")[:3]


def test_unwritten_matrices_are_coloured_by_value():
    fig = M.plot_equations([[M.MatrixTerm("W", np.array([[-1.0, 0.0, 1.0]]), show_values=False)]])
    gids = by_gid(fig)
    assert not [g for g in gids if "/value-" in g]
    low, high = gids["0/0/0/cell-0-0"].get_facecolor(), gids["0/0/0/cell-0-2"].get_facecolor()
    assert low != high


def test_equation_rejects_bad_terms():
    with pytest.raises(ValueError, match="panels"):
        M.plot_equations([])
    with pytest.raises(ValueError, match="MatrixTerm"):
        M.plot_equations([[3.0]])
    with pytest.raises(ValueError, match="column colours"):
        M.plot_equations([[M.MatrixTerm("A", np.ones((2, 3)), column_colors=["red"])]])
    with pytest.raises(ValueError, match="1-D or 2-D"):
        M.plot_equations([[M.MatrixTerm("A", np.ones((2, 2, 2)))]])
    with pytest.raises(ValueError, match="panel_titles"):
        M.plot_equation_panels([[[M.MatrixTerm("A", np.ones(2))]]], panel_titles=["a", "b"])


def test_equation_redraws_into_the_given_figure():
    fig = M.plot_equations([[M.MatrixTerm("A", np.ones((2, 2)))]])
    again = M.plot_equations([[M.MatrixTerm("B", np.zeros((1, 3)))]], fig=fig)
    assert again is fig and len(fig.axes) == 1
    assert "A" not in texts(fig) and "B" in texts(fig)


def test_six_steps_table_draws_words_rows_vectors_and_texts():
    rows = [M.StepRow("Embedding", [np.array([2.0, 2, 1, 1]), np.array([0.0, 1, 0, 2])]),
            M.StepRow("Score", ["q1 · k1 = 112", "q1 · k2 = 96"]),
            M.StepRow("Sum", [np.array([4.88, 2.76, 6.52]), None], COLORS["z"])]
    fig = M.plot_self_attention_steps(["Thinking", "Machines"], rows)
    gids = by_gid(fig)
    assert gids["word-0"].get_text() == "Thinking" and gids["word-1"].get_text() == "Machines"
    assert [gids[f"label-{r}"].get_text() for r in range(3)] == ["Embedding", "Score", "Sum"]
    assert gids["value-0-1-3"].get_text() == "2"
    assert gids["text-1-0"].get_text() == "q1 · k1 = 112"
    assert gids["value-2-0-0"].get_text() == "4.88"
    assert gids["cell-2-0-0"].get_facecolor()[:3] == to_rgba(COLORS["z"])[:3]
    assert not [g for g in gids if g.startswith("cell-2-1-")]  # None: an empty cell


def test_six_steps_table_rejects_bad_rows():
    with pytest.raises(ValueError, match="cells"):
        M.plot_self_attention_steps(["a", "b"], [M.StepRow("x", [np.ones(2)])])
    with pytest.raises(ValueError, match="1-D"):
        M.plot_self_attention_steps(["a"], [M.StepRow("x", [np.ones((2, 2))])])
    with pytest.raises(ValueError, match="words"):
        M.plot_self_attention_steps([], [])


def _recap_args(n_heads=2, d_model=8, seq=2):
    from illustrated.explain.attention import multi_head_example
    ex = multi_head_example(d_model, n_heads, words=[f"w{i}" for i in range(seq)])
    r = ex.result
    return (ex.words, ex.X, [ex.head_weights(h) for h in range(n_heads)], r.q, r.k, r.v, r.z,
            r.concat, ex.W_O, r.output)


def test_a_row_too_wide_for_the_page_wraps_before_its_equals_sign():
    from illustrated.plots.style import MAX_WIDTH_IN

    concat, W_O = np.arange(16.0).reshape(2, 8), np.eye(8)
    fig = M.plot_equations([[M.MatrixTerm("concat", concat), "×", M.MatrixTerm("W_O", W_O), "=",
                             M.MatrixTerm("Z", concat @ W_O)]], scale=0.42)
    gids = by_gid(fig)
    # 8 + 8 + 8 cells and two operators at 0.42 in: 11 in on one line; concat × W_O, then = Z.
    assert [gids[g].get_text() for g in ("0/0/0/name", "0/0/1/operator", "0/0/2/name",
                                         "0/1/0/operator", "0/1/1/name")] == \
        ["concat", "×", "W_O", "=", "Z"]
    assert "0/0/3/operator" not in gids and gids["0/1/1/value-1-7"].get_text() == "15"
    assert fig.get_figwidth() <= MAX_WIDTH_IN


def test_a_row_of_two_equations_wraps_at_the_gap_between_them():
    x, w = np.ones((1, 4)), np.ones((4, 3))
    row = [M.MatrixTerm("x1", x), "×", M.MatrixTerm("W", w), "=", M.MatrixTerm("q1", x @ w), "",
           M.MatrixTerm("x2", x), "×", M.MatrixTerm("W", w), "=", M.MatrixTerm("q2", x @ w)]
    gids = by_gid(M.plot_equations([row], scale=0.34))  # below 0.35 in: raised, and wrapped
    assert gids["0/0/4/name"].get_text() == "q1" and gids["0/1/0/name"].get_text() == "x2"
    assert gids["0/1/0/value-0-0"].get_fontsize() >= 8
    narrow = by_gid(M.plot_equations([row[:5]], scale=0.42))  # fits: one line
    assert "0/1/0/name" not in narrow


def test_recap_is_two_rows_within_the_page():
    from illustrated.plots.style import MAX_WIDTH_IN

    fig = M.plot_multi_head_recap(*_recap_args(2))
    gids = by_gid(fig)

    def top(gid):  # y grows downward: the frame's upper edge
        return gids[gid].get_y()

    assert fig.get_figwidth() <= MAX_WIDTH_IN
    # steps 1-3 (X, the heads' weights, Q/K/V) above steps 4-5 (Z_h, concat, W_O, the result)
    lowest_first_row = max(top("W_Q^1/frame") + 8, top("V_1/frame") + 2)
    assert all(top(g) > lowest_first_row for g in ("Z_0/frame", "concat/frame", "W_O/frame",
                                                    "Z/frame"))
    assert top("X/frame") < top("Z_0/frame")


@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_recap_draws_every_matrix_with_its_shape(n_heads):
    fig = M.plot_multi_head_recap(*_recap_args(n_heads))
    gids = by_gid(fig)
    d_k = 8 // n_heads
    for h in range(n_heads):
        for name in (f"W_Q^{h}", f"W_K^{h}", f"W_V^{h}"):
            assert len([g for g in gids if g.startswith(f"{name}/cell-")]) == 8 * d_k
            assert gids[f"{name}/name"].get_text().endswith(f"8×{d_k}")
        for name in (f"Q_{h}", f"K_{h}", f"V_{h}", f"Z_{h}"):
            assert gids[f"{name}/name"].get_text().endswith(f"2×{d_k}")
    assert not [g for g in gids if g.startswith(f"Z_{n_heads}/")]  # one Z per head, no more
    assert gids["X/name"].get_text().endswith("2×8")
    assert gids["W_O/name"].get_text().endswith("8×8")
    assert gids["Z/name"].get_text().endswith("2×8")
    assert [gids[f"step-{i}"] is not None for i in range(1, 6)]


def test_recap_rejects_mismatched_shapes():
    args = list(_recap_args())
    args[8] = np.ones((8, 7))  # W_O
    with pytest.raises(ValueError, match="W_O"):
        M.plot_multi_head_recap(*args)
    args = list(_recap_args())
    args[2] = args[2][:1]
    with pytest.raises(ValueError, match="head_weights"):
        M.plot_multi_head_recap(*args)


# --- attention ---------------------------------------------------------------------------------

def test_head_colors_are_distinct_and_checked():
    colors = A.head_colors(4)
    assert len(set(colors)) == 4
    with pytest.raises(ValueError, match="n_heads"):
        A.head_colors(0)


def test_word_attention_lines_follow_the_weights():
    weights = np.zeros((2, 11))
    weights[0, 1] = 0.7
    weights[0, 7] = 0.3
    weights[1, 10] = 1.0
    fig = A.plot_word_attention(TOKENS, weights, 7, title="layer 1",
                                head_labels=["head 0", "head 1"])
    gids = by_gid(fig, "0/")
    colors = A.head_colors(2)
    assert gids["0/line-0-1"].get_alpha() == pytest.approx(0.7)
    assert gids["0/line-0-7"].get_alpha() == pytest.approx(0.3)
    assert gids["0/line-1-10"].get_alpha() == pytest.approx(1.0)
    assert gids["0/line-1-1"].get_alpha() == 0.0
    assert gids["0/shade-0-1"].get_alpha() == pytest.approx(0.7)
    assert to_rgba(gids["0/line-1-10"].get_color())[:3] == to_rgba(colors[1])[:3]
    # every line starts at the query word ("it", row 7)
    assert all(line.get_ydata()[0] == 7 for g, line in gids.items() if "/line-" in g)
    assert gids["0/left-7"].get_text() == "it" and gids["0/left-7"].get_fontweight() == "bold"
    assert gids["0/right-10"].get_text() == "tired"
    assert fig.axes[0].get_title() == "layer 1"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["head 0", "head 1"]


def test_word_attention_panels_one_per_sentence():
    wide = TOKENS[:-1] + ["wide"]
    fig = A.plot_word_attention_panels([TOKENS, wide], [np.full(11, 1 / 11), np.eye(11)[5]],
                                       [7, 7], titles=["tired", "wide"])
    assert len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["tired", "wide"]
    gids = by_gid(fig, "1/")
    assert gids["1/right-10"].get_text() == "wide"
    assert gids["1/line-0-5"].get_alpha() == 1.0


@pytest.mark.parametrize("kwargs, name", [
    ({"weights": [np.ones(10) / 10]}, "weights"),
    ({"weights": [np.full(11, 2.0)]}, "weights"),
    ({"queries": [11]}, "queries"),
    ({"colors": ["red", "blue"]}, "colors"),
    ({"titles": ["a", "b"]}, "titles"),
])
def test_word_attention_rejects_bad_input(kwargs, name):
    args = {"tokens": [TOKENS], "weights": [np.ones(11) / 11], "queries": [7], **kwargs}
    with pytest.raises(ValueError, match=name):
        A.plot_word_attention_panels(**args)


def test_heatmaps_show_each_head_matrix():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(3), size=(4, 3))
    labels = ["Thinking", "Machines", "!"]
    fig = A.plot_attention_heatmaps(weights, labels, labels, titles=[f"head {h}" for h in range(4)])
    assert len(fig.axes) == 5  # four panels and a colour bar
    for h in range(4):
        np.testing.assert_allclose(fig.axes[h].images[0].get_array(), weights[h])
        assert fig.axes[h].get_title() == f"head {h}"
        assert [t.get_text() for t in fig.axes[h].get_xticklabels()] == labels
    assert len(fig.axes[2].texts) == 0  # four panels in a row: cells too narrow for "0.00"
    fig = A.plot_attention_heatmaps(weights[:2], labels, labels)  # two: wide enough
    assert f"{weights[1, 1, 0]:.2f}" in [t.get_text() for t in fig.axes[1].texts]
    fig.canvas.draw()
    cell = fig.axes[1].get_window_extent().width / fig.dpi / 3
    assert cell >= A.MIN_CELL_IN
    fig = A.plot_attention_heatmaps(weights, labels, labels, annotate=True)  # asked for
    assert f"{weights[2, 1, 0]:.2f}" in [t.get_text() for t in fig.axes[2].texts]
    with pytest.raises(ValueError, match="row_labels"):
        A.plot_attention_heatmaps(weights, labels[:2], labels)
    per_panel = [labels[:2] + [f"word {h}"] for h in range(4)]
    fig = A.plot_attention_heatmaps(weights, labels, per_panel)
    assert fig.axes[3].get_xticklabels()[2].get_text() == "word 3"
    with pytest.raises(ValueError, match="col_labels"):
        A.plot_attention_heatmaps(weights, labels, per_panel[:3])
    with pytest.raises(ValueError, match="vmin"):
        A.plot_attention_heatmaps(weights, labels, labels, vmin=1.0, vmax=0.0)


def test_scaled_softmax_bars_have_the_given_heights():
    fig = A.plot_scaled_softmax(["q1·k1", "q1·k2"], [112, 96], [14, 12], [0.8808, 0.1192], 64)
    gids = by_gid(fig)
    bars = {g: a for ax in fig.axes for a in ax.patches if (g := a.get_gid())}
    assert bars["score-0"].get_height() == 112 and bars["scaled-1"].get_height() == 12
    assert bars["softmax-0"].get_height() == pytest.approx(0.8808)
    assert gids["softmax-value-1"].get_text() == "0.119"
    assert "d_k = 64" in fig.axes[1].get_title()
    with pytest.raises(ValueError, match="scores"):
        A.plot_scaled_softmax(["a"], [1, 2], [1, 2], [0.5, 0.5], 4)


def test_saturation_plots_the_curves_it_is_given():
    x = np.array([1, 4, 16])
    curves = [x * 1.0, [0.3, 0.6, 0.9], [0.3, 0.31, 0.32], [0.35, 0.2, 0.05], [0.35, 0.35, 0.35]]
    fig = A.plot_saturation([0.9, 0.1], [0.6, 0.4], 4, x, *curves)
    assert len(fig.axes) == 4
    lines = {line.get_gid(): line for ax in fig.axes for line in ax.lines if line.get_gid()}
    np.testing.assert_allclose(lines["max-unscaled"].get_ydata(), curves[1])
    np.testing.assert_allclose(lines["grad-scaled"].get_ydata(), curves[4])
    np.testing.assert_allclose(lines["d_k"].get_ydata(), x)
    assert lines["current-c"].get_xdata()[0] == 4
    bars = {a.get_gid(): a for a in fig.axes[0].patches if a.get_gid()}
    assert bars["unscaled-0"].get_height() == 0.9 and bars["scaled-1"].get_height() == 0.4
    with pytest.raises(ValueError, match="curve_d_k"):
        A.plot_saturation([0.9, 0.1], [0.6, 0.4], 4, x, *curves[:4], [1.0])
