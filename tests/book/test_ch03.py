"""Chapter 03: the encoder head of the coreference model that resolves "it", the post's six steps, the matrix
form against PyTorch, and the saturation that the 1/sqrt(d_k) scaling prevents."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.book import ch03, kit

TIRED = "the animal didn't cross the street because it was too tired"
WIDE = TIRED.replace("tired", "wide")


@pytest.fixture(scope="module")
def coreference():
    return il.pretrained("coreference")


def test_the_it_head_of_the_shipped_model(coreference):
    """Chapter 03's text and caption: encoder layer 1, head 1; 'the animal' 1.00 when the
    sentence ends 'too tired', 'the street' 0.81 when it ends 'too wide'."""
    it = ch03.it_head(*coreference)
    assert (it.layer, it.head) == (1, 1)
    assert (f"{it.on_animal:.2f}", f"{it.on_street:.2f}") == ("1.00", "0.81")
    tokens, weights = ch03.it_attention(*coreference, TIRED, it.layer)
    assert ch03.referent_phrase(tokens) == [0, 1] and tokens[int(weights[it.head].argmax())] == "animal"
    tokens, weights = ch03.it_attention(*coreference, WIDE, it.layer)
    assert ch03.referent_phrase(tokens) == [4, 5] and tokens[int(weights[it.head].argmax())] == "street"


def test_it_weights_are_the_encoders_own(coreference, recorded):
    model, src_vocab, tgt_vocab = coreference
    tokens, weights = ch03.it_attention(model, src_vocab, tgt_vocab, TIRED, 1)
    with torch.no_grad():
        _, attention = recorded(model, model.encode, torch.tensor([src_vocab.encode(TIRED)]))
    np.testing.assert_allclose(weights, attention.encoder[1][0, :, tokens.index("it")].numpy(),
                               atol=1e-6)
    np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-6)


def test_the_posts_numbers_in_the_table(width):
    ex = il.reference.thinking_machines_example()
    fig = ch03.draw_steps(ex, 6, width=width)
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"q1 · k1 = 112", "q1 · k2 = 96", "14", "12", "0.88", "0.12"} <= texts
    fig = ch03.draw_steps(ex, 2)
    assert "14" not in {t.get_text() for t in fig.axes[0].texts}
    plt.close("all")


def test_formula_figure_holds_z(width):
    ex = il.reference.thinking_machines_example()
    Q, K, V = ex.X @ ex.W_Q, ex.X @ ex.W_K, ex.X @ ex.W_V
    Z = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(m)[None] for m in (Q, K, V)), scale=1 / 8)[0].numpy()
    texts = {t.get_text() for t in ch03.draw_formula(ex, width=width).axes[0].texts}
    plt.close("all")
    assert {f"{z:.2f}" for z in Z.ravel()} <= texts


def test_saturation_closed_forms():
    curve = ch03.saturation((1, 16, 256), n_samples=4000)
    np.testing.assert_allclose(curve.variance, curve.d_k, rtol=0.1)  # var(q·k) = d_k
    assert np.all(np.diff(curve.largest) > 0) and np.all(np.diff(curve.gradient) < 0)
    np.testing.assert_allclose(curve.largest_scaled, curve.largest_scaled[0], atol=0.08)
    p = np.full((1, 4), 0.25)  # a uniform softmax: Jacobian diag(p) - p pᵀ
    np.testing.assert_allclose(ch03._jacobian_norm(p), np.linalg.norm(np.diag(p[0]) - 1 / 16))


def test_figures_are_legible_in_both_columns(legible, width):
    ex = il.reference.thinking_machines_example()
    curve = ch03.saturation((1, 64), n_samples=10)
    for fig in (ch03.draw_steps(ex, 3, width=width), ch03.draw_projections(ex, width=width),
                ch03.draw_formula(ex, width=width), ch03.draw_saturation(64, curve, width=width)):
        legible(fig, width)


def test_projections_draw_each_weight_matrix_with_its_product(width):
    """Figure 17: X times W^Q, W^K and W^V, one product per line, each product's numbers."""
    ex = il.reference.thinking_machines_example()
    fig = ch03.draw_projections(ex, width=width)
    texts = [t for t in fig.axes[0].texts]
    y = {t.get_text(): t.get_position()[1] for t in texts}
    assert {"$W^Q$", "$W^K$", "$W^V$"} <= set(y)
    assert y["$W^Q$"] < y["$W^K$"] < y["$W^V$"] and y["Q"] < y["K"] < y["V"]
    assert [t.get_text() for t in texts].count("X") == 3
    numbers = [t.get_text() for t in texts]
    for product in (ex.X @ ex.W_K, ex.X @ ex.W_V):
        assert all(kit.format_value(v) in numbers for v in product.ravel())
    plt.close(fig)


def test_saturation_legend_hides_no_curve(width):
    """Figure 19: the legend sits under the averages' plot, not over its curves."""
    fig = ch03.draw_saturation(64, ch03.saturation((1, 64), n_samples=10), width=width)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    lines = fig.axes[1]
    legend = lines.get_legend().get_window_extent(renderer)
    assert legend.y1 <= lines.get_window_extent(renderer).y0
    plt.close(fig)


def test_it_figure_writes_the_weights_its_caption_reads(coreference, legible, width):
    """Side by side on a desktop, stacked within a phone's column; each panel writes head 1's
    weights, its lines as wide as them, and the referent's phrase with its weight."""
    it = ch03.it_head(*coreference)
    rows = [ch03.it_attention(*coreference, s, it.layer) for s in (TIRED, WIDE)]
    fig = ch03.draw_it(rows, it.layer, it.head, width=width)
    panels = fig.axes
    assert len(panels) == 2
    for ax, (words, weights), phrase in zip(panels, rows, ("'the animal' 1.00", "'the street' 0.81")):
        texts = [t.get_text() for t in ax.texts]
        assert "it" in texts and set(words) <= set(texts)
        assert [f"{w:.2f}" for w in weights[it.head]] == [t for t in texts if t[:2] in ("0.", "1.")]
        assert [line.get_linewidth() for line in ax.lines] == pytest.approx(0.4 + 5 * weights[it.head])
        assert any(t.endswith(f"encoder layer 1, head 1, {phrase}") for t in texts), texts
    left, right = (ax.get_position() for ax in panels)
    assert (right.y1 <= left.y0 + 1e-9) if kit.narrow(width) else (right.x0 >= left.x1 - 1e-9)
    legible(fig, width)
