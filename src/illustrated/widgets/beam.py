"""Widget of chapter 09: beam search with ``beam_size``, ``top_beams`` and the length penalty α.

Glue only: controls and ``interactive_output`` of a function that calls
:func:`illustrated.explain.beam.beam_tree` and :func:`illustrated.plots.beam.plot_beam_tree`.
Works with ipywidgets 7.7 (Colab) and 8.

References: post, end of "The Loss Function"; paper §6.1; Wu et al. 2016 (GNMT) §7.
"""
from __future__ import annotations

from functools import partial

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..data import Vocab
from ..explain import beam as beam_explain
from ..modules.transformer import Transformer
from ..plots import beam as beam_plots

__all__ = ["beam_title", "beam_widget"]


def beam_title(tree: beam_explain.BeamTree) -> str:
    """Title naming the settings and the returned translations with their scores, best first."""
    head = f"beam_size={tree.beam_size}, top_beams={tree.top_beams}, α={tree.alpha:g}"
    lines = [f"{rank}. '{words}'  score {score:.3f}"
             for rank, (words, (_, score)) in enumerate(zip(tree.translations, tree.results), 1)]
    return "\n".join([head, *lines])


def _show_beam(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, max_len: int,
               sentence: str, beam_size: int, top_beams: int, alpha: float) -> None:
    tree = beam_explain.beam_tree(model, sentence, src_vocab, tgt_vocab, beam_size=beam_size,
                                  top_beams=min(top_beams, beam_size), alpha=alpha,
                                  max_len=max_len)
    arrays = beam_explain.tree_arrays(tree)
    arrays.pop("hypotheses")
    fig = beam_plots.plot_beam_tree(**arrays, title=beam_title(tree))
    plt.show()
    plt.close(fig)


def beam_widget(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab,
                sentence: str = "je suis étudiant", *, beam_size: int = 2, top_beams: int = 2,
                alpha: float = 0.0, max_beam: int = 6, max_len: int = 12) -> widgets.VBox:
    """Hold on to the top ``beam_size`` partial translations and return ``top_beams``: sliders for both and α.

    The default state draws the post's example: ``beam_size`` 2 and ``top_beams`` 2 on
    "je suis étudiant". A ``top_beams`` above ``beam_size`` is read as ``beam_size``.

    Parameters
    ----------
    model : Transformer (trained).   src_vocab, tgt_vocab : its vocabularies.
    sentence : str, starting source sentence.   beam_size, top_beams : starting values.
    alpha : float, starting length-penalty exponent.   max_beam : int, largest beam offered.
    max_len : int, most tokens a hypothesis may have (keeps the tree small).

    Returns
    -------
    ipywidgets.VBox: a text box and three sliders above the tree of
    :func:`illustrated.plots.beam.plot_beam_tree`.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``beam_size`` or ``top_beams`` is outside [1, max_beam] or ``alpha`` outside [0, 2].

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1; Wu et al. 2016, Eq. 14.
    """
    for name, value in (("beam_size", beam_size), ("top_beams", top_beams)):
        if not isinstance(value, int) or not 1 <= value <= max_beam:
            raise ValueError(f"{name}: expected an int in [1, {max_beam}], got {value!r}")
    if not 0.0 <= alpha <= 2.0:
        raise ValueError(f"alpha: expected a value in [0, 2], got {alpha!r}")
    text = widgets.Text(value=sentence, description="source", continuous_update=False)
    beams = widgets.IntSlider(value=beam_size, min=1, max=max_beam, description="beam_size",
                              continuous_update=False)
    tops = widgets.IntSlider(value=top_beams, min=1, max=max_beam, description="top_beams",
                             continuous_update=False)
    alphas = widgets.FloatSlider(value=alpha, min=0.0, max=2.0, step=0.1, description="α",
                                 continuous_update=False)
    show = partial(_show_beam, model, src_vocab, tgt_vocab, max_len)
    out = widgets.interactive_output(show, {"sentence": text, "beam_size": beams,
                                            "top_beams": tops, "alpha": alphas})
    return widgets.VBox([widgets.HBox([text, alphas]), widgets.HBox([beams, tops]), out])
