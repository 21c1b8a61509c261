"""Chapter 08: the untrained and trained distributions, cross-entropy, label smoothing's floor."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import illustrated as il
from illustrated.book import ch08, kit

STEPS = [0, 5, 100]


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def runs():
    """{epsilon: (model, history, snapshots)} of the chapter's seed, without and with smoothing."""
    return {eps: ch08.train_snapshots(2, STEPS, label_smoothing=eps) for eps in (0.0, 0.1)}


def test_the_post_vocabulary_comes_first():
    _, _, tgt_vocab = ch08.untrained_model(0)
    assert tgt_vocab.tokens[:6] == ["a", "am", "i", "thanks", "student", "<eos>"]
    assert len(tgt_vocab) == 9


def test_untrained_model_is_where_train_corpus_starts():
    model, _, _ = ch08.untrained_model(4)
    il.set_seed(4)
    twin = il.modules.Transformer(model.cfg)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), twin.parameters()))
    assert not model.training


def test_the_untrained_models_loss_on_thanks():
    """The chapter's worked numbers: -log q(thanks) = 3.1694 nats at position 0, mean 2.3879,
    equal to the cross-entropy, the KL divergence and PyTorch's loss from the logits."""
    model, src_vocab, tgt_vocab = ch08.untrained_model(2)
    t = il.trace(model, "merci", "thanks", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    thanks = tgt_vocab.index("thanks")
    q, p = t.probs[0], il.reference.one_hot(thanks, len(tgt_vocab))
    np.testing.assert_allclose(-np.log(q[thanks]), 3.1694, atol=5e-4)
    np.testing.assert_allclose([il.reference.cross_entropy(p, q),
                                il.reference.kl_divergence(p, q)], -np.log(q[thanks]))
    torch_loss = F.cross_entropy(torch.tensor(t.logits), torch.tensor(t.target_ids)).item()
    np.testing.assert_allclose(torch_loss, 2.3879, atol=5e-4)
    assert q.argmax() != thanks  # why the chapter uses seed 2


def test_train_snapshots_follows_the_corpus_recipe(runs):
    model, history, snapshots = runs[0.0]
    _, _, _, reference = il.train_corpus("post", seed=2, device="cpu", progress=False)
    np.testing.assert_allclose(history.loss, reference.loss, rtol=1e-6)
    assert sorted(snapshots) == STEPS
    untrained, src_vocab, tgt_vocab = ch08.untrained_model(2)
    start = il.trace(untrained, ch08.SOURCE, ch08.TARGET, src_vocab=src_vocab,
                     tgt_vocab=tgt_vocab)
    np.testing.assert_allclose(snapshots[0], start.probs, atol=1e-6)
    end = il.trace(model, ch08.SOURCE, ch08.TARGET, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    np.testing.assert_allclose(snapshots[100], end.probs, atol=1e-12)
    assert not np.allclose(snapshots[0], snapshots[5])


@pytest.mark.parametrize("epsilon", [0.0, 0.1])
def test_training_moves_each_distribution_onto_its_target(runs, epsilon):
    """What the chapter's training figure shows, with and without label smoothing."""
    _, src_vocab, tgt_vocab = ch08.untrained_model(2)
    ids = [tgt_vocab.index(w) for w in ch08.TARGET.split()] + [tgt_vocab.eos_id]
    targets = il.reference.smooth_labels(ids, len(tgt_vocab), epsilon)  # (5, vocab)
    _, _, snapshots = runs[epsilon]
    assert np.abs(snapshots[0] - targets).max() > 0.5
    assert np.abs(snapshots[100] - targets).max() < 0.02
    assert (snapshots[100] > 0).all()  # a softmax never gives 0


@pytest.mark.parametrize("epsilon, V", [(0.1, 9), (0.3, 6), (0.1, 37000), (0.5, 100)])
def test_the_smoothed_targets_entropy_is_the_lowest_loss(epsilon, V):
    """Closed form of the floor, and PyTorch's label-smoothed loss of a model that outputs the
    smoothed target exactly (logits = log p) reaches it."""
    p = il.reference.smooth_labels([1], V, epsilon)[0]  # (V,)
    right, other = 1 - epsilon + epsilon / V, epsilon / V
    closed = -right * np.log(right) - (V - 1) * other * np.log(other)
    np.testing.assert_allclose(ch08.entropy(p), closed, rtol=1e-12)
    reached = F.cross_entropy(torch.tensor(np.log(p))[None], torch.tensor([1]),
                              label_smoothing=epsilon).item()
    np.testing.assert_allclose(reached, closed, rtol=1e-10)


def test_the_chapters_smoothing_numbers():
    np.testing.assert_allclose(ch08.entropy(il.reference.smooth_labels([1], 9, 0.1)[0]), 0.4848,
                               atol=5e-5)
    assert ch08.entropy(il.reference.smooth_labels([1], 37000, 0.1)[0]) > 1.3
    assert ch08.entropy(il.reference.one_hot(1, 9)) == 0


def test_draw_cells_and_distributions(legible, width):
    _, _, tgt_vocab = ch08.untrained_model(0)
    fig = ch08.draw_cells({"index": range(6), "word": tgt_vocab.tokens[:6]}, title="vocabulary",
                          width=width)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(w in texts for w in tgt_vocab.tokens[:6]) and "5" in texts
    legible(fig, width)
    probs = il.reference.softmax(np.random.default_rng(0).normal(size=(5, 9)))
    fig = ch08.draw_distributions(probs, tgt_vocab.tokens, list("01234"), [2, 1, 0, 4, 5],
                                  title="step 3", width=width)
    ax = fig.axes[0]
    phone = kit.narrow(width)  # a phone's column turns the table: one column per distribution
    np.testing.assert_allclose(ax.images[0].get_array(), probs.T if phone else probs)
    written = [t.get_text() for t in ax.texts]
    assert written[::5 if phone else 1][:9] == [ch08.probability_text(v) for v in probs[0]]
    frames = [(p.get_x() + 0.5, p.get_y() + 0.5) for p in ax.patches]
    assert frames == [(i, t) if phone else (t, i) for i, t in enumerate([2, 1, 0, 4, 5])]
    legible(fig, width)


@pytest.mark.parametrize("epsilon, V", [(0.0, 6), (0.1, 9), (0.5, 37000)])
def test_draw_label_smoothing_writes_its_values(epsilon, V, legible, width):
    _, _, tgt_vocab = ch08.untrained_model(0)
    fig = ch08.draw_label_smoothing(epsilon, V, tokens=tgt_vocab.tokens, target_id=1,
                                    sizes=(6, 9, 100, 37000), width=width)
    title = fig.axes[0].get_title(loc="left")
    p = il.reference.smooth_labels([1], V, epsilon)[0]
    assert f"{1 - epsilon + epsilon / V:.4f}" in title
    assert f"{ch08.entropy(p):.4f} nats" in title
    assert len(fig.axes[0].patches) == min(V, 9)
    labels = [t.get_text() for t in fig.axes[1].texts]
    assert labels == [f"V = {v}" for v in (6, 9, 100, 37000)]
    fig.canvas.draw()  # issue 33: "V = 6" and "V = 9" overlapped; no two labels' boxes meet
    boxes = [t.get_window_extent() for t in fig.axes[1].texts]
    assert all(low.y1 <= high.y0 for low, high in zip(boxes, boxes[1:])), boxes
    legible(fig, width)


def test_no_cell_reads_zero_unless_it_is():
    """Chapter 08 says no cell of a softmax is exactly 0: its figures never print 0.00 for one."""
    assert [ch08.probability_text(p) for p in (0.0, 1e-9, 0.0049, 0.005, 0.5, 0.9949, 0.996,
                                               1.0)] == ["0", "<.01", "<.01", "0.01", "0.50",
                                                         "0.99", ">.99", "1"]
    probs = np.array([[0.999, 0.0004, 0.0006], [0.0, 1.0, 0.0]])
    fig = ch08.draw_distributions(probs, ["a", "b", "c"], ["0", "1"], [0, 1])
    texts = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    assert "0.00" not in texts and "1.00" not in texts
    assert texts == [">.99", "<.01", "<.01", "0", "1", "0"]
