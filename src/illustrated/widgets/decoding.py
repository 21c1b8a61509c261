"""Widgets of chapter 07: decoding step by step, and the leak test.

Glue only: controls and ``interactive_output`` of a function that calls a compute function of
:mod:`illustrated.explain.decoding` and a plot function of :mod:`illustrated.plots.decoding`.
Works with ipywidgets 7.7 (Colab) and 8.

References: post "The Decoder Side"; paper §3.1, §3.2.3.
"""
from __future__ import annotations

from functools import partial

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..data import Vocab
from ..explain import decoding as decoding_explain
from ..modules.transformer import Transformer
from ..plots import decoding as decoding_plots

__all__ = ["decoding_widget", "leak_test_widget", "attention_title"]


def attention_title(layer: int, head: int | None) -> str:
    """Say which encoder-decoder attention a figure shows: the decoder layer and the head(s).

    Parameters
    ----------
    layer : int, 0-based decoder layer (printed 1-based).
    head : int or None, the head, or None for the mean over heads.

    Returns
    -------
    str, two lines, e.g. "encoder-decoder attention\n(decoder layer 2, mean over heads)".

    Shapes
    ------
    Not applicable.

    Raises
    ------
    Nothing.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3.
    """
    heads = "mean over heads" if head is None else f"head {head}"
    return f"encoder-decoder attention\n(decoder layer {layer + 1}, {heads})"


def _show_step(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, sentence: str,
               step: int, layer: int, head: int) -> None:
    head = None if head < 0 else head
    trace = decoding_explain.decoding_trace(model, sentence, src_vocab, tgt_vocab, layer=layer,
                                            head=head)
    s = trace.steps[min(step, len(trace.steps)) - 1]
    fig = decoding_plots.plot_decoding_step(
        trace.source_tokens, s.input_tokens, s.cross_attention, s.top_tokens, s.top_probs,
        s.chosen_token, step=s.step, n_rows=len(trace.steps),
        attention_title=attention_title(trace.layer, trace.head))
    plt.show()
    plt.close(fig)


def decoding_widget(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab,
                    sentence: str = "je suis étudiant", *, step: int = 1,
                    max_steps: int = 12) -> widgets.VBox:
    """Each step of the decoding phase outputs one word: a text box, a step slider, layer and head.

    The default draws the post's first decoding step for "je suis étudiant"; a step past the
    end of the translation shows the last step (the one that outputs ``<eos>``).

    Parameters
    ----------
    model : Transformer (trained).   src_vocab, tgt_vocab : its vocabularies.
    sentence : str, starting source sentence.   step : int, starting step (1-based).
    max_steps : int, largest value of the step slider.

    Returns
    -------
    ipywidgets.VBox: the controls above the figure of
    :func:`illustrated.plots.decoding.plot_decoding_step`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``step`` is outside [1, max_steps]; the compute function's errors for a bad model,
        vocabulary or sentence show in the output area.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3.
    """
    if not isinstance(step, int) or not 1 <= step <= max_steps:
        raise ValueError(f"step: expected an int in [1, {max_steps}], got {step!r}")
    text = widgets.Text(value=sentence, description="source", continuous_update=False)
    steps = widgets.IntSlider(value=step, min=1, max=max_steps, description="step",
                              continuous_update=False)
    layers = widgets.Dropdown(options=[(str(i + 1), i) for i in range(model.cfg.n_layers)],
                              value=model.cfg.n_layers - 1, description="layer")
    heads = widgets.Dropdown(options=[("mean", -1)] + [(str(h), h) for h in range(model.cfg.n_heads)],
                             value=-1, description="head")
    show = partial(_show_step, model, src_vocab, tgt_vocab)
    out = widgets.interactive_output(show, {"sentence": text, "step": steps, "layer": layers,
                                            "head": heads})
    return widgets.VBox([widgets.HBox([text, steps]), widgets.HBox([layers, heads]), out])


def _show_leak(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, sentence: str,
               target: str, position: int, new_word: str) -> None:
    result = decoding_explain.leak_test(model, sentence, target, src_vocab, tgt_vocab,
                                        position=position, new_word=new_word)
    labels = [f"{a}→{b}" if a != b else a for a, b in zip(result.input_before, result.input_after)]
    fig = decoding_plots.plot_leak_test(labels, result.change_masked, result.change_unmasked,
                                        position=result.position)
    plt.show()
    plt.close(fig)


def leak_test_widget(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab,
                     sentence: str = "je suis étudiant", target: str = "i am a student", *,
                     position: int = 3, new_word: str = "the") -> widgets.VBox:
    """Change a future word of the decoder's input and see which outputs move, with and without the mask.

    Parameters
    ----------
    model : Transformer.   src_vocab, tgt_vocab : its vocabularies.
    sentence, target : the pair fed to the model (teacher forcing).
    position : int, starting decoder position to change (1 = first target word).
    new_word : str, starting replacement word.

    Returns
    -------
    ipywidgets.VBox: a position slider and a word menu above the figure of
    :func:`illustrated.plots.decoding.plot_leak_test`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``position`` is outside [1, number of target words] or ``new_word`` is not in the
        target vocabulary.

    References
    ----------
    Post "The Decoder Side"; paper §3.2.3.
    """
    n = len(tgt_vocab.encode(target))
    if not isinstance(position, int) or not 1 <= position <= n:
        raise ValueError(f"position: expected an int in [1, {n}], got {position!r}")
    words = [t for i, t in enumerate(tgt_vocab.tokens) if i not in tgt_vocab.specials]
    if new_word not in words:
        raise ValueError(f"new_word: expected a word of the target vocabulary, got {new_word!r}")
    slider = widgets.IntSlider(value=position, min=1, max=n, description="position",
                               continuous_update=False)
    menu = widgets.Dropdown(options=words, value=new_word, description="new word")
    show = partial(_show_leak, model, src_vocab, tgt_vocab, sentence, target)
    out = widgets.interactive_output(show, {"position": slider, "new_word": menu})
    return widgets.VBox([widgets.HBox([slider, menu]), out])
