"""The whole model in motion (chapter 07, previewed in chapter 01): the frames follow greedy
decoding of the shipped model with the tensors' real shapes, laid out for the desktop and a
phone's column; the page's widget wraps the frames in the live container."""
import html
import json
import re

import matplotlib.pyplot as plt
import pytest

import illustrated as il
from illustrated.book import kit, whole_model

SENTENCE = "je suis étudiant"


@pytest.fixture(scope="module")
def fr_en():
    return il.pretrained("fr-en")


@pytest.fixture(scope="module")
def motion(fr_en):
    return whole_model.motion(*fr_en[:1], SENTENCE, *fr_en[1:])


def test_motion_is_greedy_decoding_with_the_models_sizes(fr_en, motion):
    model, src_vocab, tgt_vocab = fr_en
    ids = il.greedy_decode(model, src_vocab.encode(SENTENCE), bos_id=tgt_vocab.bos_id,
                           eos_id=tgt_vocab.eos_id)
    assert motion.target == [tgt_vocab.tokens[i] for i in ids] == ["i", "am", "a", "student",
                                                                    "<eos>"]
    assert (motion.n_layers, motion.n_heads, motion.d_model, motion.d_k) == (2, 4, 64, 16)
    assert motion.vocab_size == len(tgt_vocab)
    assert all(0.98 < p <= 1 for p in motion.probs)
    assert [round(sum(row), 6) for row in motion.attention] == [1.0] * 5  # one softmax per step
    assert [f for f, _ in whole_model.step_labels(motion)] == ["encode", "0: i", "1: am", "2: a",
                                                               "3: student", "4: <eos>"]


def _texts(fig):  # a text wrapped onto lines read as one line
    return [t.get_text().replace("\n", " ") for t in fig.axes[0].texts]


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
def test_every_frame_shows_the_shapes_and_fits_its_column(motion, width, legible):
    for step, _ in [(s, label) for label, s in whole_model.step_labels(motion)]:
        fig = whole_model.draw_whole_model(motion, step, width=width)
        texts = _texts(fig)
        assert "(3, 64)" in texts and "encoder 0" in texts and "decoder 1" in texts
        assert any("memory (3, 64)" in t for t in texts)
        if step < 0:
            assert "the encoder reads the whole sentence once" in texts
        else:
            assert f"({step + 1}, 64)" in texts  # the decoder reads <bos> and the words so far
            assert "each (4, 3, 16)" in texts and "K, V" in texts
            assert any(t.startswith(f"{motion.target[step]}   p = ") for t in texts)
        fig.draw(fig.canvas.get_renderer())
        assert fig.get_tightbbox().width <= width + 0.05, (step, fig.get_tightbbox().width)
        legible(fig)


def test_the_page_wraps_the_frames_in_the_live_container(fr_en):
    page = whole_model.whole_model_widget("fr-en", *fr_en, SENTENCE).html()
    assert page.startswith('<div class="il-widget" data-il-widget="wholemodel"')
    assert page.endswith("</div>") and page.count('data-il-widget="frames"') == 1
    [params, frames] = re.findall(r'data-params="([^"]*)"', page)
    assert json.loads(html.unescape(params)) == {"corpus": "fr-en", "sentence": SENTENCE}
    frames = json.loads(html.unescape(frames))
    assert frames["controls"][0]["labels"][0] == "encode" and frames["play"]
    assert page.count('class="il-frame"') == 6  # encoding, then one frame per word written


def test_kernel_twin_redraws_a_typed_sentence(fr_en, monkeypatch):
    monkeypatch.delenv("ILLUSTRATED_BOOK_BUILD", raising=False)
    view = whole_model.whole_model_widget("fr-en", *fr_en, SENTENCE)._kernel()
    box, (play, step) = view.children[0], view.children[1].children
    assert step.min == -1 and step.max == 4 and play.max == 4
    box.value = "nous avons la voiture rouge"
    assert step.max == len(il.translate(fr_en[0], [box.value], *fr_en[1:])[0].split())
    plt.close("all")


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
def test_the_k_v_labels_sit_clear_of_every_box(motion, width):
    """Issue 33: "K, V" lies between the memory's bus and the decoder layers, on no box."""
    fig = whole_model.draw_whole_model(motion, 1, width=width)
    renderer = fig.canvas.get_renderer()
    labels = [t.get_window_extent(renderer) for t in fig.axes[0].texts if t.get_text() == "K, V"]
    boxes = [p.get_window_extent(renderer) for p in fig.axes[0].patches
             if type(p).__name__ == "FancyBboxPatch"]
    assert len(labels) == motion.n_layers and len(boxes) == 2 * motion.n_layers + 1
    assert not [(a.bounds, b.bounds) for a in labels for b in boxes if a.overlaps(b)]
    plt.close(fig)


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
def test_the_overview_names_nothing_a_chapter_teaches_later(motion, width, legible):
    """The front page's figure, before chapter 01: no shapes, no K and V; the start token is
    <bos>, as every chapter writes it."""
    for step in (-1, 2):
        fig = whole_model.draw_whole_model(motion, step, width=width, overview=True)
        texts = " ".join(_texts(fig))
        assert not re.search(r"\(\d|K, V|memory", texts), texts
        assert "<bos>" in texts and "(start)" not in texts
        assert "encoder 1" in texts and "decoder 0" in texts
        if step == 2:
            assert "a   p = 0.99" in texts and "reads <bos> i am, writes 'a'" in texts
        legible(fig, width)


def _longest_motion(fr_en) -> whole_model.Motion:
    """The longest sentences the shipped model takes: max_len source tokens, max_len tokens
    written (<eos> the last), each the longest of its vocabulary in turn."""
    model, src_vocab, tgt_vocab = fr_en
    n, cfg = model.cfg.max_len, model.cfg
    src_words, tgt_words = (sorted(v.tokens[4:], key=len, reverse=True)[:8]  # no specials
                            for v in (src_vocab, tgt_vocab))
    source, target = (src_words * n)[:n], (tgt_words * n)[:n - 1] + ["<eos>"]
    return whole_model.Motion(source, target, cfg.n_layers, cfg.n_heads, cfg.d_model,
                              len(tgt_vocab), [0.5] * n, [[1 / n] * n] * n)


def test_the_longest_sentence_keeps_every_word_in_the_figure_and_legible(fr_en, width,
                                                                         legible):
    """Under the stacks, every source word and every word of the decoder's input is drawn, in
    order, inside the figure, at a legible size and on no other text (they wrap onto rows)."""
    m = _longest_motion(fr_en)
    for step in (-1, 0, len(m.target) - 1):
        fig = whole_model.draw_whole_model(m, step, width=width)
        renderer = fig.canvas.get_renderer()
        stacks = min(p.get_window_extent(renderer).y0 for p in fig.axes[0].patches
                     if type(p).__name__ == "FancyBboxPatch")  # the layers' boxes
        texts = [t for t in fig.axes[0].texts if t.get_window_extent(renderer).y1 < stacks]
        words = [t for t in texts if not t.get_text().startswith(("(", "each (", "blue:"))]
        reading = ["<bos>"] + m.target[:max(step, 0)]
        assert " ".join(t.get_text() for t in words).split() == m.source + reading, step
        boxes = [t.get_window_extent(renderer) for t in fig.axes[0].texts]
        assert not [(a.bounds, b.bounds) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                    if a.overlaps(b)], step
        legible(fig, width)
