"""Compute functions of chapters 01-02 against the package's modules, the reference and closed forms."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

import illustrated as il
from illustrated import reference
from illustrated.explain import tensors
from illustrated.modules import EncoderLayer, Transformer

SENTENCES = ["je suis étudiant", "tu es grand", "il est petit"]


@pytest.fixture(scope="module")
def small():
    """An untrained tiny model (seeded) with a vocabulary of a few words."""
    vocab = il.data.Vocab.build(SENTENCES)
    cfg = replace(il.TINY, src_vocab_size=len(vocab), tgt_vocab_size=len(vocab),
                  pad_id=vocab.pad_id, tgt_pad_id=vocab.pad_id)
    il.set_seed(0)
    model = Transformer(cfg).eval()
    return model, vocab


# --------------------------------------------------------------------------- parameter counts

def attention_count(d: int) -> int:
    return 4 * (d * d + d)  # W_Q, W_K, W_V, W_O and their biases


def ffn_count(d: int, d_ff: int) -> int:
    return d * d_ff + d_ff + d_ff * d + d  # paper Eq. 2


def test_parameter_counts_cover_the_whole_model_in_closed_form(small):
    model, vocab = small
    cfg = model.cfg
    rows = tensors.parameter_counts(model)
    assert sum(r.total for r in rows) == sum(p.numel() for p in model.parameters())
    table = {(r.component, r.part): r for r in rows}
    d, d_ff, n = cfg.d_model, cfg.d_ff, cfg.n_layers
    assert table["source embeddings", ""].per_copy == len(vocab) * d
    assert table["positional encoding", "(fixed sinusoids)"].per_copy == 0
    assert table["encoder", "self-attention"].per_copy == attention_count(d)
    assert table["encoder", "self-attention"].copies == n
    assert table["encoder", "feed-forward"].per_copy == ffn_count(d, d_ff)
    assert table["encoder", "layer norms"].per_copy == 2 * 2 * d
    assert table["decoder", "encoder-decoder attention"].per_copy == attention_count(d)
    assert table["decoder", "layer norms"].per_copy == 3 * 2 * d
    assert table["final linear", ""].per_copy == d * len(vocab) + len(vocab)


def test_paper_base_counts_without_allocating():
    cfg = replace(il.PAPER_BASE, src_vocab_size=37000, tgt_vocab_size=37000)
    rows = tensors.config_parameter_counts(cfg)
    table = {(r.component, r.part): r for r in rows}
    encoder = sum(r.total for r in rows if r.component == "encoder")
    decoder = sum(r.total for r in rows if r.component == "decoder")
    assert table["encoder", "self-attention"].per_copy == 1_050_624
    assert table["encoder", "feed-forward"].per_copy == 2_099_712
    assert encoder == 6 * (1_050_624 + 2_099_712 + 2048)
    assert decoder == 6 * (2 * 1_050_624 + 2_099_712 + 3072)
    # with one shared embedding matrix (paper §3.4) the total lands near the paper's 65M
    shared = encoder + decoder + 37000 * 512
    assert 60e6 < shared < 66e6


def test_pre_ln_adds_its_final_norms(small):
    model, _ = small
    cfg = replace(model.cfg, norm_first=True)
    rows = tensors.config_parameter_counts(cfg)
    assert rows[-1].component == "final layer norms"
    assert rows[-1].total == 2 * 2 * cfg.d_model


def test_format_parameter_table_ends_with_the_total(small):
    model, _ = small
    rows = tensors.parameter_counts(model)
    text = tensors.format_parameter_table(rows)
    total = sum(p.numel() for p in model.parameters())
    assert text.splitlines()[-1].split() == ["all", f"{total:,}"]
    assert len(text.splitlines()) == len(rows) + 4  # header, two rules, total
    with pytest.raises(ValueError, match="rows"):
        tensors.format_parameter_table([])


def test_bad_model_or_config_is_rejected():
    with pytest.raises(ValueError, match="model"):
        tensors.parameter_counts(object())
    with pytest.raises(ValueError, match="cfg"):
        tensors.config_parameter_counts({"d_model": 4})


# --------------------------------------------------------------------------- embeddings

def test_embed_sentence_matches_the_reference_and_the_modules(small):
    model, vocab = small
    e = tensors.embed_sentence(model, vocab, "je suis étudiant")
    assert e.words == ["je", "suis", "étudiant"]
    np.testing.assert_array_equal(e.ids, vocab.encode("je suis étudiant"))
    table = model.src_embed.lut.weight.detach().double().numpy()
    np.testing.assert_allclose(e.lookup, table[e.ids])
    np.testing.assert_allclose(e.embeddings, reference.embed(e.ids, table), rtol=1e-6)
    pe = reference.positional_encoding(3, model.cfg.d_model, model.cfg.pe_layout)
    np.testing.assert_allclose(e.positional, pe, atol=1e-5)
    np.testing.assert_allclose(e.x, e.embeddings + e.positional, rtol=1e-6, atol=1e-6)
    assert e.x.shape == (3, model.cfg.d_model)


def test_embed_sentence_checks_the_vocabulary(small):
    model, _ = small
    with pytest.raises(ValueError, match="src_vocab"):
        tensors.embed_sentence(model, il.data.Vocab.build(["a b"]), "a")


# --------------------------------------------------------------------------- one encoder layer

def test_params_round_trip_between_torch_and_reference():
    params = reference.init_encoder_params(8, 16, seed=4)
    params["b_Q"] = np.arange(8.0) / 10  # biases that are not zero
    layer = tensors.encoder_layer_from_params(params, n_heads=2)
    back = tensors.encoder_params_from_layer(layer)
    assert set(back) == set(reference.ENCODER_PARAM_KEYS)
    for key in reference.ENCODER_PARAM_KEYS:
        np.testing.assert_array_equal(back[key], params[key], err_msg=key)


def test_reference_layer_equals_the_torch_encoder_layer():
    words, x, params = tensors.thinking_machines_encoder(d_ff=8, seed=0)
    assert words == ("Thinking", "Machines")
    np.testing.assert_array_equal(x, reference.thinking_machines_example().X)
    t = tensors.follow_encoder_layer(x, params, 1)
    layer = tensors.encoder_layer_from_params(params, n_heads=1)
    assert isinstance(layer, EncoderLayer)
    with torch.no_grad():
        out = layer(torch.from_numpy(x)[None])[0].numpy()  # (seq, d_model)
    np.testing.assert_allclose(t.r, out, rtol=1e-12, atol=1e-12)
    # the steps in between: z = LN(x + attention), r = LN(z + FFN(z))
    np.testing.assert_allclose(t.z, reference.add_and_norm(x, t.attention, params["gamma_1"],
                                                           params["beta_1"]))
    np.testing.assert_allclose(t.ffn, reference.feed_forward(t.z, params["W_1"], params["b_1"],
                                                             params["W_2"], params["b_2"]))
    assert t.weights.shape == (1, 2, 2)
    np.testing.assert_allclose(t.weights.sum(-1), 1.0)


def test_encoder_layer_from_params_rejects_bad_input():
    params = reference.init_encoder_params(4, 8)
    with pytest.raises(ValueError, match="n_heads"):
        tensors.encoder_layer_from_params(params, n_heads=3)
    with pytest.raises(ValueError, match="missing"):
        tensors.encoder_layer_from_params({k: v for k, v in params.items() if k != "W_O"}, 1)
    bad = dict(params, W_Q=np.ones((4, 3)))
    with pytest.raises(ValueError, match="W_Q"):
        tensors.encoder_layer_from_params(bad, 1)
    with pytest.raises(ValueError, match="layer"):
        tensors.encoder_params_from_layer(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("layer", [0, 1])
def test_trained_encoder_layer_follows_the_model(small, layer):
    model, vocab = small
    embedded, t = tensors.trained_encoder_layer(model, vocab, "je suis étudiant", layer=layer)
    src = torch.tensor([vocab.encode("je suis étudiant")])
    with torch.no_grad():
        x = model.positional(model.src_embed(src))
        for below in model.encoder.layers[:layer]:
            x = below(x)
        np.testing.assert_allclose(t.x, x[0].double().numpy(), rtol=1e-4, atol=1e-5)
        out = model.encoder.layers[layer](x)[0].double().numpy()
    np.testing.assert_allclose(t.r, out, rtol=1e-4, atol=1e-4)
    if layer == model.cfg.n_layers - 1:
        with torch.no_grad():
            memory = model.encode(src)[0].double().numpy()
        np.testing.assert_allclose(t.r, memory, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="layer"):
        tensors.trained_encoder_layer(model, vocab, "je", layer=model.cfg.n_layers)


# --------------------------------------------------------------------------- position-wise check

@pytest.mark.parametrize("position", [0, 2, 4])
def test_only_self_attention_mixes_positions(position):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 8))
    params = reference.init_encoder_params(8, 16, seed=1)
    p = tensors.perturbation_effect(x, params, 2, position, delta=0.5)
    others = [i for i in range(5) if i != position]
    assert np.linalg.norm(p.direction) == pytest.approx(0.5)
    assert np.all(p.row_change["feed-forward"][others] == 0.0)
    assert p.row_change["feed-forward"][position] > 1e-6  # a real change, not rounding
    assert np.all(p.row_change["self-attention"] > 1e-6)
    assert np.all(p.row_change["encoder layer"] > 1e-6)
    for name, change in p.changes.items():
        assert change.shape == (5, 8)
        np.testing.assert_allclose(p.row_change[name], np.linalg.norm(change, axis=-1))


def test_perturbation_rejects_bad_position_and_delta():
    x = np.zeros((3, 4))
    params = reference.init_encoder_params(4, 8)
    with pytest.raises(ValueError, match="position"):
        tensors.perturbation_effect(x, params, 1, 3)
    with pytest.raises(ValueError, match="delta"):
        tensors.perturbation_effect(x, params, 1, 0, delta=float("nan"))
    with pytest.raises(ValueError, match="x"):
        tensors.perturbation_effect(np.zeros(4), params, 1, 0)
