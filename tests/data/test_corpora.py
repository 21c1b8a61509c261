"""The shipped toy corpora: sizes, splits, vocabularies, the post's sentences, the grammars."""
from collections import Counter

import pytest

from illustrated.data import CORPORA, load_corpus, pronoun_correct, tokenize
from illustrated.data.coreference_grammar import VERBS, Triple, sentence_pair, triples
from illustrated.data.fr_en_grammar import fr_en_pairs

POST_TIRED = ("the animal didn't cross the street because it was too tired",
              "l'animal n'a pas traversé la rue parce qu'il était trop fatigué")
POST_WIDE = ("the animal didn't cross the street because it was too wide",
             "l'animal n'a pas traversé la rue parce qu'elle était trop large")

# (min train, max train, min test, max test)
SIZES = {"post": (2, 2, 2, 2), "fr-en": (1000, 3000, 50, 100), "copy": (2000, 4000, 100, 100),
         "reverse": (2000, 4000, 100, 100), "coreference": (1000, 3500, 50, 100)}


def words(sentences):
    return {w for s in sentences for w in tokenize(s)}


def test_names():
    assert CORPORA == ("post", "fr-en", "copy", "reverse", "coreference")


@pytest.mark.parametrize("name", CORPORA)
def test_sizes_splits_and_vocabularies(name):
    train, src, tgt = load_corpus(name)
    test, src_test, tgt_test = load_corpus(name, split="test")
    low, high, test_low, test_high = SIZES[name]
    assert low <= len(train) <= high and test_low <= len(test) <= test_high
    assert (src, tgt) == (src_test, tgt_test)  # built from both splits
    assert all(isinstance(s, str) and isinstance(t, str) and s and t for s, t in train + test)
    if name != "post":
        assert not {s for s, _ in test} & {s for s, _ in train}
    # every test word occurs in training, and no sentence ever meets <unk>
    assert words(s for s, _ in test) <= words(s for s, _ in train)
    assert words(t for _, t in test) <= words(t for _, t in train)
    assert words(s for s, _ in test) <= set(src.tokens)
    assert words(t for _, t in test) <= set(tgt.tokens)
    assert len(src) == 4 + len(words(s for s, _ in train))
    assert len(tgt) == 4 + len(words(t for _, t in train))
    assert len({s for s, _ in train}) == len(train)  # no repeated training source


def test_pairs_are_a_fresh_list():
    pairs, _, _ = load_corpus("post")
    pairs.clear()
    assert len(load_corpus("post")[0]) == 2


def test_post_corpus():
    expected = [("je suis étudiant", "i am a student"), ("merci", "thanks")]
    for split in ("train", "test"):
        pairs, src, tgt = load_corpus("post", split)
        assert pairs == expected
    assert src.pad_id == 0 and src.tokens[4:] == ["je", "merci", "suis", "étudiant"]
    assert tgt.tokens == ["a", "am", "i", "thanks", "student", "<eos>", "<pad>", "<bos>", "<unk>"]


def test_fr_en_holds_the_post_sentence_in_training_and_stays_small():
    train, src, tgt = load_corpus("fr-en")
    test, _, _ = load_corpus("fr-en", "test")
    assert ("je suis étudiant", "i am a student") in train
    assert 40 <= len(src) - 4 <= 80 and 40 <= len(tgt) - 4 <= 80
    for s, t in train + test:
        assert 2 <= len(tokenize(s)) <= 8 and 2 <= len(tokenize(t)) <= 8


@pytest.mark.parametrize("french, english", [
    ("je suis étudiant", "i am a student"),
    ("elle est fatiguée", "she is tired"),
    ("nous avons un chat", "we have a cat"),
    ("ils ne sont pas grands", "they are not tall"),
    ("il n'a pas le chien", "he does not have the dog"),
    ("j'ai une petite voiture", "i have a small car"),
    ("je n'ai pas l'arbre", "i do not have the tree"),
    ("les voitures rouges ne sont pas petites", "the red cars are not small"),
    ("l'école est grande", "the school is big"),
    ("elles sont étudiantes", "they are students"),
    ("tu n'es pas médecin", "you are not a doctor"),
])
def test_fr_en_grammar_examples(french, english):
    assert dict(fr_en_pairs())[french] == english


def test_fr_en_is_one_to_one_from_french():
    pairs = fr_en_pairs()
    assert len({fr for fr, _ in pairs}) == len(pairs)
    train, _, _ = load_corpus("fr-en")
    test, _, _ = load_corpus("fr-en", "test")
    assert set(train) | set(test) == set(pairs)


@pytest.mark.parametrize("name", ["copy", "reverse"])
def test_sequence_tasks(name):
    train, src, tgt = load_corpus(name)
    test, _, _ = load_corpus(name, "test")
    assert src == tgt and len(src) - 4 >= 10
    for s, t in train + test:
        symbols = s.split()
        assert 6 <= len(symbols) <= 10
        assert t.split() == (symbols if name == "copy" else symbols[::-1])


def test_coreference_holds_the_post_sentences_in_training():
    train, _, _ = load_corpus("coreference")
    assert POST_TIRED in train and POST_WIDE in train
    assert sentence_pair(Triple(0, 0, 0), 0) == POST_TIRED
    assert sentence_pair(Triple(0, 0, 5), 0) == POST_WIDE


@pytest.mark.parametrize("english, french", [
    ("the cow didn't cross the bridge because it was too tired",
     "la vache n'a pas traversé le pont parce qu'elle était trop fatiguée"),
    ("the cow didn't reach the bridge because it was too long",
     "la vache n'a pas atteint le pont parce qu'il était trop long"),
    ("the elephant didn't leave the highway because it was too dangerous",
     "l'éléphant n'a pas quitté l'autoroute parce qu'elle était trop dangereuse"),
    ("the dog didn't cross the river because it was too lazy",
     "le chien n'a pas traversé la rivière parce qu'il était trop paresseux"),
])
def test_coreference_examples(english, french):
    every = dict(sentence_pair(t, v) for t in triples() for v in range(len(VERBS)))
    assert every[english] == french


def test_coreference_test_pairs_are_unseen_combinations():
    def combination(english):
        t = english.split()  # the ANIMAL didn't VERB the PLACE because it was too ADJECTIVE
        return t[1], t[5], t[10]

    train, _, _ = load_corpus("coreference")
    test, _, _ = load_corpus("coreference", "test")
    seen = {combination(s) for s, _ in train}
    assert not {combination(s) for s, _ in test} & seen
    # both answers are common in the test split: guessing one pronoun cannot pass
    counts = Counter("il" if pronoun_correct("qu'il", t) else "elle" for _, t in test)
    assert min(counts.values()) >= 0.3 * len(test)


def test_unknown_name_and_bad_split():
    with pytest.raises(ValueError, match=r"^name: got 'wmt14', expected one of \['post', 'fr-en'"):
        load_corpus("wmt14")
    message = r"^split: got 'valid', expected one of \['train', 'test'\]"
    with pytest.raises(ValueError, match=message):
        load_corpus("post", "valid")


@pytest.mark.parametrize("prediction, expected", [
    ("l'animal n'a pas traversé la rue parce qu'il était trop fatigué", True),
    ("l'animal n'a pas traversé la rue parce qu'il était trop large", True),  # pronoun only
    ("l'animal n'a pas traversé la rue parce qu'elle était trop fatigué", False),
    ("l'animal n'a pas traversé la rue parce qu'ils étaient trop fatigués", False),
    ("l'animal n'a pas traversé la rue", False),
    ("", False),
    ("il elle", False),
])
def test_pronoun_correct(prediction, expected):
    assert pronoun_correct(prediction, POST_TIRED[1]) is expected


def test_pronoun_correct_errors():
    with pytest.raises(ValueError, match=r"^target: got 'the animal', expected a French sentence"):
        pronoun_correct("il", "the animal")
    with pytest.raises(ValueError, match=r"^prediction: got NoneType None, expected a str"):
        pronoun_correct(None, POST_WIDE[1])
    assert pronoun_correct("QU’ELLE", POST_WIDE[1])
