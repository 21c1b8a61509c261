"""One-hot, cross-entropy, KL divergence, label smoothing, and torch's losses."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from illustrated.reference import (cross_entropy, cross_entropy_from_logits, kl_divergence,
                                   one_hot, smooth_labels, softmax)

# The post's six-word output vocabulary.
VOCAB = ("a", "am", "i", "thanks", "student", "<eos>")


def test_one_hot_am():
    np.testing.assert_array_equal(one_hot(VOCAB.index("am"), len(VOCAB)), [0, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(one_hot([2, 0], 3), [[0, 0, 1], [1, 0, 0]])


def test_cross_entropy_of_one_hot_is_minus_log_q():
    q = np.array([0.2, 0.2, 0.1, 0.3, 0.1, 0.1])
    target = one_hot(VOCAB.index("thanks"), 6)
    assert cross_entropy(target, q) == pytest.approx(-np.log(0.3))


def test_cross_entropy_is_entropy_plus_kl(rng):
    p, q = softmax(rng.normal(size=(4, 6))), softmax(rng.normal(size=(4, 6)))
    entropy = cross_entropy(p, p)
    np.testing.assert_allclose(cross_entropy(p, q), entropy + kl_divergence(p, q))
    np.testing.assert_allclose(kl_divergence(p, p), 0.0, atol=1e-15)
    assert (kl_divergence(p, q) > 0).all()


def test_zero_probability_where_target_needs_it_is_inf():
    p, q = np.array([0.0, 1.0]), np.array([1.0, 0.0])
    assert cross_entropy(p, q) == np.inf
    assert kl_divergence(p, q) == np.inf
    assert cross_entropy(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 0.0  # 0 log 0 = 0


def test_kl_divergence_matches_torch(rng):
    p, q = softmax(rng.normal(size=(3, 6))), softmax(rng.normal(size=(3, 6)))
    p[0, 2] = 0.0  # a zero in the target is allowed
    expected = F.kl_div(torch.from_numpy(np.log(q)), torch.from_numpy(p), reduction="none")
    np.testing.assert_allclose(kl_divergence(p, q), expected.sum(-1).numpy(), atol=1e-14)


def test_smooth_labels_torch_convention():
    smoothed = smooth_labels([1, 3], 6, 0.1)
    np.testing.assert_allclose(smoothed.sum(axis=-1), 1.0)
    assert smoothed[0, 1] == pytest.approx(0.9 + 0.1 / 6)
    assert smoothed[0, 0] == pytest.approx(0.1 / 6)
    np.testing.assert_array_equal(smooth_labels([4], 6, 0.0), [one_hot(4, 6)])


def test_smooth_labels_ignored_rows_are_zero():
    smoothed = smooth_labels([1, 0, -100], 4, 0.2, ignore_ids=(0, -100))
    np.testing.assert_array_equal(smoothed[1:], 0.0)
    assert smoothed[0].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_from_logits_matches_torch(rng, label_smoothing):
    logits, targets = rng.normal(size=(7, 6)) * 3, rng.integers(0, 6, size=7)
    expected = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(targets),
                               label_smoothing=label_smoothing).item()
    assert cross_entropy_from_logits(logits, targets, label_smoothing) == pytest.approx(
        expected, rel=1e-12)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_from_logits_batched_with_ignore_index(rng, label_smoothing):
    logits, targets = rng.normal(size=(2, 5, 6)), rng.integers(1, 6, size=(2, 5))
    targets[1, 3:] = 0  # padding
    expected = F.cross_entropy(torch.from_numpy(logits).reshape(10, 6),
                               torch.from_numpy(targets).reshape(10),
                               label_smoothing=label_smoothing, ignore_index=0).item()
    got = cross_entropy_from_logits(logits, targets, label_smoothing, ignore_index=0)
    assert got == pytest.approx(expected, rel=1e-12)


def test_cross_entropy_from_logits_is_the_mean_of_cross_entropy(rng):
    logits, targets = rng.normal(size=(4, 6)), np.array([0, 5, 2, 2])
    per_position = cross_entropy(smooth_labels(targets, 6, 0.1), softmax(logits))
    assert cross_entropy_from_logits(logits, targets, 0.1) == pytest.approx(per_position.mean())


def test_cross_entropy_from_logits_stays_finite_for_huge_logits():
    logits = np.array([[1000.0, -1000.0, 0.0]])
    assert cross_entropy_from_logits(logits, [1]) == pytest.approx(2000.0)


def test_predicted_shape_must_match():
    with pytest.raises(ValueError, match=r"predicted: expected the shape of target \(3,\), "
                                         r"got \(4,\)"):
        cross_entropy(np.ones(3) / 3, np.ones(4) / 4)


def test_negative_probability():
    with pytest.raises(ValueError, match=r"predicted: expected probabilities"):
        kl_divergence([0.5, 0.5], [1.5, -0.5])


def test_one_hot_index_outside():
    with pytest.raises(ValueError, match=r"index: id 6 is outside \[0, 6\)"):
        one_hot(6, 6)


@pytest.mark.parametrize("epsilon", [-0.1, 1.5, "0.1"])
def test_epsilon_range(epsilon):
    with pytest.raises(ValueError, match=r"epsilon: expected a number in \[0, 1\]"):
        smooth_labels([0], 3, epsilon)


def test_target_id_outside_vocabulary():
    with pytest.raises(ValueError, match=r"target_ids: id 9 is outside the vocabulary"):
        cross_entropy_from_logits(np.zeros((2, 3)), [0, 9])


def test_target_ids_shape():
    with pytest.raises(ValueError, match=r"target_ids: expected shape \(2,\) to match logits"):
        cross_entropy_from_logits(np.zeros((2, 3)), [0, 1, 2])


def test_every_position_ignored():
    with pytest.raises(ValueError, match=r"target_ids: every position is ignored"):
        cross_entropy_from_logits(np.zeros((2, 3)), [0, 0], ignore_index=0)
