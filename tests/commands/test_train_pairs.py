"""`python -m illustrated train --pairs FILE.tsv`: a reader's own corpus end to end, then
`translate --model` on the checkpoint it wrote."""
import re

import pytest
import torch

from illustrated.commands import cli
from illustrated.files.checkpoint import load_checkpoint
from illustrated.data.pairs_file import bleu, read_pairs, split_pairs
from illustrated.inference.translate import exact_match, expected_translation, translate
from command_line import run

SUBJECTS = {"je": "i", "il": "he", "elle": "she", "nous": "we"}
VERBS = {"mange": "eat", "voit": "see", "aime": "like"}
OBJECTS = {"la pomme": "the apple", "le chat": "the cat", "le livre": "the book"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "mine.tsv"
    lines = [f"{s} {v} {o} .\t{es} {ev} {eo} ." for s, es in SUBJECTS.items()
             for v, ev in VERBS.items() for o, eo in OBJECTS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_train_pairs_reports_and_saves_a_checkpoint_translate_uses(corpus, tmp_path, capsys):
    out = tmp_path / "mine.pt"
    code, stdout, stderr = run(capsys, "train", "--pairs", str(corpus), "--steps", "40",
                               "--batch-size", "16", "--test-fraction", "0.25", "--seed", "1",
                               "--min-count", "2", "--device", "cpu", "--out", str(out))
    assert code == 0, stderr
    assert f"{corpus}: 36 pairs, 27 to train on, 9 held out" in stdout
    model, (src_vocab, tgt_vocab), cfg = load_checkpoint(out)
    train_pairs, test_pairs = split_pairs(read_pairs(corpus), test_fraction=0.25, seed=1)
    # every word of this corpus is seen at least twice in the 27 training pairs
    assert len(src_vocab) == 4 + 4 + 3 + 3 + 2 + 1 and len(tgt_vocab) == 4 + 4 + 3 + 4 + 1
    assert (cfg.d_model, cfg.n_layers, cfg.src_vocab_size) == (32, 2, len(src_vocab))
    match = exact_match(model, test_pairs, src_vocab, tgt_vocab)
    predictions = translate(model, [s for s, _ in test_pairs], src_vocab, tgt_vocab)
    score = bleu(predictions, [expected_translation(t) for _, t in test_pairs])
    assert f"test (9 pairs): exact match {100 * match:.1f} %, BLEU {score:.2f}" in stdout
    loss = float(re.search(r"final loss (\S+)", stdout).group(1))
    assert loss < 1.5  # from ln(19) = 2.9 at the start
    code, stdout, stderr = run(capsys, "translate", "--model", str(out), "je voit le chat .",
                               "zorg mange")
    assert code == 0, stderr
    first, second = stdout.splitlines()
    assert first.startswith("je voit le chat .  ->  ")
    assert second.startswith("zorg mange  ->  ")  # an unknown word is <unk>, not an error


def test_rare_words_become_unk(tmp_path, capsys):
    path = tmp_path / "rare.tsv"
    path.write_text("a b\tx\na c\tx\na b\tx y\n", encoding="utf-8")
    out = tmp_path / "rare.pt"
    code, stdout, stderr = run(capsys, "train", "--pairs", str(path), "--steps", "2",
                               "--test-fraction", "0.3", "--min-count", "2", "--device", "cpu",
                               "--out", str(out))
    assert code == 0, stderr
    _, (src_vocab, tgt_vocab), _ = load_checkpoint(out)
    train_pairs, _ = split_pairs(read_pairs(path), test_fraction=0.3, seed=0)
    words = {w for s, _ in train_pairs for w in s.split()}
    assert set(src_vocab.tokens) - {"<pad>", "<bos>", "<eos>", "<unk>"} == \
        {w for w in words if sum(s.split().count(w) for s, _ in train_pairs) >= 2}


@pytest.mark.parametrize("content, code, message", [
    (b"a\tb\nc d\n", 2, "error: {path}:2: expected 'source<TAB>target', got no tab"),
    (b"a\tb\n\xff\tc\n", 2, "error: {path}:2: expected UTF-8 text, got the byte 0xff"),
    (b"a\tb\n", 2, "error: {path}: expected at least 2 pairs"),
    (None, 1, "error: [Errno 2] No such file or directory"),
])
def test_bad_files_are_one_line_with_the_line_number(tmp_path, capsys, content, code, message):
    path = tmp_path / "bad.tsv"
    if content is not None:
        path.write_bytes(content)
    result = run(capsys, "train", "--pairs", str(path), "--device", "cpu", "--out",
                 str(tmp_path / "x.pt"))
    assert result[0] == code
    assert result[2].strip().startswith(message.format(path=path))
    assert len(result[2].strip().splitlines()) == 1
    assert not (tmp_path / "x.pt").exists()


def test_argument_errors_name_the_argument(capsys, corpus, tmp_path):
    code, _, stderr = run(capsys, "train", "--pairs", str(corpus), "--corpus", "post")
    assert code == 2 and "argument --corpus: not allowed with argument --pairs" in stderr
    code, _, stderr = run(capsys, "train", "--pairs", str(corpus), "--test-fraction", "1")
    assert code == 2 and "argument --test-fraction: expected a value in (0, 1)" in stderr
    code, _, stderr = run(capsys, "train", "--corpus", "post", "--preset", "base",
                          "--out", str(tmp_path / "y.pt"))
    assert code == 2 and "error: --preset: expected only with --pairs" in stderr
    code, _, stderr = run(capsys, "train", "--steps", "3")
    assert code == 2 and "one of the arguments --corpus --pairs is required" in stderr


def test_base_preset_is_the_papers_model():
    sizes, recipe = cli.PRESETS["base"]
    assert sizes == {"d_model": 512, "n_heads": 8, "d_ff": 2048, "n_layers": 6, "dropout": 0.1,
                     "max_len": 256}
    assert recipe["warmup"] == 4000 and recipe["label_smoothing"] == 0.1
    assert recipe["schedule"] == "noam"
    assert recipe["lr"] == pytest.approx(512 ** -0.5 * 4000 ** -0.5)  # the peak of Eq. 3


@pytest.mark.parametrize("option, value, shown", [("--min-count", "2", "2"),
                                                   ("--test-fraction", "0.2", "0.2")])
def test_pairs_only_options_are_refused_with_a_corpus(capsys, tmp_path, option, value, shown):
    code, _, stderr = run(capsys, "train", "--corpus", "post", option, value,
                          "--out", str(tmp_path / "z.pt"))
    assert code == 2
    assert f"error: {option}: expected only with --pairs, got {shown} with --corpus" in stderr
    assert not (tmp_path / "z.pt").exists()


@pytest.mark.parametrize("args, message", [
    (("--grad-accum", "0"), "argument --grad-accum: expected a value >= 1, got '0'"),
    (("--grad-accum", "two"), "argument --grad-accum: expected an integer, got 'two'"),
    (("--precision", "fp16"), "argument --precision: invalid choice: 'fp16'"),
    (("--checkpoint-every", "0"), "argument --checkpoint-every: expected a value >= 1"),
    (("--grad-accum", "9", "--batch-size", "8"),
     "error: --grad-accum: expected at most 8 micro-batches"),
])
def test_bad_loop_options_name_the_option(capsys, corpus, tmp_path, args, message):
    code, _, stderr = run(capsys, "train", "--pairs", str(corpus), "--steps", "2", "--device",
                          "cpu", "--out", str(tmp_path / "w.pt"), *args)
    assert code == 2 and message in stderr.strip().splitlines()[-1], stderr
    assert "Traceback" not in stderr and not (tmp_path / "w.pt").exists()


def test_checkpoint_every_then_resume_continues_the_run(capsys, corpus, tmp_path):
    out, straight = tmp_path / "run.pt", tmp_path / "straight.pt"
    common = ("train", "--pairs", str(corpus), "--batch-size", "8", "--device", "cpu",
              "--preset", "tiny", "--seed", "2")
    code, _, stderr = run(capsys, *common, "--steps", "4", "--out", str(straight))
    assert code == 0, stderr
    code, _, stderr = run(capsys, *common, "--steps", "2", "--checkpoint-every", "1",
                          "--out", str(out))
    assert code == 0, stderr
    code, stdout, stderr = run(capsys, *common, "--steps", "4", "--resume", str(out),
                               "--out", str(out), "--checkpoint-every", "2")
    assert code == 0, stderr
    assert "trained 4 steps" in stdout
    resumed, _, _ = load_checkpoint(out)
    reference, _, _ = load_checkpoint(straight)
    for name, weight in reference.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], weight), name
    # a finished model has no state to resume with: the message names --resume
    code, _, stderr = run(capsys, *common, "--steps", "9", "--resume", str(straight),
                          "--out", str(out))
    assert code == 2 and "error: --resume: " in stderr and "holds no training state" in stderr


def test_without_sacrebleu_the_model_is_saved_and_the_line_says_why_bleu_is_missing(
        capsys, corpus, tmp_path, monkeypatch):
    """Colab ships no sacrebleu: chapter 10's `train --pairs` lost its model to the
    ModuleNotFoundError. BLEU is optional (illustrated[bleu]); the model is saved first."""
    monkeypatch.setitem(__import__("sys").modules, "sacrebleu", None)
    out = tmp_path / "m.pt"
    code, stdout, stderr = run(capsys, "train", "--pairs", str(corpus), "--steps", "2",
                               "--device", "cpu", "--out", str(out))
    assert code == 0, stderr
    lines = stdout.splitlines()
    saved = lines.index(f"saved {out}")
    test_line = next(i for i, line in enumerate(lines) if line.startswith("test ("))
    assert saved < test_line  # saved before anything evaluates it
    assert lines[test_line].endswith(
        "BLEU not computed (import of sacrebleu halted; None in sys.modules: pip install "
        "sacrebleu)")
    load_checkpoint(out)


def test_words_out_of_vocabulary_count_as_wrong_in_the_exact_match(capsys, corpus, tmp_path):
    """--min-count 1000000 leaves every word <unk>: before, the references lost their unknown
    words too, and an empty translation of an empty reference scored 'exact match 100.0 %'."""
    code, stdout, stderr = run(capsys, "train", "--pairs", str(corpus), "--steps", "2",
                               "--min-count", "1000000", "--device", "cpu", "--out",
                               str(tmp_path / "m.pt"))
    assert code == 0, stderr
    assert "vocabularies 4 source and 4 target tokens" in stdout
    assert "exact match 0.0 %" in stdout


def test_exact_match_compares_with_the_real_reference(monkeypatch):
    from dataclasses import replace

    import illustrated as il
    from illustrated.data.pairs_file import build_vocab
    src, tgt = build_vocab(["a b"]), build_vocab(["x"])  # 'y' is not in the target vocabulary
    model = il.modules.Transformer(replace(il.TINY, src_vocab_size=len(src),
                                           tgt_vocab_size=len(tgt)))
    # a model that writes 'x' (and <unk>, which translate drops) for every source
    monkeypatch.setattr(il.inference.translate, "translate", lambda m, sentences, *a, **k:
                        ["x"] * len(sentences))
    assert exact_match(model, [("a b", "x")], src, tgt) == 1.0
    assert exact_match(model, [("a b", "x y"), ("a", "X")], src, tgt) == 0.5  # before: 1.0
    assert expected_translation("X  Y.") == "x y."
