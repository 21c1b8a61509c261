"""Text the package reads: one Unicode normalisation (NFC) everywhere, and special tokens never
taken for words (typed sentences, vocabularies, the argument checks of encode_sentence)."""
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from illustrated.data import Vocab, encode_sentence, load_corpus, tokenize
from illustrated.data.pairs_file import build_vocab
from illustrated.data.tokenizer import SPECIALS, normalize

NFC, NFD = (lambda s, f=form: unicodedata.normalize(f, s) for form in ("NFC", "NFD"))

def test_decomposed_and_precomposed_accents_are_one_word():
    assert NFD("étudiant") != "étudiant"
    assert tokenize(NFD("Je suis ÉTUDIANT")) == tokenize("je suis étudiant") \
        == ["je", "suis", "étudiant"]
    _, src_vocab, _ = load_corpus("fr-en")
    assert src_vocab.encode(NFD("je suis étudiant")) == src_vocab.encode("je suis étudiant")
    assert src_vocab.unk_id not in src_vocab.encode(NFD("je suis étudiant"))
    assert encode_sentence(src_vocab, NFD("étudiant")) == [src_vocab.index("étudiant")]
    # a vocabulary built from a decomposed file knows the typed (precomposed) word
    vocab = build_vocab([NFD("le café")])
    assert vocab.encode("le café") == [vocab.index("le"), vocab.index("café")]
    assert "café" in vocab and NFD("café") in vocab


def test_a_vocabulary_saved_decomposed_matches_typed_words_with_the_same_ids():
    tokens = ["<pad>", "<bos>", "<eos>", "<unk>", NFD("été"), "mer"]
    vocab = Vocab(tokens)
    assert vocab.tokens == ["<pad>", "<bos>", "<eos>", "<unk>", "été", "mer"]
    assert vocab.index("été") == vocab.index(NFD("été")) == 4
    assert vocab.encode("été mer") == [4, 5]
    with pytest.raises(ValueError, match=r"^tokens: got 'é' twice \(positions 4 and 5\)"):
        Vocab([*SPECIALS, NFD("é"), "é"])


def test_shipped_corpora_and_vocabularies_are_nfc():
    pairs, src_vocab, tgt_vocab = load_corpus("coreference")
    assert all(NFC(s) == s and NFC(t) == t for s, t in pairs)
    assert all(NFC(w) == w for w in src_vocab.tokens + tgt_vocab.tokens)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1).filter(str.strip))
def test_canonically_equivalent_sentences_give_the_same_nfc_tokens(sentence):
    try:
        tokens = tokenize(sentence)
    except ValueError as error:  # a special token typed as a word
        assert str(error).startswith("sentence: expected no special token, got '<")
        return
    assert tokenize(NFD(sentence)) == tokenize(NFC(sentence)) == tokens
    assert all(normalize(t) == t for t in tokens)


@pytest.mark.parametrize("sentence, special", [
    ("<pad>", "<pad>"), ("je suis <eos> étudiant", "<eos>"), ("merci <BOS>", "<bos>"),
    ("<unk>.", "<unk>"), ("<pad> <eos>", "<pad>"),
])
def test_special_tokens_typed_as_words_are_refused(sentence, special):
    vocab = Vocab.build(["je suis étudiant", "merci"])
    message = rf"^sentence: expected no special token, got '{special}'$"
    for call in (lambda: tokenize(sentence), lambda: vocab.encode(sentence),
                 lambda: encode_sentence(vocab, sentence),
                 lambda: encode_sentence(vocab, sentence, allow_unk=True)):
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(ValueError, match=rf"^target: expected no special token, got '{special}'"):
        encode_sentence(vocab, sentence, name="target")
    with pytest.raises(ValueError, match=r"^sentences: sentence 1: sentence: expected no special"):
        Vocab.build(["merci", sentence])
    with pytest.raises(ValueError, match=r"^sentences: sentence 0: sentence: expected no special"):
        build_vocab([sentence])


def test_a_special_token_inside_a_word_is_only_a_word():
    vocab = Vocab.build(["je suis"])
    assert tokenize("x<eos> <pad>y") == ["x<eos>", "<pad>y"]
    assert vocab.encode("je x<eos>") == [vocab.index("je"), vocab.unk_id]
    assert vocab.index("<eos>") == vocab.eos_id  # the vocabulary itself still has its specials


@pytest.mark.parametrize("flag", ["no", "False", 0, 1, None, 1.0])
def test_bool_arguments_must_be_bools(flag):
    vocab = Vocab.build(["je suis"])
    with pytest.raises(TypeError, match=r"^allow_unk: expected True or False, got"):
        encode_sentence(vocab, "je zzz", allow_unk=flag)
    with pytest.raises(TypeError, match=r"^specials_first: expected True or False, got"):
        Vocab.build(["je"], specials_first=flag)


def test_numpy_bools_are_bools():
    vocab = Vocab.build(["je suis"])
    assert encode_sentence(vocab, "je zzz", allow_unk=np.True_) == [vocab.index("je"),
                                                                   vocab.unk_id]
    with pytest.raises(ValueError, match=r"sentence: has words the vocabulary does not know"):
        encode_sentence(vocab, "je zzz", allow_unk=np.False_)
    assert Vocab.build(["b a"], specials_first=np.False_).tokens[:2] == ["a", "b"]
