"""Chapter 06's drawings: the boxes and paths they draw, the data in their artists."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import illustrated as il
from illustrated.explain import norms as N
from illustrated.plots import residual as R

CFG = replace(il.TINY, src_vocab_size=10, tgt_vocab_size=10)


def _gids(fig, gid):
    ax = fig.axes[0]
    return [a for a in list(ax.patches) + list(ax.lines) if a.get_gid() == gid]


def _texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def test_add_norm_layer_post_ln():
    fig = R.plot_add_norm_layer(["Self-Attention", "Feed Forward"], words=["a", "b", "c"])
    assert len(_gids(fig, "add-norm")) == 2 and not _gids(fig, "norm")
    assert len(_gids(fig, "residual")) == 2
    assert len(_gids(fig, "sublayer")) == 1 + 3  # attention + one feed-forward per word
    assert _texts(fig).count("Add & Normalize") == 2
    assert "Self-Attention" in _texts(fig) and "ENCODER #1" in _texts(fig)


def test_add_norm_layer_pre_ln():
    fig = R.plot_add_norm_layer(["Self-Attention", "Feed Forward"], norm_first=True,
                                title="pre-LN")
    assert len(_gids(fig, "norm")) == 2 and len(_gids(fig, "add")) == 2
    assert not _gids(fig, "add-norm")
    assert "pre-LN" in _texts(fig)
    with pytest.raises(ValueError, match="sublayers"):
        R.plot_add_norm_layer([])


@pytest.mark.parametrize("n_layers, norm_first", [(2, False), (2, True), (3, False)])
def test_add_norm_stack_follows_the_config(n_layers, norm_first):
    plan = N.describe_stack(replace(CFG, n_layers=n_layers, norm_first=norm_first))
    fig = R.plot_add_norm_stack(**plan._asdict())
    assert len(_gids(fig, "layer")) == 2 * n_layers
    assert len(_gids(fig, "sublayer")) == 5 * n_layers
    assert len(_gids(fig, "residual")) == 5 * n_layers
    assert len(_gids(fig, "cross")) == n_layers
    assert len(_gids(fig, "final-norm")) == (2 if norm_first else 0)
    assert len(_gids(fig, "add-norm")) == (0 if norm_first else 5 * n_layers)
    texts = _texts(fig)
    assert f"ENCODER #{n_layers}" in texts and f"DECODER #{n_layers}" in texts
    assert "Linear" in texts and "Softmax" in texts


def test_add_norm_stack_rejects_mismatched_stacks():
    with pytest.raises(ValueError, match="decoder"):
        R.plot_add_norm_stack([["Self-Attention"]], [])
    with pytest.raises(ValueError, match="decoder"):
        R.plot_add_norm_stack([["A"]], [["A"], ["B"]])


def test_add_norm_vectors_figure():
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=(2, 16)), rng.normal(size=(2, 16))
    fig = R.plot_add_norm_vectors(x, z, x + z, x - z, ["a", "b"])
    assert len(fig.axes) == 9
    assert [fig.axes[2 * r].get_ylabel() for r in range(4)] == ["X", "Z", "X + Z",
                                                                "LayerNorm(X + Z)"]
    np.testing.assert_allclose(fig.axes[5].images[0].get_array()[0], (x + z)[1])
    assert [t.get_text() for t in fig.texts] == ["+", "=", "→"]


def test_layer_norm_bars():
    before, after = np.array([1.0, 2.0, 3.0]), np.array([-1.2, 0.0, 1.2])
    fig = R.plot_layer_norm_bars(before, after, mean=2.0, std=0.8, label="w")
    heights = [[p.get_height() for p in ax.containers[0]] for ax in fig.axes]
    assert heights == [before.tolist(), after.tolist()]
    assert [line.get_ydata()[0] for line in fig.axes[0].lines] == [2.0, 2.8, 1.2]
    assert "'w'" in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="after"):
        R.plot_layer_norm_bars(before, after[:2], mean=0, std=1)


def test_gradient_norms_bars():
    fig = R.plot_gradient_norms({"encoder": {"post-LN": [1, 2], "pre-LN": [3, 4]},
                                 "decoder": {"post-LN": [5, 6], "pre-LN": [7, 8]}})
    assert len(fig.axes) == 2
    assert [[p.get_height() for p in c] for c in fig.axes[1].containers] == [[5, 6], [7, 8]]
    with pytest.raises(ValueError, match="norms"):
        R.plot_gradient_norms({"encoder": {"a": [1, 2], "b": [1]}})


def test_training_race_and_player():
    losses = {"post-LN": [3.0, 2.5, 2.4, 2.4], "pre-LN": [3.0, 2.0, 1.0, 0.5]}
    snaps = {"post-LN": [(2, "l l"), (4, "l l")], "pre-LN": [(2, "a"), (4, "a b")]}
    fig = R.plot_training_race(losses, snaps, 0, sample="b a")
    ax_loss, ax_text = fig.axes
    np.testing.assert_array_equal(ax_loss.lines[1].get_ydata(), losses["pre-LN"])
    assert list(ax_loss.lines[-1].get_xdata()) == [2, 2]
    R.update_training_race(fig, snaps, 1)
    assert list(ax_loss.lines[-1].get_xdata()) == [4, 4]
    texts = [t.get_text() for t in ax_text.texts]
    assert "source: b a" in texts and "pre-LN  output: a b" in texts
    with pytest.raises(ValueError, match="frame"):
        R.update_training_race(fig, snaps, 2)
    with pytest.raises(ValueError, match="snapshots"):
        R.plot_training_race(losses, {"post-LN": snaps["post-LN"]})
    html = R.training_player(losses, snaps, max_frames=2)
    assert "<script" in html
