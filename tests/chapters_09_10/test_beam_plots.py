"""Chapter 09's drawings: what they draw (node texts, boxes, edges, bars, lines), never pixels."""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from illustrated.explain import beam as B
from illustrated.plots import beam as P
from illustrated.widgets import beam as W

# A hand-made tree: start -> (i, you) ; i -> (i am, i <eos>) ; you -> (you are, you ...)
TREE = {
    "parents": [-1, 0, 0, 0, 1, 1, 2, 2],
    "steps": [0, 1, 1, 1, 2, 2, 2, 2],
    "labels": ["<bos>", "i", "you", "we", "am", "<eos>", "are", "is"],
    "log_probs": [0.0, -0.1, -2.0, -5.0, -0.3, -2.5, -2.2, -6.0],
    "statuses": ["start", "kept", "kept", "dropped", "kept", "finished", "kept", "dropped"],
    "returned": [False, False, False, False, False, True, False, False],
}


def _nodes(ax):
    return {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("node-")}


def _edges(ax):
    return {line.get_gid(): line for line in ax.lines if (line.get_gid() or "").startswith("edge-")}


def test_tree_draws_every_node_with_its_word_score_and_style():
    fig = P.plot_beam_tree(**TREE, title="beam")
    (ax,) = fig.axes
    nodes = _nodes(ax)
    assert len(nodes) == 8 and len(_edges(ax)) == 7
    assert nodes["node-0"].get_text() == "<bos>"
    assert nodes["node-4"].get_text() == "am\n-0.30"
    for i, status in enumerate(TREE["statuses"]):
        box = nodes[f"node-{i}"].get_bbox_patch()
        assert box.get_linestyle() == ("--" if status == "dropped" else "-")
        expected = P.STATUS_STYLE[status]["fc"]
        np.testing.assert_allclose(box.get_facecolor()[:3],
                                   np.array(matplotlib_rgb(expected)), atol=1e-6)
    assert nodes["node-5"].get_fontweight() == "bold"
    assert nodes["node-4"].get_fontweight() == "normal"
    assert ax.get_title() == "beam"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["start", "step 1", "step 2"]


def matplotlib_rgb(color):
    from matplotlib.colors import to_rgb
    return to_rgb(color)


def test_edges_join_parent_and_child_columns():
    fig = P.plot_beam_tree(**TREE)
    (ax,) = fig.axes
    y = P.tree_layout(TREE["parents"], TREE["steps"])
    for gid, line in _edges(ax).items():
        child = int(gid.split("-")[1])
        parent = TREE["parents"][child]
        (x0, x1), (y0, y1) = line.get_xdata(), line.get_ydata()
        assert x0 < TREE["steps"][parent] + 0.5 and x1 > TREE["steps"][child] - 0.5
        assert (y0, y1) == (y[parent], y[child])


def test_layout_keeps_children_under_their_parent_in_order():
    y = P.tree_layout(TREE["parents"], TREE["steps"])
    assert y[0] == 0
    np.testing.assert_allclose(y[[1, 2, 3]], [1, 0, -1])  # a column is centred, best on top
    assert y[4] > y[5] > y[6] > y[7]  # children of "i" above those of "you"
    # children listed out of parent order still come out grouped by parent
    y2 = P.tree_layout([-1, 0, 0, 2, 1], [0, 1, 1, 2, 2])
    assert y2[4] > y2[3]


def test_upto_step_hides_later_nodes_but_keeps_the_frame():
    full = P.plot_beam_tree(**TREE).axes[0]
    part = P.plot_beam_tree(**TREE, upto_step=1).axes[0]
    assert set(_nodes(part)) == {"node-0", "node-1", "node-2", "node-3"}
    assert full.get_xlim() == part.get_xlim() and full.get_ylim() == part.get_ylim()


def test_step_scores_are_bars_of_the_log_probs():
    fig = P.plot_step_scores(["i am", "i <eos>", "you are"], [-0.3, -2.5, -2.2],
                             ["kept", "finished", "dropped"], title="step 2")
    (ax,) = fig.axes
    bars = [p for p in ax.patches]
    np.testing.assert_allclose([b.get_x() + b.get_width() for b in bars], [-0.3, -2.5, -2.2])
    widths = [b.get_width() for b in bars]
    assert min(widths) > 0 and widths[0] == max(widths)  # the most probable has the longest bar
    left, right = ax.get_xlim()
    assert left == bars[0].get_x() and right > 0  # bars start at the axis' edge; 0 is in view
    labels = [t for t in ax.texts if t.get_text().strip()]
    assert [t.get_position()[0] for t in labels] == [-0.3, -2.5, -2.2]
    assert all(t.get_ha() == "left" for t in labels)  # beside the bar's end, not over the words
    assert [t.get_text() for t in ax.get_yticklabels()] == ["i am", "i <eos>", "you are"]
    assert ax.get_title() == "step 2"


def test_beam_step_frame_has_tree_and_bars():
    hyps = ["<bos>", "i", "you", "we", "i am", "i <eos>", "you are", "you is"]
    fig = P.plot_beam_step(**TREE, hypotheses=hyps, step=2, title="frame")
    tree_ax, bar_ax = fig.axes
    assert len(_nodes(tree_ax)) == 8
    assert [t.get_text() for t in bar_ax.get_yticklabels()] == hyps[4:]
    assert any(p.get_gid() == "current-step" for p in tree_ax.patches)
    with pytest.raises(ValueError, match="step"):
        P.plot_beam_step(**TREE, hypotheses=hyps, step=3)


def test_length_penalty_and_alpha_plots():
    alphas, lengths = [0.0, 1.0], [1, 2, 3]
    table = B.penalty_curves(lengths, alphas)
    fig = P.plot_length_penalty(lengths, table, alphas)
    (ax,) = fig.axes
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[1].get_ydata(), table[1])
    scores = np.array([[-1.0, -2.0], [-0.8, np.nan]])
    fig = P.plot_alpha_scores([0.0, 1.0], scores, ["a <eos>", "b c <eos>"], [0, 0], current=1,
                              title="sweep")
    (ax,) = fig.axes
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [-1.0, -0.8])
    assert ax.lines[0].get_label() == "a <eos>"
    assert "chosen 'a <eos>'" in ax.get_title() and ax.get_title().startswith("sweep")
    assert any(line.get_gid() == "current-alpha" for line in ax.lines)


def test_plot_input_errors_name_the_argument():
    bad = dict(TREE, statuses=["start"] + ["alive"] * 7)
    with pytest.raises(ValueError, match="statuses"):
        P.plot_beam_tree(**bad)
    with pytest.raises(ValueError, match="labels"):
        P.plot_beam_tree(**dict(TREE, labels=["x"]))
    with pytest.raises(ValueError, match="parents"):
        P.plot_beam_tree(**dict(TREE, parents=[-1, 0, 0, 0, 0, 1, 2, 2]))
    with pytest.raises(ValueError, match="penalties"):
        P.plot_length_penalty([1, 2], [[1.0]], [0.0])
    with pytest.raises(ValueError, match="current"):
        P.plot_alpha_scores([0.0], [[-1.0]], ["a"], [0], current=3)


def test_beam_widget_defaults_to_the_posts_example(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    box = W.beam_widget(model, src_vocab, tgt_vocab, max_len=4)
    assert isinstance(box, widgets.VBox)
    controls = {c.description: c for row in box.children[:2] for c in row.children}
    assert controls["beam_size"].value == 2 and controls["top_beams"].value == 2
    assert controls["α"].value == 0.0 and controls["source"].value == "je suis étudiant"
    with pytest.raises(ValueError, match="beam_size"):
        W.beam_widget(model, src_vocab, tgt_vocab, beam_size=9)
    tree = B.beam_tree(model, "je suis étudiant", src_vocab, tgt_vocab, max_len=4)
    title = W.beam_title(tree)
    assert title.splitlines()[0] == "beam_size=2, top_beams=2, α=0"
    assert len(title.splitlines()) == 3
