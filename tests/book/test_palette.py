"""The one visual language (book/palette.py): the page's CSS declares the same colours, each figure
draws with them only, a box of a tensor kind takes that kind's colour and style, and the
questions of book/quiz.py refuse answers they could not check."""
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from figure_colors import assert_palette, drawn_colors
from matplotlib.colors import to_hex

import illustrated as il
from illustrated.book import ch03, ch04, kit, palette, quiz

CSS = Path(__file__).resolve().parents[2] / "_static" / "illustrated.css"


def test_the_pages_css_declares_the_palette_of_the_figures():
    declared = dict(re.findall(r"--il-([a-z0-9-]+):\s*(#[0-9a-fA-F]{6});", CSS.read_text()))
    expected = dict(re.findall(r"--il-([a-z0-9-]+):\s*(#[0-9a-fA-F]{6});", palette.css()))
    assert declared == expected
    assert declared["query"] == kit.COLORS["query"] == "#a77bca"
    assert {declared[f"head-{i}"] for i in range(8)} == set(kit.HEAD_COLORS)


def test_a_colour_outside_the_palette_is_caught():
    fig, ax = kit.canvas((2, 1), (0, 2), (0, 1))
    kit.box(ax, 0, 0, 1, 1, "q", kind="query")
    assert_palette(fig)  # the declared query colour passes
    kit.box(ax, 1, 0, 1, 1, "?", "#123456")
    with pytest.raises(AssertionError, match="#123456"):
        assert_palette(fig)
    plt.close(fig)


@pytest.mark.parametrize("kind", list(palette.TENSORS))
def test_a_box_of_a_kind_takes_its_colour_and_style(kind):
    fig, ax = kit.canvas((1, 1), (0, 1), (0, 1))
    patch = kit.box(ax, 0, 0, 1, 1, "", kind=kind)
    assert to_hex(patch.get_facecolor()) == palette.TENSORS[kind].color
    assert (patch.get_linestyle() == "--") == palette.TENSORS[kind].dashed
    assert patch.get_boxstyle().rounding_size == palette.TENSORS[kind].rounding
    plt.close(fig)


def test_the_attention_table_colours_queries_keys_values_and_output_by_kind():
    fig = ch03.draw_steps(il.reference.thinking_machines_example(), 6)
    faces = {to_hex(c) for what, c in drawn_colors(fig) if what == "patch face"}
    assert {palette.TENSORS[k].color for k in ("input", "query", "key", "value", "weights",
                                                "z")} <= faces
    plt.close(fig)


def test_chapter_04s_projections_colour_q_k_v_as_chapter_03_does():
    model, src_vocab, tgt_vocab = il.pretrained("post")
    t = il.trace(model, "je suis étudiant", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    h = ch04.heads(model, t, 0)
    fig = ch04.draw_qkv(h, 0)
    used = {to_hex(c) for _, c in drawn_colors(fig)}
    assert {palette.TENSORS[k].color for k in ("query", "key", "value")} <= used
    plt.close(fig)


def test_the_legend_names_each_kind_in_its_colour():
    page = palette.legend_html(["query", "memory"])
    assert page.count("<li>") == 2 and "var(--il-query)" in page and "query q" in page
    assert "border-style: dashed" in page  # the encoder memory: read from elsewhere
    fig, ax = plt.subplots()
    legend = palette.legend(ax, ["key", "weights"])
    assert [t.get_text() for t in legend.get_texts()] == ["key k", "attention weights"]
    assert to_hex(legend.get_patches()[0].get_facecolor()) == palette.TENSORS["key"].color
    plt.close(fig)


def test_a_question_refuses_an_answer_it_could_not_check():
    with pytest.raises(ValueError, match="answer: expected an index of the 2 choices, got 2"):
        quiz.question("a", "?", choices=["x", "y"], answer=2, solution="")
    with pytest.raises(ValueError, match="name: expected lowercase"):
        quiz.predict("A b", "?", choices=["x"], answer=0, outcome="")
    page = quiz.question("ch03-z2", "z?", answer=4.44, tolerance=0.01, solution="s").data
    assert 'data-answer="4.44"' in page and 'aria-live="polite"' in page
    assert np.isclose(float(re.search(r'data-tolerance="([^"]+)"', page).group(1)), 0.01)
