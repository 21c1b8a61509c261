"""Widgets of chapter 10: the playground (settings, a Train button, refreshed figures) and a live loss curve.

Glue only: controls, output areas, and functions that call :mod:`illustrated.explain.playground`
then :mod:`illustrated.plots.playground` / :mod:`illustrated.plots.training`. Works with
ipywidgets 7.7 (Colab) and 8.

References: post "Go Forth And Transform"; paper §5.
"""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import HTML, display

from ..data import CORPORA, load_corpus
from ..explain import playground as playground_explain
from ..plots import playground as playground_plots
from ..plots.training import plot_training_curves

__all__ = ["LiveLossPlot", "live_loss", "show_run", "Playground", "playground_widget"]


class LiveLossPlot:
    """Redraw the loss curve in an Output area (the ``on_update`` of a :class:`LossCurve`).

    Parameters
    ----------
    output : ipywidgets.Output to draw into.   total_steps : int, the x range of the curve.
    """

    def __init__(self, output: widgets.Output, total_steps: int) -> None:
        self.output, self.total_steps = output, total_steps

    def __call__(self, steps: list[int], losses: list[float]) -> None:
        fig = playground_plots.plot_loss_curve(steps, losses, total_steps=self.total_steps,
                                               title=f"training: step {steps[-1]}")
        with self.output:
            self.output.clear_output(wait=True)
            display(fig)
        plt.close(fig)


def live_loss(total_steps: int, every: int = 25
              ) -> tuple[widgets.Output, playground_explain.LossCurve]:
    """An Output area and a ``train`` callback that redraws the loss curve in it every ``every`` steps.

    Returns
    -------
    (output, callback): display ``output``, pass ``callback`` to ``il.train`` or
    :func:`illustrated.explain.playground.train_playground`.

    Raises
    ------
    ValueError
        If ``every < 1``.

    References
    ----------
    Post "Recap Of Training".
    """
    output = widgets.Output()
    return output, playground_explain.LossCurve(every, LiveLossPlot(output, total_steps),
                                                total_steps)


def show_run(run: playground_explain.PlaygroundRun, sentence: str | None = None, *,
             beam_size: int = 4, n_rows: int = 8,
             rows: list[playground_explain.TranslationRow] | None = None) -> None:
    """Show a run: its training curves, a table of test translations (wrong ones first) and one
    sentence's attention.

    Parameters
    ----------
    run : PlaygroundRun.   sentence : the sentence whose attention is drawn (default: the
    first test sentence).   beam_size : the beam of the table.   n_rows : rows of the table.
    rows : the run's translations of the test split when already computed with ``beam_size``
    (:func:`illustrated.explain.playground.translation_rows`), so they are not computed twice.

    Raises
    ------
    ValueError
        From the compute functions, e.g. a sentence with words outside the vocabulary's corpus.
    """
    pairs, _, _ = load_corpus(run.corpus, "test")
    curves = plot_training_curves({run.corpus: {"loss": run.history.loss,
                                                "accuracy": run.history.accuracy}},
                                  title=f"{run.corpus}: {run.history.steps} steps on {run.device}")
    display(curves)
    plt.close(curves)
    if rows is None:
        rows = playground_explain.translation_rows(run.model, pairs, run.src_vocab,
                                                   run.tgt_vocab, beam_size=beam_size)
    summary = playground_explain.summarize_translations(rows)
    # HTML, not Markdown: the static page's widget renderer shows no text/markdown.
    display(HTML(f"<p>Exact match on {len(rows)} test sentences: "
                 f"greedy {summary.greedy_exact_match:.0%}, "
                 f"beam {beam_size} {summary.beam_exact_match:.0%}.</p>\n"
                 + playground_explain.format_translation_table(
                     (summary.wrong + summary.right)[:n_rows], beam_size=beam_size, fmt="html")))
    att = playground_explain.cross_attention(run.model, sentence or pairs[0][0], run.src_vocab,
                                             run.tgt_vocab)
    fig = playground_plots.plot_cross_attention(
        att.weights, att.source_tokens, att.output_tokens,
        title=f"encoder-decoder attention, decoder layer {att.layer + 1}, mean over heads")
    display(fig)
    plt.close(fig)


class Playground:
    """The playground's controls, its Train button and the output area it refreshes.

    Parameters
    ----------
    run : PlaygroundRun or None: a finished run to show at once (so that building the widget
        trains nothing); its corpus and settings set the controls.
    corpus : str, the starting corpus when ``run`` is None.
    sentence : the sentence whose attention is drawn for ``fr-en`` (other corpora use their
        first test sentence).
    rows : ``run``'s translations of the test split with a beam of 4, if already computed.

    Attributes
    ----------
    widget : ipywidgets.VBox to display.   run : the latest PlaygroundRun (None before training).
    """

    def __init__(self, run: playground_explain.PlaygroundRun | None = None, *,
                 corpus: str = "fr-en", sentence: str | None = None,
                 rows: list[playground_explain.TranslationRow] | None = None) -> None:
        corpus = run.corpus if run is not None else corpus
        values = run.settings if run is not None else playground_explain.playground_defaults(corpus)
        self.run, self.sentence = run, sentence
        self.corpus = widgets.Dropdown(options=list(CORPORA), value=corpus, description="corpus")
        self.d_model = widgets.Dropdown(options=sorted({16, 32, 64, 128, values["d_model"]}),
                                        value=values["d_model"], description="d_model")
        self.n_heads = widgets.Dropdown(options=sorted({1, 2, 4, 8, values["n_heads"]}),
                                        value=values["n_heads"], description="n_heads")
        self.n_layers = widgets.IntSlider(value=values["n_layers"], min=1, max=4,
                                          description="n_layers")
        self.lr = widgets.FloatLogSlider(value=values["lr"], base=10, min=-4, max=-1.5, step=0.25,
                                         description="lr", readout_format=".1e")
        self.steps = widgets.IntSlider(value=values["steps"], min=10, max=2000, step=10,
                                       description="steps")
        self.smoothing = widgets.FloatSlider(value=values["label_smoothing"], min=0.0, max=0.5,
                                             step=0.05, description="smoothing")
        self.button = widgets.Button(description="Train", button_style="primary", icon="play")
        self.status = widgets.Label(value="")
        self.live = widgets.Output()
        self.output = widgets.Output()
        self.button.on_click(self.train)
        self.corpus.observe(self.use_defaults, names="value")
        self.widget = widgets.VBox([
            widgets.HBox([self.corpus, self.d_model, self.n_heads]),
            widgets.HBox([self.n_layers, self.lr, self.steps]),
            widgets.HBox([self.smoothing, self.button, self.status]),
            self.live, self.output])
        if run is not None:
            self.refresh(rows)

    def use_defaults(self, change: dict) -> None:
        """Set every control to the defaults of the newly picked corpus (``il.SETTINGS``)."""
        values = playground_explain.playground_defaults(change["new"])
        for control, key in ((self.d_model, "d_model"), (self.n_heads, "n_heads")):
            control.options = sorted({*control.options, values[key]})
        for control, key in ((self.d_model, "d_model"), (self.n_heads, "n_heads"),
                             (self.n_layers, "n_layers"), (self.lr, "lr"), (self.steps, "steps"),
                             (self.smoothing, "label_smoothing")):
            control.value = values[key]

    def refresh(self, rows: list[playground_explain.TranslationRow] | None = None) -> None:
        """Redraw the output area for the latest run (``rows``: its translations, if known)."""
        sentence = self.sentence if self.run.corpus == "fr-en" else None
        with self.output:
            self.output.clear_output(wait=True)
            show_run(self.run, sentence, rows=rows)

    def train(self, _button: widgets.Button | None = None) -> None:
        """Train with the controls' values, drawing the loss as it goes, then refresh the output."""
        self.button.disabled = True
        self.status.value = "training..."
        self.live.clear_output()
        callback = playground_explain.LossCurve(25, LiveLossPlot(self.live, self.steps.value),
                                                self.steps.value)
        try:
            self.run = playground_explain.train_playground(
                self.corpus.value, d_model=self.d_model.value, n_heads=self.n_heads.value,
                n_layers=self.n_layers.value, lr=self.lr.value, steps=self.steps.value,
                label_smoothing=self.smoothing.value, callback=callback)
        except ValueError as error:  # e.g. d_model not a multiple of n_heads, or divergence
            self.status.value = f"not trained: {error}"
            return
        finally:
            self.button.disabled = False
        self.status.value = f"trained in {self.run.seconds:.1f} s on {self.run.device}"
        self.live.clear_output()
        self.refresh()


def playground_widget(run: playground_explain.PlaygroundRun | None = None, *,
                      corpus: str = "fr-en", sentence: str | None = None,
                      rows: list[playground_explain.TranslationRow] | None = None
                      ) -> widgets.VBox:
    """Pick a corpus, the model's sizes, the learning rate, the steps and label smoothing, then Train.

    Parameters
    ----------
    run : an already trained PlaygroundRun to show (the default training of the chapter), or None.
    corpus : starting corpus when ``run`` is None.   sentence : the fr-en sentence whose
        attention is drawn.   rows : ``run``'s translations of the test split with a beam of 4,
        if already computed (they are then not computed again).

    Returns
    -------
    ipywidgets.VBox: the controls, a Train button, a live loss curve during training, and the
    training curves, translation table and attention heatmap of the latest run.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        For an unknown corpus (errors during training show next to the button).

    References
    ----------
    Post "Go Forth And Transform"; paper §5.3, §5.4, Table 3.
    """
    return Playground(run, corpus=corpus, sentence=sentence, rows=rows).widget
