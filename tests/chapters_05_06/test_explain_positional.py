"""Chapter 05's compute functions against the reference, the modules and closed forms."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import illustrated as il
from illustrated.explain import positional as E


def test_the_posts_d4_example():
    pe = il.reference.positional_encoding(3, 4, "concatenated")
    np.testing.assert_allclose(pe, [[0, 0, 1, 1], [0.8415, 0.0001, 0.5403, 1.0],
                                    [0.9093, 0.0002, -0.4161, 1.0]], atol=5e-5)


def test_embed_with_positions_is_embedding_plus_the_table(post_model):
    model, src_vocab, _ = post_model
    r = E.embed_with_positions(model, src_vocab, "je suis étudiant")
    assert r.words == ["je", "suis", "étudiant"]
    assert r.embedding.shape == r.position.shape == r.total.shape == (3, model.cfg.d_model)
    np.testing.assert_allclose(r.total, r.embedding + r.position, atol=1e-6)
    np.testing.assert_allclose(
        r.position, il.reference.positional_encoding(3, model.cfg.d_model, model.cfg.pe_layout),
        atol=1e-6)
    ids = torch.tensor([src_vocab.encode("je suis étudiant")])
    np.testing.assert_allclose(r.embedding, model.src_embed(ids)[0].detach().numpy(), atol=1e-6)


def test_embed_with_positions_target_side(post_model):
    model, _, tgt_vocab = post_model
    r = E.embed_with_positions(model, tgt_vocab, "i am a student", side="target")
    ids = torch.tensor([tgt_vocab.encode("i am a student")])
    np.testing.assert_allclose(r.embedding, model.tgt_embed(ids)[0].detach().numpy(), atol=1e-6)


def test_embed_with_positions_rejects_bad_input(post_model):
    model, src_vocab, tgt_vocab = post_model
    with pytest.raises(ValueError, match="side"):
        E.embed_with_positions(model, src_vocab, "je", side="left")
    with pytest.raises(ValueError, match="sentence"):
        E.embed_with_positions(model, src_vocab, "je suis un chat")
    with pytest.raises(ValueError, match="sentence"):
        E.embed_with_positions(model, src_vocab, "")
    with pytest.raises(ValueError, match="vocab"):
        E.embed_with_positions(model, tgt_vocab, "i am")


def test_regroup_interleaved_is_a_column_permutation():
    pe = il.reference.positional_encoding(5, 8, "interleaved")
    regrouped = E.regroup_interleaved(pe)
    np.testing.assert_array_equal(regrouped[:, :4], pe[:, 0::2])
    np.testing.assert_array_equal(regrouped[:, 4:], pe[:, 1::2])
    with pytest.raises(ValueError, match="pe"):
        E.regroup_interleaved(np.zeros((3, 5)))


def test_compare_layouts_is_not_a_permutation():
    c = E.compare_layouts(20, 512)
    np.testing.assert_array_equal(c.concatenated,
                                  il.reference.positional_encoding(20, 512, "concatenated"))
    np.testing.assert_array_equal(c.interleaved,
                                  il.reference.positional_encoding(20, 512, "interleaved"))
    np.testing.assert_allclose(c.difference, c.concatenated - c.regrouped)
    assert c.max_difference == pytest.approx(np.abs(c.difference).max())
    # Same first frequency, different spacing after it: the last one is 1e-4 vs 10000^(-510/512).
    assert c.frequency_ratio[0] == pytest.approx(1.0)
    assert c.frequencies_concatenated[-1] == pytest.approx(1e-4)
    assert c.frequencies_interleaved[-1] == pytest.approx(10000 ** (-510 / 512))
    assert c.worst_column_match > 0.01  # no paper column matches some post column
    assert c.worst_column_match <= c.max_difference + 1e-12


def test_compare_layouts_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_positions"):
        E.compare_layouts(0, 8)
    with pytest.raises(ValueError, match="d_model"):
        E.compare_layouts(5, 2)
    with pytest.raises(ValueError, match="d_model"):
        E.compare_layouts(5, 7)


@settings(max_examples=25, deadline=None)
@given(k=st.integers(0, 20), position=st.integers(0, 20), half=st.integers(1, 16),
       layout=st.sampled_from(["interleaved", "concatenated"]))
def test_relative_shift_holds_for_every_position(k, position, half, layout):
    r = E.relative_shift(k, position, 2 * half, layout, n_positions=45)
    assert r.max_error < 1e-10
    np.testing.assert_allclose(r.rotated, r.shifted, atol=1e-10)
    np.testing.assert_allclose(r.rotated, r.matrix @ r.pe[position])
    np.testing.assert_allclose(r.matrix @ r.matrix.T, np.eye(2 * half), atol=1e-12)


def test_relative_shift_rejects_out_of_range():
    with pytest.raises(ValueError, match="k"):
        E.relative_shift(50, 0, n_positions=50)
    with pytest.raises(ValueError, match="position"):
        E.relative_shift(3, 47, n_positions=50)
    with pytest.raises(ValueError, match="n_positions"):
        E.relative_shift(0, 0, n_positions=1)


def test_order_blindness_without_and_with_positions():
    o = E.order_blindness()
    assert o.words_a == "the dog bit the man".split()
    assert [o.words_a[i] for i in o.permutation] == o.words_b
    assert o.gap_without < 1e-12
    np.testing.assert_allclose(o.z_b, o.z_a[o.permutation], atol=1e-12)
    assert o.gap_with > 0.1
    # Both "the" get the same vector without positions, different ones with them.
    np.testing.assert_allclose(o.z_a[0], o.z_a[3], atol=1e-12)
    assert np.abs(o.z_a_positions[0] - o.z_a_positions[3]).max() > 0.01


def test_order_blindness_rejects_different_words():
    with pytest.raises(ValueError, match="words_b"):
        E.order_blindness("the dog bit the man", "the cat bit the man")
    with pytest.raises(ValueError, match="sentence_b"):
        E.order_blindness("the dog", "the dog bit")
    with pytest.raises(ValueError, match="sentence_a"):
        E.order_blindness("", "")
