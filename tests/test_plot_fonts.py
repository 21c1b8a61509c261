"""Every figure of plots/ is drawn for the page (issue 13): no text below style.MIN_FONT_PT, and
no figure wider than the width at which that text still reads at MIN_TEXT_PX once the page
shrinks it to its content column (style.MAX_WIDTH_IN, the same rule as the browser check
tests/browser/test_pages.py::test_figure_text_is_legible_at_the_content_width).

Each public plot function is drawn with data of the shapes the chapters give it (the book's
models: d_model 64, 4 heads, 2 or 3 layers, sentences of 3 to 11 words; the post's toy sizes:
d_model 4 or 8, 2 heads). A new public plot function fails test_every_plot_function_is_checked
until it has a case here.
"""
from __future__ import annotations

import importlib
import inspect

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from illustrated.plots import style
from illustrated.plots.style import MAX_WIDTH_IN, MIN_FONT_PT, TIGHT_PAD_IN

matplotlib.use("Agg")

MODULES = ("attention", "beam", "decoding", "diagrams", "distributions", "matrices", "playground",
           "positional", "residual", "training", "vectors")
RNG = np.random.default_rng(0)
SOURCE = ["je", "suis", "étudiant"]
LONG = "the animal didn't cross the street because it was too tired".split()
VOCAB = ["<pad>", "<bos>", "<eos>", "<unk>", "a", "am", "i", "student", "thanks", "merci"]


def _rand(*shape):
    return RNG.standard_normal(shape)


def _probs(*shape):
    x = np.exp(_rand(*shape))
    return x / x.sum(axis=-1, keepdims=True)


def _beam():
    """A beam of 2 over 5 steps, as chapter 09 draws it (explain.beam.tree_arrays's fields)."""
    parents, steps, labels, statuses = [-1], [0], ["<bos>"], ["start"]
    live = [0]
    words = ["i", "am", "a", "student", "<eos>"]
    for step in range(1, 6):
        new = []
        for p in live:
            for k, word in enumerate((words[step - 1], "the")):
                parents.append(p)
                steps.append(step)
                labels.append(word)
                statuses.append("kept" if k == 0 else "dropped")
                if k == 0:
                    new.append(len(parents) - 1)
        live = new[:2]
    statuses[-2] = "finished"
    n = len(parents)
    log_probs = -np.sort(RNG.uniform(0.1, 4.0, n))
    log_probs[0] = 0.0
    return {"parents": parents, "steps": steps, "labels": labels, "log_probs": log_probs,
            "statuses": statuses, "returned": [i == n - 2 for i in range(n)]}, \
        [" ".join(labels[max(0, i - 3):i + 1]) for i in range(n)]


def _cases():
    from illustrated.plots import (attention, beam, decoding, diagrams, distributions, matrices,
                                   playground, positional, residual, training, vectors)
    from illustrated.plots.style import COLORS

    T = matrices.MatrixTerm
    x2, w = _rand(2, 4), _rand(4, 3)
    tree, hypotheses = _beam()
    history = {"loss": list(np.linspace(4, 0.1, 50)), "lr": list(np.linspace(0, 1e-3, 50)),
               "accuracy": list(np.linspace(0, 1, 50)), "elapsed": list(np.arange(50.0))}
    stack = [["Self-Attention", "Feed Forward"]] * 2
    dec_stack = [["Self-Attention", "Encoder-Decoder Attention", "Feed Forward"]] * 2
    d = 64
    n_heads, d_k = 2, 4
    X = _rand(2, 8)
    snapshots = {"post-LN": [(i, "b a c") for i in range(0, 120, 8)],
                 "pre-LN": [(i, "c b a") for i in range(0, 120, 8)]}

    def race():
        fig = residual.plot_training_race({"post-LN": history["loss"], "pre-LN": history["loss"]},
                                          snapshots, 0, sample="a b c", title="race")
        residual.update_training_race(fig, snapshots, 3)
        return fig

    def distributions_updated():
        fig = distributions.plot_distributions({"model, step 0": _probs(3, len(VOCAB))}, VOCAB,
                                               position_labels=["1", "2", "3"],
                                               highlight=[6, 5, 2], fig=plt.figure(figsize=(11, 3)))
        return distributions.update_distributions(fig, {"model, step 9": _probs(3, len(VOCAB))})

    def scan():
        fig = positional.plot_position_scan(_rand(20, 512), 0, title="scan")
        positional.update_position_scan(fig, _rand(20, 512), 7)
        return fig

    return {
        "attention.plot_word_attention": lambda: attention.plot_word_attention(
            LONG, _probs(4, len(LONG)), 7, title="layer 1",
            head_labels=[f"head {h}" for h in range(4)]),
        "attention.plot_word_attention_panels": lambda: attention.plot_word_attention_panels(
            [LONG, LONG], [_probs(4, len(LONG))] * 2, [7, 7], titles=["tired", "wide"],
            head_labels=[f"head {h}" for h in range(4)], suptitle="the top layer"),
        "attention.plot_attention_heatmaps": lambda: attention.plot_attention_heatmaps(
            _probs(2, 8, 12), [f"layer {i // 4}, head {i % 4}" for i in range(8)],
            [LONG + ["<eos>"]] * 2, titles=["writing 'it'", "writing 'it' too"],
            xlabel="source word", ylabel="decoder head", ncols=2),
        "attention.plot_scaled_softmax": lambda: attention.plot_scaled_softmax(
            ["Thinking", "Machines"], [112.0, 96.0], [14.0, 12.0], [0.88, 0.12], 64),
        "attention.plot_saturation": lambda: attention.plot_saturation(
            [0.9, 0.1], [0.6, 0.4], 64, np.array([1, 4, 16, 64, 256]),
            *[np.linspace(0.1, 1.0, 5) for _ in range(5)]),
        "beam.plot_beam_tree": lambda: beam.plot_beam_tree(**tree, title="beam_size=2"),
        "beam.plot_step_scores": lambda: beam.plot_step_scores(
            hypotheses[:4], [-0.3, -1.2, -2.5, -3.0], ["kept", "kept", "finished", "dropped"],
            title="step 2"),
        "beam.plot_beam_step": lambda: beam.plot_beam_step(
            **tree, hypotheses=hypotheses, step=3, title="'je suis étudiant': step 3",
            fig=plt.figure(dpi=72)),
        "beam.plot_length_penalty": lambda: beam.plot_length_penalty(
            list(range(1, 16)), np.ones((4, 15)), [0.0, 0.3, 0.6, 1.0], title="GNMT"),
        "beam.plot_alpha_scores": lambda: beam.plot_alpha_scores(
            np.linspace(0, 1, 11), -_probs(11, 4) * 3, ["i am", "i am a student", "i", "a"],
            [0] * 5 + [1] * 6, current=4, title="'je suis étudiant', beam_size 4",
            fig=plt.figure(dpi=72)),
        "decoding.plot_decoding_step": lambda: decoding.plot_decoding_step(
            SOURCE + ["<eos>"], ["<bos>", "i", "am"], _probs(3, 4), VOCAB[:8], np.sort(_probs(8))[::-1],
            "a", step=3, n_rows=5, attention_title="encoder-decoder attention (layer 2, mean)",
            fig=plt.figure(figsize=(11, 3.6), dpi=72)),
        "decoding.plot_decoding_grid": lambda: decoding.plot_decoding_grid(
            SOURCE, [["<bos>", "i", "am", "a", "student"][:s + 1] for s in range(5)],
            list(_probs(5, 3)), [["i", "a"]] * 5, [np.array([0.9, 0.1])] * 5,
            ["i", "am", "a", "student", "<eos>"]),
        "decoding.plot_causal_mask": lambda: decoding.plot_causal_mask(
            ["<bos>", "i", "am", "a", "student"], np.tril(np.ones((5, 5), bool)),
            np.tril(_probs(5, 5)),
            weights_title="self-attention weights (decoder layer 1, mean over heads)"),
        "decoding.plot_leak_test": lambda: decoding.plot_leak_test(
            ["<bos>", "i", "am", "a→the", "student"], np.abs(_rand(5)), np.abs(_rand(5)),
            position=3, fig=plt.figure(figsize=(7, 3.4), dpi=72)),
        "decoding.plot_output_softmax": lambda: decoding.plot_output_softmax(
            _rand(d), VOCAB[2:], _rand(8), _probs(8), "am", vocab_size=48, chosen_index=5),
        "diagrams.black_box": lambda: diagrams.black_box("je suis étudiant", "i am a student"),
        "diagrams.encoders_decoders": lambda: diagrams.encoders_decoders(
            "je suis étudiant", "i am a student", n_layers=2),
        "diagrams.encoder_decoder_stack": lambda: diagrams.encoder_decoder_stack(
            6, source="je suis étudiant", target="i am a student", title="n_layers = 6",
            fig=plt.figure(figsize=(6.6, 5.6), dpi=72)),
        "diagrams.encoder_diagram": lambda: diagrams.encoder_diagram(d_model=64, n_heads=4, d_ff=128),
        "diagrams.decoder_diagram": lambda: diagrams.decoder_diagram(d_model=64, n_heads=4, d_ff=128),
        "distributions.plot_vocabulary": lambda: distributions.plot_vocabulary(VOCAB[:6]),
        "distributions.plot_one_hot": lambda: distributions.plot_one_hot(VOCAB[:6], np.eye(6)[1]),
        "distributions.plot_distributions": lambda: distributions.plot_distributions(
            {"untrained model": _probs(3, len(VOCAB)), "target": np.eye(len(VOCAB))[[6, 5, 2]]},
            VOCAB, position_labels=["position 1", "position 2", "position 3"], highlight=[6, 5, 2],
            annotate=True),
        "distributions.update_distributions": distributions_updated,
        "matrices.plot_equations": lambda: matrices.plot_equations(
            [[T("$x_1$", x2[0]), "×", T("$W^Q$", w, COLORS["query"]), "=", T("$q_1$", x2[0] @ w),
              "", T("$x_2$", x2[1]), "×", T("$W^Q$", w, COLORS["query"]), "=",
              T("$q_2$", x2[1] @ w)]] * 3, scale=0.34),
        "matrices.plot_equation_panels": lambda: matrices.plot_equation_panels(
            [[[T("concat", _rand(2, 8)), "×", T("$W^O$", _rand(8, 8)), "=", T("Z", _rand(2, 8))]]] * 2,
            panel_titles=["head 0", "head 1"], scale=0.42),
        "matrices.plot_self_attention_steps": lambda: matrices.plot_self_attention_steps(
            ["Thinking", "Machines"],
            [matrices.StepRow("Embedding", list(_rand(2, 4))),
             matrices.StepRow("Score", ["q1 · k1 = 112", "q1 · k2 = 96"]),
             matrices.StepRow("Sum", [_rand(3), None], COLORS["z"])]),
        "matrices.plot_multi_head_recap": lambda: matrices.plot_multi_head_recap(
            ["Thinking", "Machines"], X, [(_rand(8, d_k), _rand(8, d_k), _rand(8, d_k))] * n_heads,
            *[_rand(n_heads, 2, d_k) for _ in range(4)], _rand(2, 8), _rand(8, 8), _rand(2, 8)),
        "playground.plot_loss_curve": lambda: playground.plot_loss_curve(
            list(range(50)), history["loss"], total_steps=300, title="training"),
        "playground.plot_cross_attention": lambda: playground.plot_cross_attention(
            _probs(5, 4), SOURCE + ["<eos>"], ["i", "am", "a", "student", "<eos>"], title="layer 2"),
        "positional.plot_vector_rows": lambda: positional.plot_vector_rows(
            {"embedding x": _rand(3, d), "positional\nencoding t": _rand(3, d),
             "input x + t": _rand(3, d)}, SOURCE, symbols=["+", "="],
            title="'je suis étudiant': embedding + positional encoding = input (all 64 dimensions)"),
        "positional.plot_position_boxes": lambda: positional.plot_position_boxes(
            np.clip(_rand(3, 4), -1, 1), SOURCE, title="positional encoding with d_model = 4"),
        "positional.plot_positional_heatmap": lambda: positional.plot_positional_heatmap(
            np.clip(_rand(20, 512), -1, 1), split=True, title="tensor2tensor's layout (the post)"),
        "positional.plot_layout_difference": lambda: positional.plot_layout_difference(
            _rand(20, 512), _rand(20, 512), _rand(20, 512), title="the same column order"),
        "positional.plot_frequency_spacing": lambda: positional.plot_frequency_spacing(
            {"paper": np.logspace(0, -4, 256), "tensor2tensor (post)": np.logspace(0, -4, 256)},
            ratio=np.linspace(1, 1.1, 256), ratio_label="paper / tensor2tensor"),
        "positional.plot_relative_shift": lambda: positional.plot_relative_shift(
            _rand(16, 16), np.clip(_rand(16), -1, 1), np.clip(_rand(16), -1, 1),
            np.clip(_rand(16), -1, 1), k=3, position=5, title="PE(pos + k) = M_k PE(pos)"),
        "positional.plot_order_blindness": lambda: positional.plot_order_blindness(
            _rand(5, 8), _rand(5, 8), _rand(5, 8), _rand(5, 8), "the dog bit the man".split(),
            "the man bit the dog".split(), title="self-attention output z, one row per word"),
        "positional.plot_position_scan": scan,
        "positional.update_position_scan": scan,
        "residual.plot_add_norm_layer": lambda: residual.plot_add_norm_layer(
            ["Self-Attention", "Feed Forward"], words=["Thinking", "Machines"],
            title="one encoder layer: residual + layer norm around each sub-layer"),
        "residual.plot_add_norm_stack": lambda: residual.plot_add_norm_stack(
            stack, dec_stack, norm_first=True, encoder_final_norm=True, decoder_final_norm=True,
            source_words=SOURCE, target_words=["<bos>", "i", "am"],
            title="pre-LN: x + Sublayer(LayerNorm(x)), and a final LayerNorm per stack"),
        "residual.plot_add_norm_vectors": lambda: residual.plot_add_norm_vectors(
            _rand(3, d), _rand(3, d), _rand(3, d), _rand(3, d), SOURCE,
            title="first encoder layer: X + Z -> LayerNorm (all 64 dimensions)"),
        "residual.plot_layer_norm_bars": lambda: residual.plot_layer_norm_bars(
            _rand(d), _rand(d), mean=0.1, std=1.2, label="suis"),
        "residual.plot_gradient_norms": lambda: residual.plot_gradient_norms(
            {"encoder": {"post-LN": np.linspace(1, 2, 6), "pre-LN": np.ones(6)},
             "decoder": {"post-LN": np.linspace(1, 4, 6), "pre-LN": np.ones(6)}},
            ylabel="|gradient of W_2| at initialization", title="6 layers"),
        "residual.plot_training_race": race,
        "residual.update_training_race": race,
        "training.plot_training_curves": lambda: training.plot_training_curves(
            {"post-LN": history, "pre-LN": history}, title="only the norm placement differs"),
        "vectors.vector_rows": lambda: vectors.vector_rows(
            _rand(3, d), SOURCE, title="each word becomes a vector of d_model = 64 numbers"),
        "vectors.encoder_flow": lambda: vectors.encoder_flow(
            _rand(3, d), _rand(3, d), _rand(3, d), SOURCE,
            title="the first encoder of the trained model"),
        "vectors.change_heatmaps": lambda: vectors.change_heatmaps(
            {"attention output z": np.abs(_rand(11, d)), "encoder output r": np.abs(_rand(11, d))},
            LONG, perturbed=3, row_change={"attention output z": np.abs(_rand(11)),
                                           "encoder output r": np.abs(_rand(11))},
            title="nudging the input of 'cross'", fig=plt.figure(dpi=72)),
    }


CASES = _cases()


def _plot_functions() -> list[str]:
    """Every public function of plots/ that returns or updates a Figure."""
    names = []
    for module_name in MODULES:
        module = importlib.import_module(f"illustrated.plots.{module_name}")
        for name in module.__all__:
            obj = getattr(module, name)
            if not inspect.isfunction(obj):
                continue
            signature = inspect.signature(obj)
            if "Figure" in str(signature.return_annotation) or "fig" in signature.parameters:
                names.append(f"{module_name}.{name}")
    return names


def _texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and t.get_figure() is fig]


def test_the_width_follows_from_the_browser_rule():
    # 672 CSS px of content, 8 pt text, 9 px minimum: 672 * 8 / (72 * 9) = 8.296 in.
    assert MAX_WIDTH_IN == pytest.approx(8.296, abs=1e-3)
    assert style.MAX_FIGURE_WIDTH_IN + 2 * TIGHT_PAD_IN <= MAX_WIDTH_IN


def test_every_plot_function_is_checked():
    missing = sorted(set(_plot_functions()) - set(CASES))
    assert not missing, f"plot functions without a case in tests/test_plot_fonts.py: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_is_at_least_min_font_and_the_figure_fits_the_page(name):
    fig = CASES[name]()
    try:
        renderer = fig.canvas.get_renderer()
        fig.draw(renderer)  # lays the figure out (constrained layout, tick labels) as saved
        small = sorted({(round(t.get_fontsize(), 2), t.get_text()[:30]) for t in _texts(fig)
                        if t.get_fontsize() < MIN_FONT_PT - 1e-9})
        assert not small, f"{name}: text below MIN_FONT_PT = {MIN_FONT_PT} pt: {small[:5]}"
        # As a notebook saves it (cropped to what is drawn, plus the margins): within the plots'
        # target, a little inside MAX_WIDTH_IN; as a player shows its frames (the whole figure):
        # within MAX_WIDTH_IN.
        drawn = fig.get_tightbbox(renderer).width
        assert drawn <= style.MAX_FIGURE_WIDTH_IN + 1e-6, (
            f"{name}: drawn {drawn:.2f} in wide, more than MAX_FIGURE_WIDTH_IN = "
            f"{style.MAX_FIGURE_WIDTH_IN} in (saved with margins: {drawn + 2 * TIGHT_PAD_IN:.2f} "
            f"in, the page's limit {MAX_WIDTH_IN:.2f} in)")
        assert fig.get_figwidth() <= MAX_WIDTH_IN, (
            f"{name}: figure {fig.get_figwidth():.2f} in wide, more than {MAX_WIDTH_IN:.2f} in")
    finally:
        plt.close(fig)
