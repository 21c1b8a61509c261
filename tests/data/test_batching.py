"""Teacher-forcing batches: shapes, the shift right by one, padding with the vocabulary's ids."""
import pytest
import torch
from hypothesis import given, settings, strategies as st

from illustrated.data import Batch, collate, encode_pairs, load_corpus

POST = load_corpus("post")
FR_EN = load_corpus("fr-en")


def test_encode_pairs_words_only():
    pairs, src, tgt = POST
    encoded = encode_pairs(pairs, src, tgt)
    assert src.tokens[4:] == ["je", "merci", "suis", "étudiant"]
    assert encoded == [([4, 6, 7], [2, 1, 0, 4]), ([5], [3])]


def test_collate_post_batch():
    pairs, src, tgt = POST
    batch = collate(encode_pairs(pairs, src, tgt), src, tgt)
    assert isinstance(batch, Batch)
    assert batch.src.tolist() == [[4, 6, 7], [5, 0, 0]]
    # the post's target vocabulary: a am i thanks student <eos> <pad> <bos> <unk> = 0..8
    assert batch.tgt_in.tolist() == [[7, 2, 1, 0, 4], [7, 3, 6, 6, 6]]
    assert batch.tgt_out.tolist() == [[2, 1, 0, 4, 5], [3, 5, 6, 6, 6]]
    assert all(t.dtype == torch.long for t in batch)


def test_collate_shapes_shift_and_padding():
    pairs, src, tgt = FR_EN
    encoded = encode_pairs(pairs[:64], src, tgt)
    batch = collate(encoded, src, tgt, device="cpu")
    src_len = max(len(s) for s, _ in encoded)
    tgt_len = max(len(t) for _, t in encoded) + 1
    assert batch.src.shape == (64, src_len)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (64, tgt_len)
    assert (batch.tgt_in[:, 0] == tgt.bos_id).all()
    for row, (s, t) in enumerate(encoded):
        n = len(t)
        assert batch.src[row, : len(s)].tolist() == s
        assert (batch.src[row, len(s):] == src.pad_id).all()
        assert batch.tgt_out[row, : n + 1].tolist() == [*t, tgt.eos_id]
        assert (batch.tgt_out[row, n + 1:] == tgt.pad_id).all()
        assert (batch.tgt_in[row, n + 1:] == tgt.pad_id).all()
        # teacher forcing: the decoder input is the expected output shifted right by one
        assert batch.tgt_in[row, 1 : n + 1].tolist() == batch.tgt_out[row, :n].tolist()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(4, 7), min_size=1, max_size=6),
                          st.lists(st.integers(0, 4), min_size=1, max_size=6)),
                min_size=1, max_size=5))
def test_collate_property(encoded):
    _, src, tgt = POST
    batch = collate(encoded, src, tgt)
    keep = batch.tgt_out != tgt.pad_id
    # one <eos> per row, right after the words; as many non-pad targets as words + 1
    assert ((batch.tgt_out == tgt.eos_id).sum(1) == 1).all()
    assert keep.sum(1).tolist() == [len(t) + 1 for _, t in encoded]
    assert (batch.tgt_in != tgt.pad_id).sum(1).tolist() == [len(t) + 1 for _, t in encoded]
    assert ((batch.src != src.pad_id).sum(1)).tolist() == [len(s) for s, _ in encoded]


def test_collate_errors_name_the_argument():
    _, src, tgt = POST
    with pytest.raises(ValueError, match=r"^encoded: got \[\], expected a non-empty list"):
        collate([], src, tgt)
    with pytest.raises(ValueError, match=r"^encoded: got target \[\] at position 0"):
        collate([([4], [])], src, tgt)
    with pytest.raises(ValueError, match=r"^encoded: got source \[99\] at position 1"):
        collate([([4], [1]), ([99], [1])], src, tgt)
    message = r"^encoded: got \(1, 2, 3\) at position 0, expected a \(src, tgt\) pair"
    with pytest.raises(ValueError, match=message):
        collate([(1, 2, 3)], src, tgt)
    with pytest.raises(ValueError, match=r"^tgt_vocab: got list, expected a Vocab"):
        collate([([4], [1])], src, ["a"])


def test_encode_pairs_errors():
    _, src, tgt = POST
    message = r"^pairs: got 'merci' at position 0, expected a \(source, target\) pair"
    with pytest.raises(ValueError, match=message):
        encode_pairs(["merci"], src, tgt)
    with pytest.raises(ValueError, match=r"^pairs: pair 0: sentence: got an empty sentence"):
        encode_pairs([("merci", "")], src, tgt)
    with pytest.raises(ValueError, match=r"^src_vocab: got dict, expected a Vocab"):
        encode_pairs([("merci", "thanks")], {}, tgt)
