"""Reading a reader's own tab-separated pairs: line-numbered errors, min-count vocabularies with
<unk>, the seeded held-out split, and sacreBLEU; special tokens, NFC, size limits, and random
files (hypothesis): pairs that read back the same, or one clear error naming file and line."""
import os
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from illustrated.data import Vocab, pairs_file, tokenize
from illustrated.data.pairs_file import bleu, bleu_order, build_vocab, read_pairs, split_pairs

SETTINGS = settings(max_examples=int(os.environ.get("ILLUSTRATED_HYPOTHESIS_EXAMPLES", 150)),
                    deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


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
    (b"a\tb\n\t\nc\td\n", "pairs.tsv:2: expected a non-empty source, got an empty one"),
    (b"a\tb\n \t \r\nc\td\n", "pairs.tsv:2: expected a non-empty source, got an empty one"),
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


def test_bleu_of_three_word_sentences_takes_the_order_they_allow():
    references = ["i am here", "you see it", "we like cats"]
    hypotheses = ["i am here", "you see it", "we like dogs"]
    assert bleu_order(references) == 3 and bleu_order(["a b c d e"]) == 4
    assert bleu_order(["hello"]) == 1 and bleu_order(["hi !"]) == 2  # 13a splits the "!"
    assert bleu(references, references) == pytest.approx(0.0)  # no 4-gram anywhere
    assert bleu(references, references, max_order=3) == pytest.approx(100.0)
    # precisions 8/9, 5/6, 2/3 (3-grams); no brevity penalty
    assert bleu(hypotheses, references, max_order=3) == pytest.approx(
        100 * (8 / 9 * 5 / 6 * 2 / 3) ** (1 / 3))
    with pytest.raises(ValueError, match="max_order: expected an integer in \\[1, 4\\], got 5"):
        bleu(references, references, max_order=5)


# ------------------------------------------------------------------ special tokens, NFC, limits

@pytest.mark.parametrize("data, message", [
    (b"<pad>\ti am\nc\td\n", "pairs.tsv:1: expected no special token, got '<pad>'"),
    (b"a\tb\nje suis\ti am <eos> a student\n", "pairs.tsv:2: expected no special token, "
                                               "got '<eos>'"),
    (b"a\tb\n\nx <UNK>\ty\n", "pairs.tsv:3: expected no special token, got '<unk>'"),
    (b"a\tb\nc\td\x00e\n", "pairs.tsv:2: expected text, got the byte 0x00 at column 4"),
])
def test_special_tokens_and_nul_bytes_name_the_line(tmp_path, data, message):
    with pytest.raises(ValueError) as error:
        read_pairs(write(tmp_path, data))
    assert str(error.value).startswith(str(tmp_path)) and message in str(error.value)


def test_pairs_are_read_in_nfc(tmp_path):
    nfd = unicodedata.normalize("NFD", "je suis étudiant\ti am a student\nmerci\tthanks\n")
    assert read_pairs(write(tmp_path, nfd.encode())) == [("je suis étudiant", "i am a student"),
                                                          ("merci", "thanks")]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_an_endless_device_is_refused_by_type_before_reading(tmp_path):
    with pytest.raises(ValueError, match=r"^/dev/zero: expected a file of sentence pairs, got a "
                                         r"character device$"):
        read_pairs("/dev/zero")
    link = tmp_path / "link.tsv"
    link.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"link.tsv: expected a file of sentence pairs, got a "
                                         r"character device$"):
        read_pairs(link)


def test_a_fifo_or_a_directory_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "pairs.tsv"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"pairs.tsv: expected a file of sentence pairs, got a "
                                         r"FIFO \(named pipe\)$"):
        read_pairs(fifo)  # before: open() waited for a writer forever
    with pytest.raises(ValueError, match=r"expected a file of sentence pairs, got a directory$"):
        read_pairs(tmp_path)


def test_line_and_file_limits_name_the_line(tmp_path, monkeypatch):
    monkeypatch.setattr(pairs_file, "MAX_LINE_BYTES", 10)
    path = write(tmp_path, b"a\tb\n0123456\t89\n0123456\t890\n")  # lines of 3, 10 and 11 bytes
    with pytest.raises(ValueError, match=r"pairs.tsv:3: expected a line of at most 10 bytes, "
                                         r"got more \(not a file of sentence pairs\?\)$"):
        read_pairs(path)
    monkeypatch.setattr(pairs_file, "MAX_FILE_BYTES", 14)
    with pytest.raises(ValueError, match=r"pairs.tsv:2: expected a file of at most 14 bytes"):
        read_pairs(path)  # 4 + 11 bytes by the end of line 2
    monkeypatch.setattr(pairs_file, "MAX_FILE_BYTES", 15)
    path = write(tmp_path, b"a\tb\n0123456\t89\n")  # exactly 15 bytes
    assert read_pairs(path) == [("a", "b"), ("0123456", "89")]


def test_sentences_are_bounded_in_tokens_on_either_side(tmp_path):
    """A sentence of MAX_SENTENCE_TOKENS tokens is read; one more is refused in one line with the
    limit (the model's positions and its attention's memory are sized for the longest one)."""
    limit = pairs_file.MAX_SENTENCE_TOKENS
    assert limit == 256
    fits = " ".join(["a"] * limit)
    path = write(tmp_path, f"{fits}\tb\nb\t{fits}\n".encode())
    assert [len(s.split()) + len(t.split()) for s, t in read_pairs(path)] == [limit + 1] * 2
    for line, side in ((f"{fits} a\tb", "source"), (f"b\t{fits} .", "target")):
        path = write(tmp_path, f"x\ty\n{line}\n".encode())
        with pytest.raises(ValueError) as info:
            read_pairs(path)
        assert str(info.value) == (f"{path}:2: expected a {side} of at most {limit} tokens, got "
                                   f"{limit + 1} (every batch is sized for the longest "
                                   f"sentence: split or drop this line)")


# ------------------------------------------------------------ any bytes: pairs or one clear error

def check_read(path, data: bytes):
    """read_pairs on ``data``: pairs that survive a write and a second read, or one ValueError
    naming the file (and the line, unless it is the count of pairs); nothing else."""
    path.write_bytes(data)
    try:
        pairs = read_pairs(path)
    except ValueError as error:
        message = str(error)
        assert message.startswith(f"{path}:") and "\n" not in message, message
        assert re.match(rf"{re.escape(str(path))}:\d+: expected ", message) \
            or message.startswith(f"{path}: expected at least 2 pairs"), message
        return None
    assert len(pairs) >= 2
    for source, target in pairs:
        for side in (source, target):
            assert side == side.strip() and side == unicodedata.normalize("NFC", side)
            assert "\t" not in side and "\n" not in side and tokenize(side)
    # a byte-order mark first, so that a first source starting with U+FEFF keeps it
    path.write_text("\ufeff" + "".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    assert read_pairs(path) == pairs
    return pairs


PIECES = st.sampled_from(["\t", "\n", "\r\n", " ", "a", "é", "e\u0301", "l'", "<pad>", "<EOS>",
                          "\x00", "\ufeff", "\u2028", "\x85", "x<unk>", ".", "qu'il"])
WORDS = st.lists(st.sampled_from(["a", "é", "e\u0301", "l'", "qu'il", "Ê", ".", " ", "x<unk>",
                                  "\u2028", "\x85", "\ufeff"]), min_size=1, max_size=5).map("".join)
PAIR_LINES = st.tuples(WORDS, WORDS).map("\t".join)
# mostly well-formed "source<TAB>target" lines, some of them with a fault
LINES = st.one_of(PAIR_LINES, PAIR_LINES, PAIR_LINES, st.lists(PIECES, max_size=8).map("".join))


@SETTINGS
@given(data=st.binary(max_size=200))
def test_random_bytes_give_pairs_or_one_clear_error(tmp_path_factory, data):
    check_read(tmp_path_factory.mktemp("bytes") / "my.tsv", data)


@SETTINGS
@given(lines=st.lists(LINES, max_size=8),
       bom=st.booleans(), ending=st.sampled_from(["\n", "\r\n", ""]))
def test_random_lines_give_pairs_or_one_clear_error(tmp_path_factory, lines, bom, ending):
    text = ("\ufeff" if bom else "") + "\n".join(lines) + ending
    check_read(tmp_path_factory.mktemp("lines") / "my.tsv", text.encode("utf-8"))


@SETTINGS
@given(pairs=st.lists(st.tuples(*[st.text(alphabet=st.characters(
    blacklist_categories=("Cs",), blacklist_characters="\t\n\x00"), min_size=1, max_size=12)
    .filter(lambda s: s.strip())] * 2), min_size=2, max_size=6))
def test_written_pairs_read_back(tmp_path_factory, pairs):
    path = tmp_path_factory.mktemp("pairs") / "my.tsv"
    got = check_read(path, "".join(f"{s}\t{t}\n" for s, t in pairs).encode("utf-8"))
    if got is not None:  # unless a side held a special token
        assert got == [(unicodedata.normalize("NFC", s.strip()),
                        unicodedata.normalize("NFC", t.strip())) for s, t in pairs]

GOOD_PAIRS = "".join(f"le chat {i}\tthe cat {i}\n" for i in range(12))


@pytest.mark.parametrize("invisible", ["\u200b", "\u200d", "\ufeff", "\u0301", "\u200b\u200c"])
@pytest.mark.parametrize("side", ["source", "target"])
def test_a_side_of_invisible_characters_only_is_refused(tmp_path, invisible, side):
    path = tmp_path / "pairs.tsv"
    line = f"{invisible}\tthe cat" if side == "source" else f"le chat\t{invisible}"
    path.write_text(GOOD_PAIRS + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        read_pairs(path)
    codes = " ".join(f"U+{ord(c):04X}" for c in invisible)
    assert str(info.value).startswith(f"{path}:13: expected a {side} with a visible character, "
                                      f"got only invisible ones ({codes}")
    assert "\n" not in str(info.value)


def test_a_word_with_an_invisible_character_inside_still_reads(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(GOOD_PAIRS + "le\u200bchat\tthe cat\n", encoding="utf-8")
    assert read_pairs(path)[-1][0] == "le\u200bchat"
