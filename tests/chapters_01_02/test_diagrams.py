"""The block diagrams of chapter 01: what they draw (patches, arrows, texts), never pixels."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

from illustrated.plots import diagrams  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def by_gid(fig, prefix: str = ""):
    """Artists of the figure's only axes whose gid starts with ``prefix``, by gid."""
    (ax,) = fig.axes
    artists = [*ax.patches, *ax.texts, *ax.lines]
    return {a.get_gid(): a for a in artists if a.get_gid() and a.get_gid().startswith(prefix)}


def text_of(fig, gid: str) -> str:
    return by_gid(fig)[gid].get_text()


def test_black_box_writes_the_real_input_and_output():
    fig = diagrams.black_box("je suis étudiant", "i am a student")
    assert text_of(fig, "source") == "je suis étudiant"
    assert text_of(fig, "target") == "i am a student"
    assert text_of(fig, "transformer-label") == "THE TRANSFORMER"
    src = by_gid(fig)["source"].get_position()[0]
    box = by_gid(fig)["transformer"]
    tgt = by_gid(fig)["target"].get_position()[0]
    assert src <= box.get_x() < box.get_x() + box.get_width() <= tgt


def test_encoders_decoders_are_connected_and_labelled_from_the_config():
    fig = diagrams.encoders_decoders("a b", "c d", n_layers=6)
    parts = by_gid(fig)
    enc, dec, arrow = parts["encoders"], parts["decoders"], parts["memory-arrow"]
    assert isinstance(arrow, FancyArrowPatch)
    assert enc.get_x() + enc.get_width() < dec.get_x()
    assert text_of(fig, "encoders-subtitle") == "a stack of 6"
    assert text_of(fig, "decoders-subtitle") == "a stack of 6"
    assert "encoders-subtitle" not in by_gid(diagrams.encoders_decoders("a", "b"))


@pytest.mark.parametrize("n_layers", [1, 2, 6, 12])
def test_stack_has_n_layers_of_each_and_the_last_encoder_feeds_every_decoder(n_layers):
    fig = diagrams.encoder_decoder_stack(n_layers, source="je suis étudiant",
                                         target="i am a student")
    encoders = [by_gid(fig)[f"encoder-{i}"] for i in range(n_layers)]
    decoders = [by_gid(fig)[f"decoder-{i}"] for i in range(n_layers)]
    assert len([g for g in by_gid(fig, "encoder-") if g[len("encoder-"):].isdigit()]) == n_layers
    assert len([g for g in by_gid(fig, "decoder-") if g[len("decoder-"):].isdigit()]) == n_layers
    assert len(by_gid(fig, "encoder-arrow-")) == n_layers - 1
    assert len(by_gid(fig, "decoder-arrow-")) == n_layers - 1
    assert [text_of(fig, f"encoder-{i}-label") for i in range(n_layers)] == \
        [f"ENCODER #{i + 1}" for i in range(n_layers)]
    # stacked bottom to top
    ys = [e.get_y() for e in encoders]
    assert ys == sorted(ys)
    # one memory arrow into the left edge of every decoder, all from one bus
    memory = by_gid(fig, "memory-arrow-")
    assert len(memory) == n_layers
    bus = by_gid(fig)["memory-bus"]
    xs, ys_bus = bus.get_data()
    top = encoders[-1]
    assert xs[0] == pytest.approx(top.get_x() + top.get_width())
    assert ys_bus[0] == pytest.approx(top.get_y() + top.get_height() / 2)
    for j, dec in enumerate(decoders):
        (x0, y0), (x1, y1) = memory[f"memory-arrow-{j}"]._posA_posB
        assert x0 == pytest.approx(xs[1])
        assert x1 == pytest.approx(dec.get_x())
        assert y0 == y1 == pytest.approx(dec.get_y() + dec.get_height() / 2)
        assert min(ys_bus) - 1e-9 <= y0 <= max(ys_bus) + 1e-9
    assert text_of(fig, "source") == "je suis étudiant"


def test_stack_redraws_into_the_given_figure():
    fig = diagrams.encoder_decoder_stack(6)
    again = diagrams.encoder_decoder_stack(2, fig=fig)
    assert again is fig
    assert len(fig.axes) == 1
    assert len(by_gid(fig, "memory-arrow-")) == 2


@pytest.mark.parametrize("bad", [0, -1, 13, 2.0, True, None])
def test_stack_rejects_bad_n_layers(bad):
    with pytest.raises(ValueError, match="n_layers"):
        diagrams.encoder_decoder_stack(bad)


def test_bad_text_is_rejected():
    with pytest.raises(ValueError, match="source"):
        diagrams.black_box(3, "x")
    with pytest.raises(ValueError, match="target"):
        diagrams.encoders_decoders("x", None)


def test_encoder_is_self_attention_then_feed_forward():
    fig = diagrams.encoder_diagram(d_model=512, n_heads=8, d_ff=2048)
    parts = by_gid(fig)
    attn, ffn, frame = parts["self-attention"], parts["feed-forward"], parts["encoder"]
    assert isinstance(frame, FancyBboxPatch)
    assert attn.get_y() + attn.get_height() <= ffn.get_y()  # data flows upwards
    assert text_of(fig, "feed-forward-subtitle") == "512 → 2048 → 512"
    assert text_of(fig, "self-attention-subtitle") == "8 heads, d_model = 512"
    assert len(by_gid(fig, "inner-arrow-")) == 1
    assert "feed-forward-subtitle" not in by_gid(diagrams.encoder_diagram())


def test_decoder_has_three_sublayers_and_takes_the_encoder_output():
    fig = diagrams.decoder_diagram(d_model=32, n_heads=4, d_ff=64, title="decoder")
    parts = by_gid(fig)
    order = [parts[g] for g in ("self-attention", "encoder-decoder-attention", "feed-forward")]
    assert [p.get_y() for p in order] == sorted(p.get_y() for p in order)
    assert text_of(fig, "encoder-decoder-attention-label") == "Encoder-Decoder Attention"
    (x0, y0), (x1, y1) = parts["memory-arrow"]._posA_posB
    cross = parts["encoder-decoder-attention"]
    assert x1 == pytest.approx(cross.get_x() + cross.get_width())
    assert cross.get_y() < y1 < cross.get_y() + cross.get_height()
    assert len(by_gid(fig, "inner-arrow-")) == 2
    assert fig.axes[0].get_title() == "decoder"


def test_sizes_must_be_positive_ints():
    with pytest.raises(ValueError, match="d_ff"):
        diagrams.encoder_diagram(d_ff=0)
    with pytest.raises(ValueError, match="n_heads"):
        diagrams.decoder_diagram(n_heads="8")
