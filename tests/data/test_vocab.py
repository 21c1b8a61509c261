"""Vocab: special ids, unknown words, encode/decode, errors that name their argument."""
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from illustrated.data import Vocab, load_corpus
from illustrated.data.vocab import SPECIALS


@pytest.fixture
def vocab():
    return Vocab.build(["je suis étudiant", "merci", "l'animal"])


def test_build_puts_specials_first_then_sorted_words(vocab):
    assert vocab.tokens == ["<pad>", "<bos>", "<eos>", "<unk>", "animal", "je", "l'", "merci",
                            "suis", "étudiant"]
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert vocab.specials == {0, 1, 2, 3}
    assert len(vocab) == 10
    assert Vocab.build(["merci", "l'animal", "je suis étudiant"]) == vocab  # order-free


def test_build_words_first():
    v = Vocab.build(["b a"], specials_first=False)
    assert v.tokens == ["a", "b", *SPECIALS]
    assert v.pad_id == 2 and v.unk_id == 5


def test_post_target_vocab_follows_the_post_figure():
    _, _, tgt = load_corpus("post")
    assert tgt.tokens[:6] == ["a", "am", "i", "thanks", "student", "<eos>"]
    assert [tgt.index(w) for w in ["a", "am", "i", "thanks", "student", "<eos>"]] == list(range(6))
    assert tgt.eos_id == 5
    assert {tgt.pad_id, tgt.bos_id, tgt.unk_id} == {6, 7, 8}
    assert tgt.encode("i am a student") == [2, 1, 0, 4]
    assert tgt.decode([2, 1, 0, 4, 5]) == "i am a student"


def test_encode_words_only_and_unknown_words(vocab):
    assert vocab.encode("je suis étudiant") == [5, 8, 9]
    assert vocab.encode("Je suis  ÉTUDIANT") == [5, 8, 9]
    assert vocab.encode("je suis professeur") == [5, 8, vocab.unk_id]
    assert vocab.encode("l'animal") == [6, 4]
    assert vocab.index("chien") == vocab.unk_id
    assert "merci" in vocab and "chien" not in vocab and 3 not in vocab


def test_decode_drops_specials_and_accepts_tensors(vocab):
    ids = [vocab.bos_id, 5, 8, vocab.unk_id, 9, vocab.eos_id, vocab.pad_id, vocab.pad_id]
    assert vocab.decode(ids) == "je suis étudiant"
    assert vocab.decode(torch.tensor(ids)) == "je suis étudiant"
    assert vocab.decode(np.array(ids)) == "je suis étudiant"
    assert vocab.decode((6, 4)) == "l'animal"
    assert vocab.decode([]) == ""
    assert vocab.token(np.int64(7)) == "merci"
    assert vocab.token(torch.tensor(9)) == "étudiant"


def test_round_trip_encode_decode_on_fr_en():
    pairs, src, tgt = load_corpus("fr-en", "test")
    for source, target in pairs:
        assert src.decode(src.encode(source)) == source
        assert tgt.decode(tgt.encode(target)) == target


@pytest.mark.parametrize("bad", [-1, 10, 99])
def test_out_of_range_ids_name_the_argument(vocab, bad):
    with pytest.raises(ValueError, match=rf"^ids: got id {bad}, expected an id in \[0, 10\)"):
        vocab.decode([4, bad])
    with pytest.raises(ValueError, match=rf"^id: got id {bad}, expected an id in \[0, 10\)"):
        vocab.token(bad)


def test_bad_ids_are_value_errors(vocab):
    with pytest.raises(ValueError, match=r"^ids: got float 1.5"):
        vocab.decode([1.5])
    with pytest.raises(ValueError, match=r"^ids: got the bool True"):
        vocab.decode([True])
    with pytest.raises(ValueError, match=r"^ids: got list"):  # 2-D
        vocab.decode(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"^ids: got 'abc'"):
        vocab.decode("abc")
    with pytest.raises(ValueError, match=r"^sentence: got an empty sentence"):
        vocab.encode("  ")
    with pytest.raises(ValueError, match=r"^word: got int 3, expected a str"):
        vocab.index(3)


@pytest.mark.parametrize("tokens, message", [
    (["<pad>", "<bos>", "<eos>"], r"^tokens: got no \['<unk>'\], expected all special tokens"),
    ([*SPECIALS, "a", "a"], r"^tokens: got 'a' twice \(positions 4 and 5\)"),
    ([*SPECIALS, "a b"], r"^tokens: got 'a b' at position 4, expected a non-empty"),
    (["<pad>", "<bos>", "<eos>", "<unk>", ""], r"^tokens: got '' at position 4"),
    (["<pad>", "<bos>", "<eos>", "<unk>", 7], r"^tokens: got 7 at position 4"),
    ("<pad><bos>", r"^tokens: got '<pad><bos>', expected a sequence"),
])
def test_constructor_rejects_bad_tokens(tokens, message):
    with pytest.raises(ValueError, match=message):
        Vocab(tokens)


def test_build_rejects_bad_sentences():
    with pytest.raises(ValueError, match=r"^sentences: got 'merci', expected an iterable"):
        Vocab.build("merci")
    message = r"^sentences: sentence 1: sentence: got an empty sentence"
    with pytest.raises(ValueError, match=message):
        Vocab.build(["merci", ""])


def test_to_dict_from_dict_through_json(vocab):
    data = json.loads(json.dumps(vocab.to_dict()))
    assert data == {"tokens": vocab.tokens}
    again = Vocab.from_dict(data)
    assert again == vocab and again is not vocab
    assert again.pad_id == vocab.pad_id
    with pytest.raises(ValueError, match=r"^data: got"):
        Vocab.from_dict(["<pad>"])


def test_equality_and_repr(vocab):
    assert vocab != Vocab([*reversed(vocab.tokens)])
    assert vocab != vocab.tokens  # not equal to a plain list
    text = repr(vocab)
    assert text.startswith("Vocab(size=10, pad_id=0, tokens=['<pad>'") and text.endswith("...])")
    assert len(text) < 120


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["je", "suis", "étudiant", "merci", "l'", "animal", "chien"]),
                min_size=1, max_size=10))
def test_encode_gives_one_id_per_token(words):
    vocab = Vocab.build(["je suis étudiant", "merci", "l'animal"])
    ids = vocab.encode(" ".join(words))
    assert len(ids) == len(words)
    assert all(0 <= i < len(vocab) for i in ids)
    assert [vocab.token(i) if i != vocab.unk_id else w for i, w in zip(ids, words)] == words


def test_merge_forms_keeps_every_id_and_reads_a_word_as_its_first():
    """A vocabulary saved before tokens were normalised may spell a word in two Unicode forms
    (an older checkpoint): with merge_forms both ids stay (the model's rows), the word reads as
    the first, and both decode to it; without, the second spelling is refused."""
    nfd, nfc = "e\u0301te\u0301", "\u00e9t\u00e9"
    tokens = ["<pad>", "<bos>", "<eos>", "<unk>", nfd, "a", nfc]
    with pytest.raises(ValueError, match=r"^tokens: got 'été' twice \(positions 4 and 6\)"):
        Vocab(tokens)
    vocab = Vocab(tokens, merge_forms=True)
    assert len(vocab) == 7 and vocab.merged == {nfc: [4, 6]}
    assert vocab.encode(f"{nfc} a {nfd}") == [4, 5, 4] and vocab.index(nfc) == 4
    assert vocab.decode([6, 4]) == f"{nfc} {nfc}"
    assert Vocab(["<pad>", "<bos>", "<eos>", "<unk>", "a"], merge_forms=True).merged == {}
    with pytest.raises(TypeError, match=r"^merge_forms: expected True or False"):
        Vocab(tokens, merge_forms="yes")
