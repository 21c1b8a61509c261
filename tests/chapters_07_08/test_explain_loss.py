"""Compute functions of chapter 08 against PyTorch's loss and the NumPy reference."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import illustrated as il
from illustrated.explain import loss as L


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.25, 0.9])
def test_loss_breakdown_equals_torch_cross_entropy(epsilon):
    rng = np.random.default_rng(3)
    logits = rng.normal(scale=3.0, size=(5, 9))
    ids = np.array([2, 1, 0, 4, 5])
    b = L.loss_breakdown(logits, ids, label_smoothing=epsilon)
    expected = F.cross_entropy(torch.tensor(logits), torch.tensor(ids),
                               label_smoothing=epsilon).item()
    np.testing.assert_allclose([b.cross_entropy, b.from_logits, b.torch], expected, rtol=1e-12)
    np.testing.assert_allclose(b.cross_entropy - b.kl_divergence, b.target_entropy, atol=1e-12)
    np.testing.assert_allclose(b.targets, il.reference.smooth_labels(ids, 9, epsilon))
    per_position = F.cross_entropy(torch.tensor(logits), torch.tensor(ids), reduction="none",
                                   label_smoothing=epsilon).numpy()
    np.testing.assert_allclose(b.per_position, per_position, rtol=1e-12)
    if epsilon == 0.0:  # one-hot targets: no entropy, KL = cross-entropy = -log q(correct)
        assert b.target_entropy == 0.0
        probs = il.reference.softmax(logits)
        np.testing.assert_allclose(b.per_position, -np.log(probs[np.arange(5), ids]), rtol=1e-12)


def test_loss_breakdown_rejects_bad_shapes():
    with pytest.raises(ValueError, match="logits"):
        L.loss_breakdown(np.zeros(9), [1])
    with pytest.raises(ValueError, match="target_ids"):
        L.loss_breakdown(np.zeros((2, 9)), [1])
    with pytest.raises(ValueError, match="target_ids"):
        L.loss_breakdown(np.zeros((2, 9)), [1.0, 2.0])


def test_untrained_model_is_the_start_of_train_corpus():
    model, sv, tv = L.untrained_model("post", seed=4)
    il.set_seed(4)
    twin = il.modules.Transformer(model.cfg)
    for a, b in zip(model.parameters(), twin.parameters()):
        assert torch.equal(a, b)
    assert not model.training and tv.tokens[:6] == ["a", "am", "i", "thanks", "student", "<eos>"]
    with pytest.raises(ValueError, match="corpus"):
        L.untrained_model("klingon")


def test_position_distributions_is_the_teacher_forced_forward_pass(post_trained):
    model, sv, tv = post_trained
    d = L.position_distributions(model, "je suis étudiant", "i am a student", sv, tv)
    assert d.source_tokens == ["je", "suis", "étudiant"]
    assert d.input_tokens == ["<bos>", "i", "am", "a", "student"]
    assert d.target_tokens == ["i", "am", "a", "student", "<eos>"]
    np.testing.assert_array_equal(d.target_ids, [2, 1, 0, 4, 5])
    with torch.no_grad():
        logits = model(torch.tensor([[4, 6, 7]]), torch.tensor([[7, 2, 1, 0, 4]]))[0]
    # the model's fused attention vs the traced step-by-step path: float32 rounding apart
    np.testing.assert_allclose(d.logits, logits.numpy(), atol=1e-5)
    np.testing.assert_allclose(d.probs, il.reference.softmax(d.logits), atol=1e-12)
    assert d.vocab_tokens == tv.tokens
    assert (d.probs.argmax(axis=1) == d.target_ids).all()  # the trained model has learned it


def test_position_distributions_restores_mode_and_checks_inputs(post_trained):
    model, sv, tv = post_trained
    model.train()
    try:
        L.position_distributions(model, "merci", "thanks", sv, tv)
        assert model.training
    finally:
        model.eval()
    with pytest.raises(ValueError, match="model"):
        L.position_distributions(None, "merci", "thanks", sv, tv)
    with pytest.raises(ValueError, match="tgt_vocab"):
        L.position_distributions(model, "merci", "thanks", sv, sv)
    with pytest.raises(ValueError, match="target"):
        L.position_distributions(model, "merci", "", sv, tv)


def test_train_with_snapshots_records_the_chosen_steps():
    run = L.train_with_snapshots("post", snapshot_steps=[0, 2], seed=5, steps=4)
    assert run.steps == [0, 2, 4] and run.history.steps == 4
    assert run.probs.shape == (3, 5, len(run.tgt_vocab))
    untrained, sv, tv = L.untrained_model("post", seed=5)
    start = L.position_distributions(untrained, "je suis étudiant", "i am a student", sv, tv)
    np.testing.assert_allclose(run.probs[0], start.probs, atol=1e-12)
    np.testing.assert_allclose(run.probs[-1], run.positions.probs, atol=1e-12)
    assert not np.allclose(run.probs[0], run.probs[1])
    assert not run.model.training


def test_train_with_snapshots_matches_train_corpus_and_label_smoothing():
    run = L.train_with_snapshots("post", seed=0, steps=6, label_smoothing=0.1)
    _, _, _, history = il.train_corpus("post", seed=0, steps=6, label_smoothing=0.1,
                                       device="cpu", progress=False)
    np.testing.assert_allclose(run.history.loss, history.loss, rtol=1e-6)
    with pytest.raises(ValueError, match="snapshot_steps"):
        L.train_with_snapshots("post", snapshot_steps=[7], steps=6)


def test_smoothed_targets_follow_the_torch_convention():
    t = L.smoothed_targets([2, 0], 9, 0.1)
    np.testing.assert_allclose(t.sum(axis=1), 1.0)
    np.testing.assert_allclose(t[0, 2], 0.9 + 0.1 / 9)
    np.testing.assert_allclose(t[0, 0], 0.1 / 9)
    logits = np.random.default_rng(0).normal(size=(2, 9))
    ours = il.reference.cross_entropy(t, il.reference.softmax(logits)).mean()
    theirs = F.cross_entropy(torch.tensor(logits), torch.tensor([2, 0]), label_smoothing=0.1)
    np.testing.assert_allclose(ours, theirs.item(), rtol=1e-12)
    with pytest.raises(ValueError, match="epsilon"):
        L.smoothed_targets([1], 9, 1.5)
