"""Chapter 06: Add & Norm drawn from the modules, real vectors around layer norm, post-LN vs pre-LN."""
import copy
from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch06, kit

CFG = replace(il.TINY, src_vocab_size=10, tgt_vocab_size=10)
ENCODER = ["Self-Attention", "Feed Forward"]
DECODER = ["Self-Attention", "Encoder-Decoder Attention", "Feed Forward"]


pytestmark = pytest.mark.usefixtures("one_thread")


WIDTHS = (kit.DESKTOP_WIDTH_IN, kit.PHONE_WIDTH_IN)


def _texts(fig):
    """The figure's texts, a label wrapped on two lines read as one."""
    return [" ".join(t.get_text().split()) for t in fig.axes[0].texts]


def _residuals(fig):
    return [line for line in fig.axes[0].lines if line.get_gid() == "residual"]


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_describe_stack_reads_the_modules(n_layers):
    state = torch.get_rng_state()
    plan = ch06.describe_stack(replace(CFG, n_layers=n_layers))
    assert torch.equal(torch.get_rng_state(), state)  # building the modules drew nothing
    assert plan.norm_first is False and plan.final_norm is False
    assert plan.encoder == [ENCODER] * n_layers
    assert plan.decoder == [DECODER] * n_layers
    assert ch06.describe_stack(replace(CFG, norm_first=True)).final_norm is True


def test_draw_layer_post_ln(legible, width):
    fig = ch06.draw_layer(CFG, ["a", "b", "c"], width=width)
    texts = _texts(fig)
    assert texts.count("Add & Normalize") == 2 and "LayerNorm" not in texts
    assert texts.count("Feed Forward") == 3  # one network per word
    assert len(_residuals(fig)) == 2
    assert "encoder layer 0" in texts and ["x0", "x1", "x2"] == [t for t in texts if
                                                              t in ("x0", "x1", "x2")]
    legible(fig, width)


def test_draw_layer_pre_ln(legible, width):
    fig = ch06.draw_layer(replace(CFG, norm_first=True), title="pre-LN", width=width)
    texts = _texts(fig)
    assert texts.count("LayerNorm") == 2 and texts.count("Add") == 2
    assert "Add & Normalize" not in texts and "pre-LN" in texts
    assert len(_residuals(fig)) == 2
    legible(fig, width)


@pytest.mark.parametrize("n_layers, norm_first", [(2, False), (2, True), (3, False)])
def test_draw_stack_follows_the_config(n_layers, norm_first, legible, width):
    fig = ch06.draw_stack(replace(CFG, n_layers=n_layers, norm_first=norm_first),
                          ["je", "suis"], ["<bos>", "i"], width=width)
    texts = _texts(fig)
    assert len(_residuals(fig)) == 5 * n_layers  # one per sub-layer
    assert len([p for p in fig.axes[0].patches if p.get_gid() == "cross"]) == n_layers
    assert texts.count("Add & Normalize") == (0 if norm_first else 5 * n_layers)
    assert texts.count("LayerNorm") == (5 * n_layers + 2 if norm_first else 0)  # + final norms
    assert texts.count("Encoder-Decoder Attention") == n_layers
    assert f"encoder layer {n_layers - 1}" in texts and f"decoder layer {n_layers - 1}" in texts
    assert "Linear" in texts and "Softmax" in texts
    legible(fig, width)


@pytest.fixture(scope="module")
def perturbed():
    """The shipped fr-en model with a non-trivial gamma and beta in every layer norm."""
    model, src_vocab, _ = il.pretrained("fr-en")
    model = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.copy_(0.5 + torch.rand(module.weight.shape, generator=generator))
                module.bias.copy_(torch.rand(module.bias.shape, generator=generator) - 0.5)
    return model, il.trace(model, "je suis étudiant", src_vocab=src_vocab)


@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("sublayer", ["self-attention", "feed-forward"])
def test_draw_add_norm_shows_torchs_layer_norm_of_x_plus_z(perturbed, layer, sublayer,
                                                           legible, width):
    model, t = perturbed
    fig = ch06.draw_add_norm(t, layer, sublayer, width=width)
    rows = [[fig.axes[3 * r + i].images[0].get_array()[0] for i in range(3)] for r in range(4)]
    x, z, summed, output = (np.array(row) for row in rows)  # each (seq, d_model)
    np.testing.assert_allclose(summed, x + z, atol=1e-6)
    norm = getattr(model.encoder.layers[layer], {"self-attention": "norm1",
                                                 "feed-forward": "norm2"}[sublayer])
    with torch.no_grad():
        expected = norm(torch.tensor(summed, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(output, expected, atol=1e-5)
    # X is the layer's real input (layer 0's self-attention: the encoder's input).
    if (layer, sublayer) == (0, "self-attention"):
        np.testing.assert_allclose(x, t.encoder_input, atol=1e-6)
    labels = [fig.axes[6 + i].get_xlabel() for i in range(3)]
    assert labels[0] == f"mean {summed[0].mean():+.2f}, std {summed[0].std():.2f}"
    assert [fig.axes[3 * r].get_ylabel() for r in range(4)] == ["X", "+ Z", "= X + Z",
                                                                "LayerNorm(X + Z)"]
    legible(fig)


def test_gradient_norms_at_init_post_ln_grows_towards_the_output(legible):
    norms = ch06.gradient_norms_at_init("reverse", n_layers=6)
    for stack in norms.values():
        assert set(stack) == {"post-LN", "pre-LN"}
        assert all(a.shape == (6,) and (a > 0).all() for a in stack.values())
    post, pre = norms["decoder"]["post-LN"], norms["decoder"]["pre-LN"]
    assert post[-1] > 3 * post[0]  # Xiong et al.: post-LN's top layers get the big gradients
    assert pre.max() < 3 * pre.min()  # pre-LN: level across layers
    for width in WIDTHS:
        fig = ch06.draw_gradient_norms(norms, width=width)
        heights = [[p.get_height() for p in c] for c in fig.axes[1].containers]
        np.testing.assert_allclose(heights, [post, pre])
        legible(fig, width)


def test_norm_placement_experiment_trains_both_from_the_same_start(legible):
    runs = ch06.norm_placement_experiment("copy", n_layers=1, steps=4, batch_size=4,
                                          test_pairs=2)
    assert list(runs) == ["post-LN", "pre-LN"]
    for history, exact in runs.values():
        assert history.steps == 4 and 0.0 <= exact <= 1.0
    assert runs["post-LN"][0].loss != runs["pre-LN"][0].loss
    histories = {label: history for label, (history, _) in runs.items()}
    for width in WIDTHS:
        fig = ch06.draw_training(histories, baseline=2.5, title="t", width=width)
        ax = fig.axes[0]
        np.testing.assert_array_equal(ax.lines[1].get_ydata(), histories["pre-LN"].loss)
        assert list(ax.lines[2].get_ydata()) == [2.5, 2.5]
        legible(fig, width)
