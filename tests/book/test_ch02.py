"""Chapter 02: the shipped post model's embeddings, x -> z -> r through an encoder layer, the
post's "Thinking Machines" layer in our module, and the feed-forward network position by
position."""
import re

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch02, kit
from illustrated.parity import encoder_layer_params

WORDS = ["je", "suis", "étudiant"]
# The seeded "Thinking Machines" layer (d_model 4, one head, d_ff 8): the chapter's checked values.
WEIGHTS = [[0.2489, 0.7511], [0.6036, 0.3964]]
Z = [[1.7271, -0.4969, -0.5326, -0.6976], [1.5792, -0.7029, -0.9985, 0.1222]]
R = [[1.6310, -0.4438, -0.1256, -1.0616], [1.7301, -0.6185, -0.6118, -0.4998]]


@pytest.fixture(scope="module")
def post():
    model, src_vocab, _ = il.pretrained("post")
    return model, src_vocab, il.trace(model, " ".join(WORDS), src_vocab=src_vocab)


def test_embedding_is_a_row_lookup_times_sqrt_d_model(post):
    model, src_vocab, t = post
    ids = src_vocab.encode(" ".join(WORDS))
    assert ids == [4, 6, 7] and model.cfg.d_model == 32
    table = model.src_embed.lut.weight.detach().double().numpy()
    assert table.shape == (len(src_vocab), 32)
    np.testing.assert_allclose(t.src_embeddings, table[ids] * np.sqrt(32), rtol=1e-6)
    np.testing.assert_allclose(il.reference.embed(ids, table), table[ids] * np.sqrt(32))


def test_draw_vectors_draws_one_row_of_boxes_per_word(post, legible, width):
    fig = ch02.draw_vectors(post[2].src_embeddings, WORDS, width=width)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), post[2].src_embeddings)
    assert [t.get_text() for t in ax.get_yticklabels()] == WORDS
    assert ax.images[0].get_clim()[0] == -ax.images[0].get_clim()[1]  # 0 is white
    assert "d_model = 32" in ax.get_xlabel()
    legible(fig, width)


def test_encoder_vectors_follow_the_model_up_the_stack(post):
    model, src_vocab, t = post
    src = torch.tensor([src_vocab.encode(" ".join(WORDS))])
    with torch.no_grad():
        h = model.positional(model.src_embed(src))
        for i, layer in enumerate(model.encoder.layers):
            x, z, r = ch02.encoder_vectors(t, i)
            np.testing.assert_allclose(x, h[0].numpy(), atol=1e-6)
            h = layer(h)
            np.testing.assert_allclose(r, h[0].numpy(), atol=1e-5)
            ref = il.reference.encoder_layer(x, encoder_layer_params(layer), model.cfg.n_heads)
            np.testing.assert_allclose(z, ref.attention.output, atol=1e-5)  # the post's z: before add & norm
    np.testing.assert_array_equal(ch02.encoder_vectors(t, 1)[0], ch02.encoder_vectors(t, 0)[2])


def test_small_encoder_layer_holds_the_reference_weights():
    layer, params = ch02.small_encoder_layer(d_model=4, d_ff=8, seed=0)
    back = encoder_layer_params(layer)
    assert set(back) == set(il.reference.ENCODER_PARAM_KEYS)
    for key in il.reference.ENCODER_PARAM_KEYS:
        np.testing.assert_array_equal(back[key], params[key], err_msg=key)
    assert layer.self_attn.n_heads == 1 and layer.feed_forward.linear1.out_features == 8


def test_thinking_machines_through_our_module_gives_the_chapters_numbers():
    layer, params = ch02.small_encoder_layer(d_model=4, d_ff=8, seed=0)
    X = il.reference.thinking_machines_example().X
    x = torch.tensor(X)[None]  # (1, 2, 4)
    with torch.no_grad():
        attention, weights = layer.self_attn(x, x, x, return_attention=True)
        z = layer.norm1(x + attention)
        r = layer.norm2(z + layer.feed_forward(z))
        whole = layer(x)[0].numpy()
    np.testing.assert_allclose(weights[0, 0].numpy(), WEIGHTS, atol=5e-5)
    np.testing.assert_allclose(z[0].numpy(), Z, atol=5e-5)
    np.testing.assert_allclose(r[0].numpy(), R, atol=5e-5)
    np.testing.assert_allclose(whole, r[0].numpy(), rtol=1e-12, atol=1e-12)
    ref = il.reference.encoder_layer(X, params, n_heads=1)
    np.testing.assert_allclose(ref.output, whole, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ref.z, z[0].numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("values", [True, False])
def test_draw_flow_has_one_attention_and_one_ffn_per_position(values, post, legible, width):
    if values:
        words = ["Thinking", "Machines"]
        x, z, r = il.reference.thinking_machines_example().X, np.array(Z), np.array(R)
    else:
        words, (x, z, r) = WORDS, ch02.encoder_vectors(post[2], 0)
    fig = ch02.draw_flow(x, z, r, words, values=values, width=width)
    ax, seq = fig.axes[0], len(words)
    assert len([p for p in ax.patches if (p.get_gid() or "").startswith("ffn-")]) == seq
    assert len(ax.lines) == seq * seq  # every input reaches every output in self-attention
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("add & norm: x + z") == texts.count("add & norm") == 1  # r is after both
    assert [f"{n}{i}" for i in range(seq) for n in "xzr"] == [t for t in texts if t[:1] in "xzr"
                                                             and t[1:].isdigit()]
    if values:
        numbers = [t for t in texts if t not in words and t[:1] not in "xzrSFa"]
        expected = [kit.format_value(v) for i in range(seq) for a in (x, z, r) for v in a[i]]
        assert numbers == expected  # x0 = 2, 2, 1, 1; z0 = 1.73, -0.50, ...
        assert len(fig.axes) == 1
        # issue 33: the alt text says the numbers the cells show, in their order
        alt = ch02.flow_alt(x, z, r, words)
        said = [n for part in re.findall(r"\b[xzr]\d = ([-\d., ]+?)(?= becomes| and|;|$)", alt)
                for n in part.split(", ")]
        assert said == numbers, alt
    else:
        assert len(fig.axes) == 2  # and a colour bar
        cells = [p for p in ax.patches if type(p).__name__ == "Rectangle" and p.get_fill()
                 and p.get_width() < 0.5]
        assert len(cells) == 3 * seq * x.shape[1]  # every number of every vector, folded or not
    legible(fig, width)


@pytest.mark.parametrize("position", [0, 1, 2])
def test_only_self_attention_mixes_positions(position, post):
    model, _, t = post
    x = t.encoder_layers[0].input
    changes = ch02.perturbation(model.encoder.layers[0], x, position, delta=0.5)
    moved = {name: np.linalg.norm(c, axis=1) for name, c in changes.items()}
    others = [i for i in range(3) if i != position]
    assert np.all(moved["feed-forward"][others] == 0.0)
    assert moved["feed-forward"][position] > 1e-3
    assert np.all(moved["self-attention"] > 1e-6) and np.all(moved["encoder layer"] > 1e-6)
    # The whole layer's change, redone with the NumPy reference and the same nudge.
    direction = np.random.default_rng(0).normal(size=x.shape[1])
    nudged = x.copy()
    nudged[position] += 0.5 * direction / np.linalg.norm(direction)
    params = encoder_layer_params(model.encoder.layers[0])
    layer = [il.reference.encoder_layer(v, params, model.cfg.n_heads).output for v in (x, nudged)]
    np.testing.assert_allclose(changes["encoder layer"], np.abs(layer[1] - layer[0]),
                               atol=1e-10)


def test_perturbation_grows_with_the_nudge(post):
    model, _, t = post
    x = t.encoder_layers[0].input
    small, big = (ch02.perturbation(model.encoder.layers[0], x, 1, delta)["feed-forward"]
                  for delta in (0.1, 5.0))
    assert np.linalg.norm(big) > 10 * np.linalg.norm(small) > 0


def test_the_feed_forward_network_is_a_convolution_of_kernel_size_1(post):
    ff = post[0].encoder.layers[0].feed_forward
    z = torch.tensor(post[2].encoder_layers[0].attn_block.output, dtype=torch.float32)[None]
    conv = [torch.nn.Conv1d(lin.in_features, lin.out_features, 1)
            for lin in (ff.linear1, ff.linear2)]
    with torch.no_grad():
        for c, lin in zip(conv, (ff.linear1, ff.linear2)):
            c.weight.copy_(lin.weight[:, :, None])
            c.bias.copy_(lin.bias)
        by_conv = conv[1](torch.relu(conv[0](z.transpose(1, 2)))).transpose(1, 2)
        rows = torch.cat([ff(z[:, i:i + 1]) for i in range(3)], dim=1)
        torch.testing.assert_close(ff(z), by_conv)
        torch.testing.assert_close(ff(z), rows)


def test_draw_perturbation_frames_the_nudged_row_and_writes_row_changes(post, legible, width):
    model, _, t = post
    changes = ch02.perturbation(model.encoder.layers[0], t.encoder_layers[0].input, 2)
    fig = ch02.draw_perturbation(changes, WORDS, 2, title="nudge", width=width)
    panels = [ax for ax in fig.axes if ax.images][:3]
    assert [ax.get_title() for ax in panels] == list(changes)
    for ax, change in zip(panels, changes.values()):
        np.testing.assert_array_equal(ax.images[0].get_array(), change)
        assert ax.patches[0].get_y() == 1.5  # the frame around row 2
        written = [float(t.get_text()) for t in ax.texts]
        np.testing.assert_allclose(written, np.linalg.norm(change, axis=1), atol=5e-3)
    assert [t.get_text() for t in panels[0].get_yticklabels()] == WORDS
    legible(fig, width)
