"""Chapter 10's playground: settings, training run, translations, attention, figures, widget."""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest
import torch

import illustrated as il
from illustrated.explain import playground as E
from illustrated.plots import playground as P
from illustrated.widgets import playground as W


@pytest.fixture(scope="module")
def post_run():
    """A few steps on the post's two sentences: quick, and enough to exercise everything."""
    return E.train_playground("post", steps=10, device="cpu")


def test_defaults_come_from_the_corpus_settings():
    for corpus in il.data.CORPORA:
        defaults = E.playground_defaults(corpus)
        assert set(defaults) == set(E.PLAYGROUND_KNOBS)
        _, s, t = il.data.load_corpus(corpus, "train")
        cfg = il.presets.make_config(corpus, s, t)
        assert (defaults["d_model"], defaults["n_heads"], defaults["n_layers"]) == (
            cfg.d_model, cfg.n_heads, cfg.n_layers)
        assert defaults["steps"] == il.SETTINGS[corpus]["train"]["steps"]
        assert defaults["lr"] == il.SETTINGS[corpus]["train"]["lr"]
    with pytest.raises(ValueError, match="corpus"):
        E.playground_defaults("klingon")


def test_loss_curve_collects_every_step_and_reports_every_n():
    calls = []

    def record(steps, losses):
        calls.append((list(steps), list(losses)))

    curve = E.LossCurve(every=2, on_update=record, total_steps=5)
    history = il.History()
    for step in range(1, 6):
        history.loss.append(1.0 / step)
        curve(step, history)
    assert curve.steps == [1, 2, 3, 4, 5]
    assert curve.losses == [1.0, 0.5, 1 / 3, 0.25, 0.2]
    assert [c[0][-1] for c in calls] == [2, 4, 5]
    with pytest.raises(ValueError, match="every"):
        E.LossCurve(every=0)


def test_train_playground_uses_the_knobs_and_the_callback(post_run):
    run = post_run
    assert run.corpus == "post" and run.device == "cpu"
    assert run.history.steps == 10 and run.settings["steps"] == 10
    assert run.settings["d_model"] == run.model.cfg.d_model
    assert run.seconds > 0 and not run.model.training
    seen = []
    other = E.train_playground("post", d_model=16, n_heads=2, n_layers=1, steps=3, lr=1e-3,
                               label_smoothing=0.1, device="cpu",
                               callback=E.LossCurve(1, lambda steps, _losses: seen.append(steps[-1])))
    cfg = other.model.cfg
    base = il.presets.make_config("post", other.src_vocab, other.tgt_vocab)
    assert (cfg.d_model, cfg.n_heads, cfg.n_layers) == (16, 2, 1)
    assert cfg.d_ff == base.d_ff * 16 // base.d_model  # the feed-forward keeps its ratio
    assert seen == [1, 2, 3]
    assert other.history.lr[-1] == pytest.approx(il.training.learning_rate(
        3, 1e-3, **{k: v for k, v in il.SETTINGS["post"]["train"].items()
                    if k in ("warmup", "schedule")}, **(
            {"total_steps": 3} if il.SETTINGS["post"]["train"].get("schedule") == "cosine"
            else {})))
    with pytest.raises(ValueError, match="d_model"):
        E.train_playground("post", d_model=30, n_heads=4, steps=1, device="cpu")


def test_translation_rows_agree_with_translate(post_run):
    run = post_run
    pairs, _, _ = il.data.load_corpus("post", "test")
    rows = E.translation_rows(run.model, pairs, run.src_vocab, run.tgt_vocab, beam_size=2)
    greedy = il.translate(run.model, [s for s, _ in pairs], run.src_vocab, run.tgt_vocab)
    beam = il.translate(run.model, [s for s, _ in pairs], run.src_vocab, run.tgt_vocab, beam_size=2)
    assert [r.greedy for r in rows] == greedy and [r.beam for r in rows] == beam
    assert [r.greedy_ok for r in rows] == [g == t for g, (_, t) in zip(greedy, pairs)]
    table = E.format_translation_table(rows, beam_size=2)
    lines = table.splitlines()
    assert lines[0] == "| source | reference | greedy | beam 2 |"
    assert len(lines) == 2 + len(rows)
    assert lines[2].count("|") == 5 and ("✓" in lines[2] or "✗" in lines[2])
    html = E.format_translation_table(rows, beam_size=2, fmt="html")
    assert html.count("<tr>") == 1 + len(rows) and "<th>beam 2</th>" in html
    assert f"<td>{rows[0].source}</td>" in html
    with pytest.raises(ValueError, match="fmt"):
        E.format_translation_table(rows, fmt="latex")
    with pytest.raises(ValueError, match="beam_size"):
        E.translation_rows(run.model, pairs, run.src_vocab, run.tgt_vocab, beam_size=1)


def test_summarize_translations_counts_and_splits_rows():
    row = E.TranslationRow
    rows = [row("a", "x", "x", "x", True, True), row("b", "y", "z", "y", False, True),
            row("c", "w", "w", "v", True, False), row("d", "u", "u", "u", True, True)]
    summary = E.summarize_translations(rows)
    assert summary.greedy_exact_match == 0.75 and summary.beam_exact_match == 0.75
    assert [r.source for r in summary.wrong] == ["b", "c"]
    assert [r.source for r in summary.right] == ["a", "d"]
    with pytest.raises(ValueError, match="rows"):
        E.summarize_translations([])


def test_cross_attention_is_the_models_mean_over_heads(fr_en_untrained):
    model, src_vocab, tgt_vocab, _ = fr_en_untrained
    model = il.modules.Transformer(model.cfg.__class__(**{**model.cfg.__dict__, "max_len": 8}))
    model.eval()
    att = E.cross_attention(model, "je suis étudiant", src_vocab, tgt_vocab)
    out = il.greedy_decode(model, src_vocab.encode("je suis étudiant"), bos_id=tgt_vocab.bos_id,
                           eos_id=tgt_vocab.eos_id, max_len=7)
    assert att.output_tokens == [tgt_vocab.tokens[i] for i in out]
    assert att.source_tokens == ["je", "suis", "étudiant"]
    assert att.weights.shape == (len(out), 3)
    np.testing.assert_allclose(att.weights.sum(axis=1), 1.0, atol=1e-6)
    with torch.no_grad():
        _, a = model(torch.tensor([src_vocab.encode("je suis étudiant")]),
                     torch.tensor([[tgt_vocab.bos_id, *out[:-1]]]), return_attention=True)
    np.testing.assert_allclose(att.weights, a.decoder_cross[-1][0].mean(0).numpy(), atol=1e-6)
    assert att.layer == model.cfg.n_layers - 1
    with pytest.raises(ValueError, match="layer"):
        E.cross_attention(model, "je suis", src_vocab, tgt_vocab, layer=5)


def test_playground_plots_draw_their_data():
    fig = P.plot_loss_curve([1, 2, 3], [2.0, 1.0, 0.5], total_steps=10, title="live")
    (ax,) = fig.axes
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [2.0, 1.0, 0.5])
    assert ax.get_xlim() == (0, 10) and ax.get_yscale() == "log"
    weights = np.array([[0.7, 0.3], [0.1, 0.9], [0.5, 0.5]])
    fig = P.plot_cross_attention(weights, ["je", "suis"], ["i", "am", "<eos>"], title="att")
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.images[0].get_array(), weights)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["je", "suis"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["i", "am", "<eos>"]
    assert len(ax.texts) == 6 and len(fig.axes) == 2  # values and a colour bar
    with pytest.raises(ValueError, match="weights"):
        P.plot_cross_attention(weights.T, ["je", "suis"], ["i", "am", "<eos>"])
    with pytest.raises(ValueError, match="losses"):
        P.plot_loss_curve([1, 2], [1.0, 0.0])


def test_playground_widget_shows_a_run_and_retrains(post_run):
    pairs, _, _ = il.data.load_corpus("post", "test")
    rows = E.translation_rows(post_run.model, pairs, post_run.src_vocab, post_run.tgt_vocab)
    pg = W.Playground(post_run, rows=rows)
    assert isinstance(pg.widget, widgets.VBox)
    assert pg.corpus.value == "post" and pg.steps.value == 10
    assert pg.d_model.value == post_run.model.cfg.d_model
    pg.steps.value = 20
    pg.n_layers.value = 1
    pg.train()
    assert pg.run.history.steps == 20 and pg.run.model.cfg.n_layers == 1
    assert pg.status.value.startswith("trained in")
    pg.corpus.value = "reverse"  # switching corpus loads its defaults
    defaults = E.playground_defaults("reverse")
    assert (pg.d_model.value, pg.n_heads.value, pg.n_layers.value, pg.steps.value) == (
        defaults["d_model"], defaults["n_heads"], defaults["n_layers"], defaults["steps"])


def test_live_loss_returns_an_output_and_a_callback():
    output, callback = W.live_loss(total_steps=4, every=2)
    assert isinstance(output, widgets.Output)
    history = il.History()
    for step in range(1, 5):
        history.loss.append(1.0 / step)
        callback(step, history)
    assert callback.losses == [1.0, 0.5, 1 / 3, 0.25]
