"""softmax and log_softmax: closed forms, invariances, and the all -inf row."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from illustrated.reference import log_softmax, softmax

finite_rows = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)),
                     elements=st.floats(-50, 50))


def test_post_scores_14_and_12():
    # softmax([14, 12]) = [1 / (1 + e^-2), 1 / (1 + e^2)] = [0.8808, 0.1192]
    probs = softmax([14.0, 12.0])
    np.testing.assert_allclose(probs, [1 / (1 + math.exp(-2)), 1 / (1 + math.exp(2))],
                               rtol=1e-15)
    np.testing.assert_allclose(probs, [0.8808, 0.1192], atol=5e-5)


def test_uniform_and_one_hot_limits():
    np.testing.assert_allclose(softmax(np.zeros(5)), np.full(5, 0.2))
    np.testing.assert_array_equal(softmax([0.0, -np.inf, 3.0, -np.inf])[[1, 3]], [0.0, 0.0])


def test_large_scores_do_not_overflow():
    probs = softmax([1000.0, 1000.0, -1000.0])
    np.testing.assert_allclose(probs, [0.5, 0.5, 0.0])
    assert np.isfinite(log_softmax([1000.0, -1000.0])).all()


def test_axis_argument():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), [1.0, 1.0])
    np.testing.assert_allclose(softmax(x, axis=0), softmax(x.T, axis=-1).T)


@settings(max_examples=50, deadline=None)
@given(finite_rows)
def test_rows_are_distributions(x):
    probs = softmax(x)
    assert probs.shape == x.shape
    assert (probs >= 0).all()
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(finite_rows, st.floats(-100, 100))
def test_invariant_to_shifts(x, shift):
    np.testing.assert_allclose(softmax(x + shift), softmax(x), atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(finite_rows)
def test_log_softmax_is_log_of_softmax(x):
    np.testing.assert_allclose(log_softmax(x), np.log(softmax(x)), atol=1e-10)


def test_all_minus_inf_row_raises_instead_of_nan():
    with pytest.raises(ValueError, match=r"x: .*all -inf"):
        softmax([[0.0, 1.0], [-np.inf, -np.inf]])


@pytest.mark.parametrize("bad", [[np.nan, 1.0], [np.inf, 1.0]])
def test_nan_or_plus_inf_raises(bad):
    with pytest.raises(ValueError, match=r"x: .*NaN or \+inf"):
        softmax(bad)


def test_empty_axis_raises():
    with pytest.raises(ValueError, match=r"x: expected at least one entry"):
        softmax(np.zeros((2, 0)))
