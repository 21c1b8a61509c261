"""Chapter 10: training in the page learns, the corpora state their lengths, the CLI is shown."""
import numpy as np
import matplotlib.text
import pytest

import illustrated as il
from illustrated.book import ch10, kit


def test_trained_lengths_are_the_training_split_s():
    assert ch10.trained_lengths("copy") == (6, 10)
    pairs, src_vocab, _ = il.data.load_corpus("coreference", "train")
    assert ch10.trained_lengths("coreference") == (len(src_vocab.encode(pairs[0][0])),) * 2


def test_corpus_summaries_fit_a_phone_and_name_the_first_pair():
    for corpus in il.data.CORPORA:
        text = ch10.corpus_summary(corpus)
        assert max(map(len, text.splitlines())) <= kit.PHONE_TEXT_CHARS, corpus
        pairs, _, _ = il.data.load_corpus(corpus, "train")
        source, target = pairs[0]
        words = text.split()
        arrow = words.index("→")  # the source's words before it, the target's after
        assert words[arrow - len(source.split()):arrow] == source.split()
        assert words[arrow + 1:] == target.split()
        assert text.startswith(f"{corpus}: {len(pairs)} pairs, ")
    assert "pairs, 11 words" in ch10.corpus_summary("coreference")  # one length, said once
    assert "pairs, 6-10 words" in ch10.corpus_summary("copy")


def test_snapshots_show_the_model_learning():
    model, history, snapshots = ch10.train_with_snapshots("post", ["je suis étudiant"],
                                                          at=(10, 100), steps=100)
    assert sorted(snapshots) == [0, 10, 100]
    assert snapshots[100] == ["i am a student"] != snapshots[0]
    assert len(history.loss) == 100 and history.loss[-1] < history.loss[0] / 10


def test_figures_are_legible_and_the_attention_rows_sum_to_one(legible, width):
    model, src_vocab, tgt_vocab = il.pretrained("fr-en")
    fig = ch10.draw_cross_attention(model, "nous avons la voiture rouge", src_vocab, tgt_vocab,
                                    width=width)
    rows = fig.axes[0].images[0].get_array()
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-6)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == \
        ["nous", "avons", "la", "voiture", "rouge"]
    legible(fig, width)
    history = il.History(loss=[3.0, 1.0, 0.5], accuracy=[0, 0.5, 1])
    legible(ch10.draw_training(history, {0: ["a " * 20], 2: ["b"]}, ["x"], 2, width=width),
            width)
    # an untrained model's long output, cut where it would pass the column (a reader's finding:
    # "student student … st" ran off a phone's figure)
    fig = ch10.draw_training(history, {0: ["student " * 20], 2: ["b"]}, ["je suis étudiant"], 0,
                             width=width)
    legible(fig, width)
    said = [t for t in fig.findobj(matplotlib.text.Text) if "student" in t.get_text()]
    assert said and said[0].get_text().endswith("student …")
    box = said[0].get_window_extent()
    assert 0 <= box.x0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)


@pytest.mark.parametrize("corpus", ["fr-en", "copy"])
def test_the_translate_widget_offers_every_corpus(corpus):
    sentence = il.data.load_corpus(corpus, "test")[0][0][0]
    page = ch10.translate_widget(corpus, sentence).html()
    assert 'class="il-live-default"' in page
    assert 'data-il-widget="translate"' in page
    for name in il.data.CORPORA:
        assert f"&quot;{name}&quot;" in page


def test_cli_prints_the_command_and_the_one_line_error(tmp_path, capsys):
    (tmp_path / "bad.tsv").write_text("je suis\tI am\nnous sommes we are\n", encoding="utf-8")
    ch10.cli("train", "--pairs", "bad.tsv", cwd=tmp_path, fails=True)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "$ python -m illustrated train --pairs bad.tsv"
    assert out[1].startswith("error: bad.tsv:2: expected 'source<TAB>target', got no tab")


def test_cli_raises_when_a_command_does_not_end_as_expected(tmp_path):
    (tmp_path / "bad.tsv").write_text("no tab here\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="exited with 2"):
        ch10.cli("train", "--pairs", "bad.tsv", cwd=tmp_path)
