"""Chapter 01: the shipped post model as a black box, the diagrams drawn from its configuration,
and the parameter counts in closed form."""
from dataclasses import replace

import pytest
import torch
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

import illustrated as il
from illustrated.book import ch01, kit

SOURCE, TARGET = "je suis étudiant", "i am a student"


@pytest.fixture(scope="module")
def post():
    return il.pretrained("post")


def _texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def _by_gid(fig, prefix):
    return {a.get_gid(): a for a in [*fig.axes[0].patches, *fig.axes[0].lines]
            if a.get_gid() and a.get_gid().startswith(prefix)}


def attention_count(d: int) -> int:
    return 4 * (d * d + d)  # W_Q, W_K, W_V, W_O and their biases


def ffn_count(d: int, d_ff: int) -> int:
    return d * d_ff + d_ff + d_ff * d + d  # paper Eq. 2


def test_the_post_model_translates_the_posts_sentences(post):
    model, src_vocab, tgt_vocab = post
    assert il.translate(model, [SOURCE, "merci"], src_vocab, tgt_vocab) == [TARGET, "thanks"]
    with torch.no_grad():
        memory = model.encode(torch.tensor([src_vocab.encode(SOURCE)]))
    assert tuple(memory.shape) == (1, 3, model.cfg.d_model) == (1, 3, 32)


def test_the_layers_of_a_stack_share_shapes_not_weights(post):
    model = post[0]
    assert len(model.encoder.layers) == len(model.decoder.layers) == model.cfg.n_layers == 2
    first, second = model.encoder.layers
    pairs = list(zip(first.parameters(), second.parameters()))
    assert all(p.shape == q.shape for p, q in pairs)
    assert not any(torch.equal(p, q) for p, q in pairs)


def test_black_box_writes_the_real_input_and_output(legible, width):
    fig = ch01.draw_black_box(SOURCE, TARGET, width=width)
    texts = {t.get_text(): t for t in fig.axes[0].texts}
    assert {SOURCE, TARGET, "THE\nTRANSFORMER", "input", "output"} <= set(texts)
    box = fig.axes[0].patches[0]
    (x0, y0), (x1, y1) = texts[SOURCE].get_position(), texts[TARGET].get_position()
    if kit.narrow(width):  # in a phone's column the sentence goes in on top, comes out below
        assert y0 > box.get_y() + box.get_height() and y1 < box.get_y()
    else:
        assert x0 < box.get_x() and x1 > box.get_x() + box.get_width()
    legible(fig, width)


def test_components_are_connected_and_labelled_from_the_config(legible, width):
    fig = ch01.draw_components(SOURCE, TARGET, n_layers=2, width=width)
    texts = _texts(fig)
    assert {"ENCODERS", "DECODERS", SOURCE, TARGET} <= set(texts)
    assert texts.count("a stack of 2") == 2
    boxes = [p for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)]
    encoders, decoders = boxes[1], boxes[2]
    arrow = next(p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch))
    (x0, _), (x1, _) = arrow._posA_posB
    assert x0 == pytest.approx(encoders.get_x() + encoders.get_width())
    assert x1 == pytest.approx(decoders.get_x())
    legible(fig, width)


@pytest.mark.parametrize("n_layers", range(1, 7))
def test_stack_has_n_layers_of_each_and_the_top_encoder_feeds_every_decoder(n_layers, legible,
                                                                             width):
    fig = ch01.draw_stack(n_layers, SOURCE, TARGET, width=width)
    encoders = [_by_gid(fig, "encoder-")[f"encoder-{i}"] for i in range(n_layers)]
    decoders = [_by_gid(fig, "decoder-")[f"decoder-{i}"] for i in range(n_layers)]
    texts = _texts(fig)
    assert [t for t in texts if t.startswith("ENCODER")] == [f"ENCODER {i}" for i in
                                                            range(n_layers)]
    assert [e.get_y() for e in encoders] == sorted(e.get_y() for e in encoders)  # 0 at the bottom
    bus = _by_gid(fig, "memory-bus")["memory-bus"]
    xs, ys = bus.get_data()
    top = encoders[-1]
    assert xs[0] == pytest.approx(top.get_x() + top.get_width())
    assert ys[0] == pytest.approx(top.get_y() + top.get_height() / 2)
    memory = _by_gid(fig, "memory-")
    assert len([g for g in memory if g != "memory-bus"]) == n_layers
    for j, dec in enumerate(decoders):
        (x0, y0), (x1, y1) = memory[f"memory-{j}"]._posA_posB
        assert x0 == pytest.approx(xs[1]) and x1 == pytest.approx(dec.get_x())
        assert y0 == y1 == pytest.approx(dec.get_y() + dec.get_height() / 2)
        assert min(ys) - 1e-9 <= y0 <= max(ys) + 1e-9
    assert SOURCE in texts and TARGET in texts
    legible(fig, width)


def test_encoder_layer_is_self_attention_then_feed_forward(post, legible, width):
    fig = ch01.draw_layer("encoder", post[0].cfg, width=width)
    parts = _by_gid(fig, "")
    attn, ffn = parts["Self-Attention"], parts["Feed Forward"]
    assert attn.get_y() + attn.get_height() < ffn.get_y()  # data flows upwards
    texts = _texts(fig)
    assert "32 → 64 → 32, each position" in texts and "4 heads, d_model = 32" in texts
    assert "memory" not in parts
    legible(fig, width)


def test_decoder_layer_has_three_sublayers_and_takes_the_encoder_output(post, legible, width):
    fig = ch01.draw_layer("decoder", post[0].cfg, width=width)
    parts = _by_gid(fig, "")
    order = [parts[name] for name in ch01.SUBLAYERS["decoder"]]
    assert [p.get_y() for p in order] == sorted(p.get_y() for p in order)
    (_, y0), (x1, y1) = parts["memory"]._posA_posB
    cross = parts["Encoder-Decoder Attention"]
    assert x1 == pytest.approx(cross.get_x() + cross.get_width())
    assert cross.get_y() < y0 == y1 < cross.get_y() + cross.get_height()
    labels = {t.get_text().replace("\n", " ") for t in fig.axes[0].texts}
    assert "4 heads: keys, values from the encoder" in labels  # wrapped on a phone, not cut
    legible(fig, width)


def test_parameter_counts_of_the_post_model_in_closed_form(post):
    model, src_vocab, tgt_vocab = post
    rows = ch01.parameter_counts(model)
    assert sum(r.total for r in rows) == sum(p.numel() for p in model.parameters()) == 43_593
    table = {(r.component, r.part): r for r in rows}
    d, d_ff, n = model.cfg.d_model, model.cfg.d_ff, model.cfg.n_layers
    assert table["source embeddings", ""].per_copy == len(src_vocab) * d
    assert table["positional encoding", "(fixed sinusoids)"].per_copy == 0
    assert table["encoder", "self-attention"].per_copy == attention_count(d) == 4224
    assert table["encoder", "self-attention"].copies == n
    assert table["encoder", "feed-forward"].per_copy == ffn_count(d, d_ff) == 4192
    assert table["encoder", "layer norms"].per_copy == 2 * 2 * d
    assert table["decoder", "encoder-decoder attention"].per_copy == attention_count(d)
    assert table["decoder", "layer norms"].per_copy == 3 * 2 * d
    assert table["final linear", ""].per_copy == d * len(tgt_vocab) + len(tgt_vocab)


def test_paper_base_counts_without_allocating():
    cfg = replace(il.PAPER_BASE, src_vocab_size=37000, tgt_vocab_size=37000)
    rows = ch01.config_parameter_counts(cfg)
    table = {(r.component, r.part): r for r in rows}
    encoder = sum(r.total for r in rows if r.component == "encoder")
    decoder = sum(r.total for r in rows if r.component == "decoder")
    assert table["encoder", "self-attention"].per_copy == 1_050_624
    assert table["encoder", "feed-forward"].per_copy == 2_099_712
    assert encoder == 6 * (1_050_624 + 2_099_712 + 2048)
    assert decoder == 6 * (2 * 1_050_624 + 2_099_712 + 3072)
    assert sum(r.total for r in rows) == 101_007_496
    shared = encoder + decoder + 37000 * 512  # one embedding matrix (paper §3.4): about 65M
    assert shared == pytest.approx(63.1e6, abs=0.05e6)


def test_pre_ln_adds_its_final_norms(post):
    rows = ch01.config_parameter_counts(replace(post[0].cfg, norm_first=True))
    assert rows[-1].component == "final layer norms"
    assert rows[-1].total == 2 * 2 * post[0].cfg.d_model


def test_parameter_table_ends_with_the_total(post):
    rows = ch01.parameter_counts(post[0])
    lines = ch01.parameter_table(rows).splitlines()
    assert lines[-1].split() == ["all", "43,593"]
    assert len(lines) == 2 * len(rows) + 5  # two lines a part; "part", header, two rules, total
    assert lines[5:7] == ["positional encoding (fixed sinusoids)", "         0 ×      1 =      0"]
    assert len(lines[1]) == len(lines[2]) and set(lines[2]) == {"-"}  # the rule under the header
    numbers = [line for line in lines if "×" in line or line.startswith("all")]
    assert max(map(len, numbers)) <= 36  # a phone's column holds them (chapter 01's dropdown)


def test_parameter_table_of_the_paper_fits_a_phone():
    rows = ch01.config_parameter_counts(replace(il.PAPER_BASE, src_vocab_size=37000,
                                                tgt_vocab_size=37000))
    lines = ch01.parameter_table(rows).splitlines()
    assert lines[-1].split() == ["all", f"{sum(r.total for r in rows):,}"]
    assert max(len(line) for line in lines if "×" in line or line.startswith("all")) <= 36
