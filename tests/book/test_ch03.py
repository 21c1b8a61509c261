"""Chapter 03: where the coreference model resolves the pronoun, the post's six steps, the matrix
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


def test_the_pronoun_step_reads_the_adjective(coreference):
    tokens, pronoun, weights = ch03.pronoun_attention(*coreference, TIRED)
    assert pronoun == "il" and weights.shape == (coreference[0].cfg.n_heads, len(tokens))
    np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-6)
    assert tokens[weights[1].argmax()] == "tired" and weights[1].max() == pytest.approx(0.69, abs=0.01)
    tokens, pronoun, weights = ch03.pronoun_attention(*coreference, WIDE)
    assert pronoun == "elle" and tokens[weights[0].argmax()] == "wide" and weights[0].max() > 0.99


def test_pronoun_weights_are_the_decoders_own(coreference):
    model, src_vocab, tgt_vocab = coreference
    tokens, _, weights = ch03.pronoun_attention(model, src_vocab, tgt_vocab, TIRED)
    target = il.translate(model, [TIRED], src_vocab, tgt_vocab)[0]
    src = torch.tensor([src_vocab.encode(TIRED)])
    tgt = torch.tensor([[tgt_vocab.bos_id, *tgt_vocab.encode(target)]])
    with torch.no_grad(), il.decoding.EvalMode(model):
        _, attention = model(src, tgt, return_attention=True)
    step = [i for i, w in enumerate(il.data.tokenize(target)) if w == "il"][0]
    np.testing.assert_allclose(weights, attention.decoder_cross[0][0, :, step].numpy(), atol=1e-6)


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
    phone = ch03.draw_projections(ex, width=kit.PHONE_WIDTH_IN)
    names = {t.get_text(): t.get_position()[1] for t in phone.axes[0].texts}
    assert names["K"] > names["Q"]  # K and V on a line of their own in a phone's column


def test_pronoun_figure_writes_the_weights_its_caption_reads(coreference, legible, width):
    """Chapter 03's caption: writing elle, head 0 gives 'wide' 1.00; writing il, 'the' 0.39,
    'because' 0.34, the second 'the' 0.20 and 'tired' 0.00. Side by side on a desktop, stacked
    within a phone's column."""
    rows = [ch03.pronoun_attention(*coreference, s) for s in (TIRED, WIDE)]
    (tokens, _, tired), (_, _, wide) = rows
    assert [f"{w:.2f}" for w in tired[0, [0, 6, 4, -1]]] == ["0.39", "0.34", "0.20", "0.00"]
    assert f"{wide[0, -1]:.2f}" == "1.00"
    fig = ch03.draw_pronoun(rows, width=width)
    panels = fig.axes
    assert len(panels) == 2
    for ax, (words, pronoun, weights) in zip(panels, rows):
        texts = [t.get_text() for t in ax.texts]
        assert pronoun in texts and set(words) <= set(texts)
        assert [f"{w:.2f}" for w in weights[0]] == [t for t in texts if t[:2] in ("0.", "1.")]
        assert [line.get_linewidth() for line in ax.lines] == pytest.approx(0.4 + 5 * weights[0])
    left, right = (ax.get_position() for ax in panels)
    assert (right.y1 <= left.y0 + 1e-9) if kit.narrow(width) else (right.x0 >= left.x1 - 1e-9)
    fig.draw(fig.canvas.get_renderer())
    assert fig.get_tightbbox().width <= width + 0.05
    legible(fig, width)


def test_steps_so_far_cut_the_table_after_the_step(width):
    ex = il.reference.thinking_machines_example()
    for step, last in ((1, "Values"), (2, "Score"), (4, "Softmax")):
        fig = ch03.draw_steps_so_far(ex, step, width=width)
        ax = fig.axes[0]
        bottom, top = ax.get_ylim()
        shown = [label for y, (label, _) in enumerate(ch03.STEPS) if y < bottom]
        assert shown[-1] == last
        assert fig.get_figheight() < ch03.draw_steps(ex, step, width=width).get_figheight()
        shown = {t.get_text() for t in ax.texts if t.get_visible()}
        assert last in shown and "Sum" not in shown  # not even in a tight bounding box
        plt.close("all")
