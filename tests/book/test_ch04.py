"""Chapter 04: one head's path through the sub-layer, the concatenation times W_O, and the live
self-attention view whose kernel twin and default picture draw il.trace's weights."""
import html
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch04

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


def test_head_figure_shows_that_heads_weights(post_trace):
    model, t = post_trace
    a = t.encoder_layers[0].self_attn
    w_o = model.encoder.layers[0].self_attn.w_o.weight.detach().numpy().T
    fig = ch04.draw_head(a, t.source_tokens, w_o, 2)
    image = fig.axes[3].images[0]
    np.testing.assert_allclose(image.get_array(), a.weights[2])
    plt.close(fig)


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
    a = t.encoder_layers[0].self_attn
    w_o = model.encoder.layers[0].self_attn.w_o.weight.detach().numpy().T
    legible(ch04.draw_head(a, t.source_tokens, w_o, 0))
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
