"""Chapter 06's compute functions against torch's layers, the reference and the modules."""
from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.explain import norms as N

CFG = replace(il.TINY, src_vocab_size=10, tgt_vocab_size=10)


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_describe_stack_post_ln(n_layers):
    plan = N.describe_stack(replace(CFG, n_layers=n_layers))
    assert plan.norm_first is False
    assert plan.encoder == [["Self-Attention", "Feed Forward"]] * n_layers
    assert plan.decoder == [["Self-Attention", "Encoder-Decoder Attention",
                             "Feed Forward"]] * n_layers
    assert (plan.encoder_final_norm, plan.decoder_final_norm) == (False, False)


def test_describe_stack_pre_ln_has_final_norms():
    plan = N.describe_stack(replace(CFG, norm_first=True))
    assert plan.norm_first is True
    assert (plan.encoder_final_norm, plan.decoder_final_norm) == (True, True)
    with pytest.raises(ValueError, match="cfg"):
        N.describe_stack({"n_layers": 2})


@pytest.mark.parametrize("layer", [0, 1])
def test_add_norm_vectors_match_torch_layer_norm(post_model, layer):
    model, src_vocab, _ = post_model
    model = copy.deepcopy(model)
    with torch.no_grad():
        model.encoder.layers[layer].norm1.weight.uniform_(0.5, 1.5)  # a non-trivial gamma/beta
        model.encoder.layers[layer].norm1.bias.uniform_(-0.5, 0.5)
    v = N.add_norm_vectors(model, src_vocab, "je suis étudiant", layer=layer)
    np.testing.assert_allclose(v.summed, v.x + v.z, atol=1e-6)
    np.testing.assert_allclose(v.mean, v.summed.mean(-1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(v.variance, v.summed.var(-1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(v.normalized.mean(-1), 0, atol=1e-9)
    np.testing.assert_allclose(v.normalized.std(-1), 1, atol=1e-4)
    torch_norm = torch.nn.LayerNorm(v.x.shape[-1], dtype=torch.float64)
    with torch.no_grad():
        torch_norm.weight.copy_(torch.from_numpy(v.gamma))
        torch_norm.bias.copy_(torch.from_numpy(v.beta))
    expected = torch_norm(torch.from_numpy(v.summed)).detach().numpy()
    np.testing.assert_allclose(v.output, expected, atol=1e-5)
    np.testing.assert_allclose(v.normalized * v.gamma + v.beta, v.output, atol=1e-5)
    # X is the layer's real input: running the whole layer from X reproduces the model's stack.
    with torch.no_grad():
        x = torch.tensor(v.x[None], dtype=torch.float32)
        layer_out = model.encoder.layers[layer](x)
        h = model.encoder.layers[layer].norm1(x + model.encoder.layers[layer].self_attn(x, x, x))
    np.testing.assert_allclose(v.output, h[0].numpy(), atol=1e-5)
    assert layer_out.shape == (1, 3, model.cfg.d_model)


def test_add_norm_vectors_rejects_bad_input(post_model):
    model, src_vocab, _ = post_model
    with pytest.raises(ValueError, match="layer"):
        N.add_norm_vectors(model, src_vocab, "je", layer=2)
    with pytest.raises(ValueError, match="sentence"):
        N.add_norm_vectors(model, src_vocab, "bonjour")
    with pytest.raises(ValueError, match=r"sentence: .*\['bonjour'\]"):
        N.add_norm_vectors(model, src_vocab, "je bonjour")


def test_add_norm_vectors_pre_ln(post_model):
    """Pre-LN: norm1 normalizes X itself, self-attention reads LayerNorm(X), X + Z is not normed."""
    model, src_vocab, _ = post_model
    torch.manual_seed(0)
    pre = il.modules.Transformer(replace(model.cfg, norm_first=True)).eval()
    with torch.no_grad():
        pre.encoder.layers[0].norm1.weight.uniform_(0.5, 1.5)
        pre.encoder.layers[0].norm1.bias.uniform_(-0.5, 0.5)
    v = N.add_norm_vectors(pre, src_vocab, "je suis étudiant")
    assert v.norm_first is True
    np.testing.assert_allclose(v.summed, v.x + v.z, atol=1e-6)
    np.testing.assert_allclose(v.mean, v.x.mean(-1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(v.normalized * v.gamma + v.beta, v.output, atol=1e-5)
    with torch.no_grad():
        x = torch.tensor(v.x[None], dtype=torch.float32)
        block = pre.encoder.layers[0]
        h = block.norm1(x)
        z = block.self_attn(h, h, h)
    np.testing.assert_allclose(v.output, h[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(v.z, z[0].numpy(), atol=1e-5)
    post = N.add_norm_vectors(model, src_vocab, "je suis étudiant")
    assert post.norm_first is False


def test_norm_placement_experiment_small():
    runs = N.norm_placement_experiment("copy", n_layers=1, steps=4, batch_size=4,
                                       record_every=2, test_pairs=2)
    assert list(runs) == ["post-LN", "pre-LN"]
    for run in runs.values():
        assert len(run.history.loss) == 4 and not run.diverged
        assert [step for step, _ in run.snapshots] == [2, 4]
        assert all(isinstance(text, str) for _, text in run.snapshots)
        assert 0.0 <= run.exact_match <= 1.0
    assert runs["post-LN"].history.loss != runs["pre-LN"].history.loss


def test_norm_placement_experiment_rejects_bad_input():
    with pytest.raises(ValueError, match="corpus"):
        N.norm_placement_experiment("klingon")
    with pytest.raises(ValueError, match="record_every"):
        N.norm_placement_experiment("copy", record_every=0)


def test_gradient_norms_at_init_post_ln_grows_towards_the_output():
    g = N.gradient_norms_at_init("reverse", n_layers=6)
    for stack in (g.encoder, g.decoder):
        assert set(stack) == {"post-LN", "pre-LN"}
        assert all(a.shape == (6,) and (a > 0).all() for a in stack.values())
    post, pre = g.decoder["post-LN"], g.decoder["pre-LN"]
    assert post[-1] > 3 * post[0]  # Xiong et al.: post-LN's top layers get the big gradients
    assert pre.max() < 3 * pre.min()  # pre-LN: level across layers
    with pytest.raises(ValueError, match="n_pairs"):
        N.gradient_norms_at_init(n_pairs=0)
