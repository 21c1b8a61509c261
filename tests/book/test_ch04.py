"""Chapter 04: the post's head figures (each head's W_Q/W_K/W_V and Q/K/V, every head's Z, the
concatenation times W_O), two heads on "it", and the live self-attention view whose kernel twin
and default picture draw il.trace's weights."""
import html
import json
import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch04, kit

SENTENCE = "the animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def post_trace():
    model, src_vocab, tgt_vocab = il.pretrained("post")
    t = il.trace(model, "je suis étudiant", src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    return model, t


def test_heads_are_column_blocks_of_one_projection(post_trace):
    model, t = post_trace
    a, layer = t.encoder_layers[0].self_attn, model.encoder.layers[0].self_attn
    x = torch.tensor(t.encoder_layers[0].attn_block.sublayer_input).float()
    d_k = model.cfg.d_model // model.cfg.n_heads
    with torch.no_grad():
        q = layer.w_q(x).numpy()
    for h in range(model.cfg.n_heads):
        np.testing.assert_allclose(a.q[h], q[:, h * d_k:(h + 1) * d_k], atol=1e-6)
        np.testing.assert_allclose(a.z[h], a.weights[h] @ a.v[h], atol=1e-6)
    np.testing.assert_allclose(a.concat, np.concatenate(list(a.z), axis=-1), atol=1e-6)
    w_o, b_o = (p.detach().numpy() for p in (layer.w_o.weight, layer.w_o.bias))
    np.testing.assert_allclose(a.concat @ w_o.T + b_o, a.output, atol=1e-6)


def test_heads_split_the_layer_as_the_post_draws_it(post_trace):
    """X @ W_Q[h] + b_Q[h] is head h's Q (and K, V alike); Z_h = weights_h @ V_h; the concatenation
    times W_O plus b_O is the sub-layer's output."""
    model, t = post_trace
    h = ch04.heads(model, t, 0)
    n_heads, d_k = model.cfg.n_heads, model.cfg.d_model // model.cfg.n_heads
    assert h.w_q.shape == (n_heads, model.cfg.d_model, d_k) and h.b_q.shape == (n_heads, d_k)
    for head in range(n_heads):
        for w, b, m in ((h.w_q, h.b_q, h.steps.q), (h.w_k, h.b_k, h.steps.k), (h.w_v, h.b_v, h.steps.v)):
            np.testing.assert_allclose(h.x @ w[head] + b[head], m[head], atol=1e-5)
        np.testing.assert_allclose(h.steps.weights[head] @ h.steps.v[head], h.steps.z[head], atol=1e-6)
    np.testing.assert_allclose(h.steps.concat @ h.w_o + h.b_o, h.steps.output, atol=1e-5)


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
def test_head_figures_draw_the_heads_numbers(post_trace, width, legible):
    model, t = post_trace
    h = ch04.heads(model, t, 0)
    fig = ch04.draw_qkv(h, 2, width=width)
    drawn = [im.get_array() for ax in fig.axes for im in ax.images]
    side = kit.narrow(width)  # a phone draws each W on its side, above its product
    projections = (w.T if side else w for w in (h.w_q[2], h.w_k[2], h.w_v[2]))
    for m in (h.x, h.steps.q[2], h.steps.k[2], h.steps.v[2], *projections):
        assert any(a.shape == m.shape and np.allclose(a, m) for a in drawn)
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    assert kit.format_value(h.steps.q[2][0, 0], 1) in texts  # the numbers are written in
    numbers = [t for ax in fig.axes if ax.images and ax.images[0].get_array().shape == h.steps.q[2].shape
               for t in ax.texts]
    assert len(numbers) == 3 * h.steps.q[2].size
    # figures 20 and 21 are drawn for the column, shown at their own size: numbers at 9 pt
    assert min(t.get_fontsize() for t in numbers) == 9
    assert fig.get_figwidth() <= kit.COLUMN_WIDTH_IN
    _fits(fig, width, legible)
    fig = ch04.draw_z(h, width=width)
    assert fig.get_figwidth() <= kit.COLUMN_WIDTH_IN
    if not side:
        assert min(t.get_fontsize() for ax in fig.axes for t in ax.texts) == 9
    drawn = [im.get_array() for ax in fig.axes for im in ax.images]
    for head in range(model.cfg.n_heads):
        for want in (h.steps.z[head], h.steps.weights[head]):
            assert any(np.allclose(a, want) for a in drawn if a.shape == want.shape)
    for ax in fig.axes:  # a weight is written "<.01", never "0", unless it is 0 (chapter 08)
        for image in ax.images:
            if any(image.get_array().shape == w.shape and np.allclose(image.get_array(), w)
                   for w in h.steps.weights):
                written = [t.get_text() for t in ax.texts]
                assert written == [kit.probability_text(w) for w in image.get_array().ravel()]
                assert all(t != "0" or w == 0 for t, w in zip(written, image.get_array().ravel()))
    _fits(fig, width, legible)
    fig = ch04.draw_concat(h, width=width)
    titles = [ax.get_title() for ax in fig.axes]
    assert any("to Add & Norm" in title for title in titles), titles
    assert not any("next layer" in title for title in titles)
    drawn = [im.get_array() for ax in fig.axes for im in ax.images]
    for m in (h.steps.concat, h.w_o, h.steps.output):
        assert any(a.shape == m.shape and np.allclose(a, m) for a in drawn)
    _fits(fig, width, legible)
    _fits(ch04.draw_recap(h, width=width), width, legible)


def _fits(fig, width, legible):
    """Drawn within the column it was drawn for, text at least MIN_FONT_PT (then closed)."""
    fig.draw(fig.canvas.get_renderer())
    assert fig.get_tightbbox().width <= width + 0.05, f"{fig.get_tightbbox().width:.2f} in"
    legible(fig)


@pytest.mark.parametrize("width", [kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN])
def test_two_heads_on_it_write_the_weights_the_caption_reads(width, legible):
    """Chapter 04's caption: for "... too wide", head 1 of encoder layer 1 (chapter 03's head)
    puts 0.80 on 'street', head 2 puts 0.76 on 'wide'; with "too tired" heads 1-3 all >= 0.96 on
    'animal'."""
    model, src_vocab, tgt_vocab = il.pretrained("coreference")
    tokens, weights = ch04.encoder_attention(model, src_vocab, tgt_vocab, SENTENCE.replace("tired", "wide"))
    it = tokens.index("it")
    assert [round(float(w), 2) for w in weights[1, [1, 2], it, [5, 10]]] == [0.80, 0.76]
    assert [tokens[i] for i in weights[1, [1, 2], it].argmax(-1)] == ["street", "wide"]
    _, tired = ch04.encoder_attention(model, src_vocab, tgt_vocab, SENTENCE)
    assert round(float(tired[1, 1:, it, tokens.index("animal")].min()), 2) == 0.96
    fig = ch04.draw_it_heads(tokens, weights[-1], "it", (1, 2), width=width)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "0.80" in texts and "0.76" in texts and texts.count("it") == 2
    _fits(fig, width, legible)


def test_lines_are_the_traced_weights():
    model, src_vocab, tgt_vocab = il.pretrained("coreference")
    tokens, weights = ch04.encoder_attention(model, src_vocab, tgt_vocab, SENTENCE)
    t = il.trace(model, SENTENCE, src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    np.testing.assert_array_equal(weights, t.encoder_attention())
    assert weights.shape == (model.cfg.n_layers, model.cfg.n_heads, len(tokens), len(tokens))
    fig = ch04.draw_self_attention(tokens, weights[1], head=3)
    drawn = [line for line in fig.axes[0].lines]
    expected = [(i, j, w) for (i, j), w in np.ndenumerate(weights[1, 3]) if w > 0.01]
    assert len(drawn) == len(expected)
    for line, (i, j, w) in zip(drawn, expected):
        assert list(line.get_ydata()) == [i, j]
        assert line.get_linewidth() == pytest.approx(0.5 + 3.5 * w)
    plt.close(fig)


def test_live_container_carries_its_params():
    examples = {"coreference": SENTENCE, "post": 'je "suis" <étudiant> & merci'}
    page = ch04.self_attention_widget("coreference", SENTENCE, list(examples), examples).html()
    [params] = re.findall(r'data-params="([^"]*)"', page)
    assert json.loads(html.unescape(params)) == {
        "corpus": "coreference", "sentence": SENTENCE, "corpora": ["coreference", "post"],
        "examples": examples}
    assert 'data-il-widget="selfattention"' in page and 'class="il-live-default"' in page
    assert "<étudiant>" not in page  # the example became text, not an element


def test_figures_are_legible(legible, post_trace):
    model, t = post_trace
    weights = t.encoder_attention()[0]
    legible(ch04.draw_self_attention(t.source_tokens, weights, None, "encoder layer 0"))


def test_the_live_views_default_picture_is_legible_in_both_columns(legible, post_trace, width):
    weights = post_trace[1].encoder_attention()[0]
    legible(ch04.draw_self_attention(post_trace[1].source_tokens, weights, None,
                                     "encoder layer 0", width=width), width)


def test_kernel_twin_follows_the_corpus():
    examples = {"coreference": SENTENCE, "copy": "a b c"}
    view = ch04.self_attention_widget("coreference", SENTENCE, list(examples), examples)._kernel()
    (choice, box), (layer, head) = view.children[0].children, view.children[1].children
    assert list(layer.options) == [0, 1] and layer.value == 1 and len(head.options) == 5
    choice.value = "copy"  # one layer of two heads
    assert box.value == "a b c" and list(layer.options) == [0] and len(head.options) == 3
    plt.close("all")
