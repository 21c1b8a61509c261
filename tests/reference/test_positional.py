"""Positional encoding: the post's d=4 example, the paper's formula, and the rotation M_k."""
from __future__ import annotations

import numpy as np
import pytest

from illustrated.reference import (positional_encoding, positional_frequencies,
                                   relative_position_matrix)


def test_post_d4_example_is_the_concatenated_layout():
    pe = positional_encoding(3, 4, layout="concatenated")
    np.testing.assert_allclose(pe, [[0.0, 0.0, 1.0, 1.0],
                                     [0.8415, 0.0001, 0.5403, 1.0],
                                     [0.9093, 0.0002, -0.4161, 1.0]], atol=5e-5)


def test_interleaved_closed_form():
    d_model = 16
    pe = positional_encoding(50, d_model)
    for pos, i in [(0, 0), (1, 0), (7, 3), (49, 7), (23, 5)]:
        angle = pos / 10000 ** (2 * i / d_model)
        assert pe[pos, 2 * i] == pytest.approx(np.sin(angle), abs=1e-15)
        assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-15)


def test_concatenated_matches_tensor2tensor_formula():
    # get_timing_signal_1d(length, channels, min_timescale=1, max_timescale=1e4), rewritten.
    length, channels = 20, 512
    num_timescales = channels // 2
    increment = np.log(1e4 / 1.0) / (num_timescales - 1)
    inv_timescales = 1.0 * np.exp(np.arange(num_timescales) * -increment)
    scaled_time = np.arange(length)[:, None] * inv_timescales[None, :]
    signal = np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)
    np.testing.assert_allclose(positional_encoding(length, channels, "concatenated"), signal,
                               atol=1e-12)


def test_20_by_512_heatmap_is_split_in_half():
    pe = positional_encoding(20, 512, layout="concatenated")
    assert pe.shape == (20, 512)
    assert np.abs(pe).max() <= 1.0
    np.testing.assert_array_equal(pe[0, :256], 0.0)  # left half: sines
    np.testing.assert_array_equal(pe[0, 256:], 1.0)  # right half: cosines


def test_frequencies_run_from_1_to_1e_minus_4_only_in_tensor2tensor():
    t2t = positional_frequencies(512, "concatenated")
    paper = positional_frequencies(512, "interleaved")
    assert t2t[0] == paper[0] == 1.0
    assert t2t[-1] == pytest.approx(1e-4)
    assert paper[-1] == pytest.approx(1e4 ** (-510 / 512))


@pytest.mark.parametrize("d_model", [4, 8, 64, 512])
def test_layouts_are_not_a_column_permutation_of_each_other(d_model):
    interleaved = positional_encoding(30, d_model, "interleaved")  # (30, d_model)
    concatenated = positional_encoding(30, d_model, "concatenated")  # (30, d_model)
    # distance[j, i]: largest difference between column j of one layout and column i of the other
    distance = np.abs(concatenated[:, :, None] - interleaved[:, None, :]).max(axis=0)
    unmatched = ~(distance < 1e-9).any(axis=1)  # (d_model,)
    assert unmatched.any()  # some column of one layout is no column of the other
    assert unmatched.sum() == d_model - 2  # only the frequency-1 pair is shared


def test_layouts_agree_for_d_model_2():
    np.testing.assert_array_equal(positional_encoding(10, 2, "interleaved"),
                                  positional_encoding(10, 2, "concatenated"))


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize("k", [0, 1, 3, 17, -2])
def test_relative_position_is_a_fixed_linear_map(layout, k):
    d_model = 16
    pe = positional_encoding(60, d_model, layout)
    M_k = relative_position_matrix(k, d_model, layout)
    for pos in [2, 5, 11, 30]:
        np.testing.assert_allclose(M_k @ pe[pos], pe[pos + k], atol=1e-12)


def test_relative_position_matrix_is_a_block_rotation():
    M = relative_position_matrix(3, 8)
    np.testing.assert_allclose(M @ M.T, np.eye(8), atol=1e-12)
    w = positional_frequencies(8)[1]
    np.testing.assert_allclose(M[2:4, 2:4], [[np.cos(3 * w), np.sin(3 * w)],
                                             [-np.sin(3 * w), np.cos(3 * w)]])
    np.testing.assert_array_equal(M[:2, 2:], 0.0)
    np.testing.assert_allclose(relative_position_matrix(0, 8), np.eye(8))
    np.testing.assert_allclose(relative_position_matrix(2, 8) @ relative_position_matrix(5, 8),
                               relative_position_matrix(7, 8), atol=1e-12)


def test_zero_positions_gives_an_empty_array():
    assert positional_encoding(0, 8).shape == (0, 8)


@pytest.mark.parametrize("d_model", [3, 0, -4])
def test_d_model_must_be_positive_and_even(d_model):
    with pytest.raises(ValueError, match=r"d_model: expected"):
        positional_encoding(4, d_model)


def test_unknown_layout():
    with pytest.raises(ValueError, match=r"layout: expected one of .*got 'sideways'"):
        positional_encoding(4, 8, layout="sideways")


@pytest.mark.parametrize("n_positions", [-1, 2.0])
def test_bad_n_positions(n_positions):
    with pytest.raises(ValueError, match=r"n_positions: expected a non-negative integer"):
        positional_encoding(n_positions, 8)


def test_bad_offset():
    with pytest.raises(ValueError, match=r"k: expected an integer offset"):
        relative_position_matrix(1.5, 8)
