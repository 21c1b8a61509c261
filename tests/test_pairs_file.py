"""Reading a reader's own tab-separated pairs: line-numbered errors, min-count vocabularies with
<unk>, the seeded held-out split, and sacreBLEU."""
import pytest

from illustrated.data import Vocab
from illustrated.data.pairs_file import bleu, build_vocab, read_pairs, split_pairs


def write(tmp_path, data: bytes):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(data)
    return path


def test_reads_pairs_skipping_blank_lines_bom_and_crlf(tmp_path):
    path = write(tmp_path, "\ufeffje suis étudiant\ti am a student\r\n\n merci \t thanks \n"
                 .encode())
    assert read_pairs(path) == [("je suis étudiant", "i am a student"), ("merci", "thanks")]


@pytest.mark.parametrize("data, message", [
    (b"a\tb\nno tab here\nc\td\n", "pairs.tsv:2: expected 'source<TAB>target', got no tab"),
    (b"a\tb\nc\td\te\n", "pairs.tsv:2: expected one tab between source and target, got 2 tabs"),
    (b"a\tb\n\n \tx\n", "pairs.tsv:3: expected a non-empty source, got an empty one"),
    (b"a\t  \nc\td\n", "pairs.tsv:1: expected a non-empty target, got an empty one"),
    (b"a\tb\nc\t\xe9t\xe9\n", "pairs.tsv:2: expected UTF-8 text, got the byte 0xe9 at column 3"),
    (b"a\tb\n\n", "pairs.tsv: expected at least 2 pairs (some to train on, some to test on), "
                  "got 1"),
])
def test_bad_files_name_the_line(tmp_path, data, message):
    with pytest.raises(ValueError) as error:
        read_pairs(write(tmp_path, data))
    assert message in str(error.value)


def test_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_pairs(tmp_path / "absent.tsv")


def test_min_count_drops_rare_words_to_unk():
    vocab = build_vocab(["the cat", "the dog", "a cat ."], min_count=2)
    assert vocab.tokens == ["<pad>", "<bos>", "<eos>", "<unk>", "cat", "the"]
    assert vocab.encode("the dog") == [5, vocab.unk_id]
    assert set(build_vocab(["the cat", "a dog"]).tokens) == set(Vocab.build(["the cat",
                                                                             "a dog"]).tokens)
    with pytest.raises(ValueError, match="min_count: expected an integer >= 1, got 0"):
        build_vocab(["x"], min_count=0)


def test_split_is_seeded_sized_and_disjoint():
    pairs = [(f"s{i}", f"t{i}") for i in range(20)]
    train, test = split_pairs(pairs, test_fraction=0.25, seed=3)
    assert (len(train), len(test)) == (15, 5)
    assert sorted(train + test) == sorted(pairs) and not set(train) & set(test)
    assert split_pairs(pairs, test_fraction=0.25, seed=3) == (train, test)
    assert split_pairs(pairs, test_fraction=0.25, seed=4)[1] != test
    assert [len(part) for part in split_pairs(pairs[:2], test_fraction=0.01)] == [1, 1]
    assert [len(part) for part in split_pairs(pairs[:2], test_fraction=0.99)] == [1, 1]
    with pytest.raises(ValueError, match=r"test_fraction: expected a fraction in \(0.0, 1.0\)"):
        split_pairs(pairs, test_fraction=1.0)


def test_bleu_matches_known_values():
    assert bleu(["i am a student"], ["i am a student"]) == pytest.approx(100.0)
    assert bleu(["x y z w"], ["i am a student"]) == pytest.approx(0.0)
    # precisions 4/5, 2/3, 1/2 and 0/1 -> 1/2 by sacreBLEU's 'exp' smoothing; no brevity penalty
    partial = bleu(["i am a teacher", "thanks"], ["i am a student", "thanks"])
    assert partial == pytest.approx(100 * (4 / 5 * 2 / 3 * 1 / 2 * 1 / 2) ** 0.25)
    with pytest.raises(ValueError, match="references: expected as many as the 1 hypotheses"):
        bleu(["a"], [])
