"""A figure draws the layer and head its title names (issue 35, item 5): for every book figure
whose title or label names a layer or a head, the numbers it draws (a heatmap's cells, the
weights written beside the lines) are read back from the figure and compared with il.trace's
numbers of the layer and head read back from the title, on models whose layers and heads differ."""
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

import illustrated as il
from illustrated.book import ch03, ch04, ch06, ch07, ch10, kit

SENTENCE = "je suis étudiant"
CORE = "the animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def post():
    """The shipped post model (2 layers of 4 heads) and its trace of SENTENCE."""
    model, src_vocab, tgt_vocab = il.pretrained("post")
    t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    cross = t.cross_attention()
    assert not np.allclose(cross[0].mean(0), cross[-1].mean(0))  # layers that can be told apart
    assert not np.allclose(cross[0][0], cross[0][1])  # and heads
    return model, src_vocab, tgt_vocab, t


def named(title: str):
    """(layer, head) a title names: head None for a mean over heads."""
    layer = re.search(r"layer (\d+)", title)
    head = re.search(r"head (\d+)", title)
    assert layer or head, title
    return (int(layer.group(1)) if layer else None), (int(head.group(1)) if head else None)


def cells(ax):
    """The numbers a heatmap axis draws (NaN for a blank cell)."""
    return np.ma.filled(ax.images[0].get_array().astype(float), np.nan)


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
def test_chapter_10s_cross_attention_is_the_layer_its_title_names(post, width):
    model, src_vocab, tgt_vocab, _ = post
    fig = ch10.draw_cross_attention(model, SENTENCE, src_vocab, tgt_vocab, width=width)
    title = fig.axes[0].get_title().replace("\n", " ")
    layer, head = named(title)
    assert head is None and "mean of heads" in title and layer == model.cfg.n_layers - 1
    t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
                 max_len=model.cfg.max_len - 1)
    np.testing.assert_allclose(cells(fig.axes[0]), t.cross_attention()[layer].mean(0),
                               atol=1e-12)
    plt.close(fig)


@pytest.mark.parametrize("layer, head", [(0, None), (1, None), (0, 2), (1, 3), (-1, 1)])
def test_chapter_07s_translation_draws_the_layer_and_head_it_names(post, layer, head):
    model, src_vocab, tgt_vocab, t = post
    fig = ch07.draw_translation(t, vocab_tokens=tgt_vocab.tokens, layer=layer, head=head)
    shown_layer, shown_head = named(fig.axes[0].get_title())
    assert shown_head == head and shown_layer == layer % model.cfg.n_layers
    weights = t.cross_attention()[shown_layer]
    np.testing.assert_allclose(cells(fig.axes[0]),
                               weights.mean(0) if head is None else weights[head], atol=1e-12)
    plt.close(fig)


@pytest.mark.parametrize("layer, head", [(0, None), (-1, 2)])
def test_chapter_07s_decoding_step_draws_the_layer_and_head_it_names(post, layer, head):
    model, src_vocab, tgt_vocab, t = post
    step = 1
    fig = ch07.draw_step(t, step, vocab_tokens=tgt_vocab.tokens, layer=layer, head=head)
    shown_layer, shown_head = named(fig.axes[1].get_title())
    assert shown_head == head and shown_layer == layer % model.cfg.n_layers
    weights = t.cross_attention()[shown_layer]
    expected = weights.mean(0) if head is None else weights[head]
    drawn = cells(fig.axes[1])
    np.testing.assert_allclose(drawn[:step + 1], expected[:step + 1], atol=1e-12)
    assert np.isnan(drawn[step + 1:]).all()  # later steps not yet taken
    plt.close(fig)


@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("sublayer", list(ch06.SUBLAYERS))
def test_chapter_06s_add_and_norm_draws_the_layer_it_names(post, layer, sublayer):
    _, _, _, t = post
    fig = ch06.draw_add_norm(t, layer, sublayer)
    title = fig.get_suptitle()
    assert named(title)[0] == layer and sublayer in title
    block = getattr(t.encoder_layers[layer], ch06.SUBLAYERS[sublayer])
    words = len(t.source_tokens)
    rows = [block.residual_input, block.sublayer_output, block.summed, block.output]
    for r, expected in enumerate(rows):
        for i in range(words):
            np.testing.assert_allclose(cells(fig.axes[r * words + i])[0], expected[i],
                                       atol=1e-12)
    plt.close(fig)


@pytest.mark.parametrize("head", [0, 3])
def test_chapter_04s_matrices_of_a_head_are_that_heads(post, head):
    model, _, _, t = post
    h = ch04.heads(model, t, 0)
    fig = ch04.draw_qkv(h, head)
    assert any(named(text.get_text()) == (None, head) for text in fig.texts
               if text.get_text().startswith("head "))
    for name, w, m in (("Q", h.w_q, h.steps.q), ("K", h.w_k, h.steps.k), ("V", h.w_v, h.steps.v)):
        [w_ax] = [ax for ax in fig.axes if ax.get_title().endswith(f"$W^{name}_{head}$")]
        np.testing.assert_allclose(cells(w_ax), w[head], atol=1e-12)
        [m_ax] = [ax for ax in fig.axes if f"= ${name}_{head}$" in ax.get_title()]
        np.testing.assert_allclose(cells(m_ax), m[head], atol=1e-12)
    plt.close(fig)


def test_chapter_04s_every_head_panel_is_that_heads(post):
    model, _, _, t = post
    h = ch04.heads(model, t, 0)
    fig = ch04.draw_z(h)
    for head in range(model.cfg.n_heads):
        [w_ax] = [ax for ax in fig.axes if ax.get_title().startswith(f"head {head} weights")]
        np.testing.assert_allclose(cells(w_ax), h.steps.weights[head], atol=1e-12)
        [z_ax] = [ax for ax in fig.axes if ax.get_title().startswith(f"× $V_{head}$ = $Z_{head}$")]
        np.testing.assert_allclose(cells(z_ax), h.steps.z[head], atol=1e-12)
    plt.close(fig)


@pytest.mark.parametrize("shown", [(0, 3), (2, 1)])
def test_chapter_04s_heads_on_it_write_the_weights_of_the_heads_they_name(shown):
    model, src_vocab, tgt_vocab = il.pretrained("coreference")
    tokens, weights = ch04.encoder_attention(model, src_vocab, tgt_vocab, CORE)
    layer = weights[-1]
    it = tokens.index("it")
    fig = ch04.draw_it_heads(tokens, layer, "it", shown)
    texts = fig.axes[0].texts
    for label in [t for t in texts if t.get_text().startswith("head ")]:
        _, head = named(label.get_text())
        column = sorted((t.get_position()[1], t.get_text()) for t in texts
                        if t.get_position()[0] == label.get_position()[0] and t is not label)
        assert [text for _, text in column] == [f"{w:.2f}" for w in layer[head, it]], head
    plt.close(fig)


@pytest.mark.parametrize("layer, head", [(0, 0), (1, 1)])
def test_chapter_03s_it_figure_writes_the_weights_of_the_head_it_names(layer, head):
    model, src_vocab, tgt_vocab = il.pretrained("coreference")
    sentences = (CORE, CORE.replace("tired", "wide"))
    rows = [ch03.it_attention(model, src_vocab, tgt_vocab, s, layer) for s in sentences]
    fig = ch03.draw_it(rows, layer, head)
    for ax, sentence in zip(fig.axes, sentences):
        [label] = [t for t in ax.texts if "encoder layer" in t.get_text()]
        assert named(label.get_text()) == (layer, head)
        t = il.trace(model, sentence, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
        it = t.source_tokens.index("it")
        right = max(x.get_position()[0] for x in ax.texts)
        written = [x.get_text() for x in sorted(ax.texts, key=lambda x: x.get_position()[1])
                   if x.get_position()[0] == right]
        assert written == [f"{w:.2f}" for w in t.encoder_layers[layer].self_attn.weights[head, it]]
    plt.close(fig)
