"""The live widgets of the static book: HTML placeholders that site/js/ mounts in the reader's browser.

A Python callback cannot run in a rendered page, so chapters 07, 09 and 10 display, beside the
ipywidget (whose output the book hides with the cell tag ``remove-output``), a ``<div>`` that
names the widget and its starting state in ``data-`` attributes. On every page of the book,
``_illustrated/js/live.js`` (imported by ``api.js``) finds these containers and draws the widget
there, computing with the shipped models through ``window.illustrated`` (onnxruntime-web, no
kernel). In Jupyter or Colab, where that script is absent, the container shows its fallback
line and the ipywidget above it is the live version.

Glue only: no computation here, the numbers come from the same ONNX graphs that
tests/browser/test_live_widgets.py checks against :func:`illustrated.beam_search`.

References: DESIGN.md, "Widgets in the static book".
"""
from __future__ import annotations

import html
import json

from IPython.display import HTML

from ..data import CORPORA, load_corpus

__all__ = ["FALLBACK", "live_translate", "live_beam"]

#: What Jupyter and Colab show in place of a live widget (the JavaScript runs in the book only).
FALLBACK = ("Live version: runs in the online book, in your browser. Here, use the Python widget "
            "above.")


def _container(kind: str, attributes: dict[str, object]) -> HTML:
    """``<div class="illustrated-live" data-illustrated-live=kind data-...>`` with the fallback."""
    attrs = "".join(f' data-{name}="{html.escape(str(value), quote=True)}"'
                    for name, value in attributes.items())
    return HTML(f'<div class="illustrated-live" data-illustrated-live="{kind}"{attrs}>'
                f'<p class="illustrated-live-fallback"><em>{html.escape(FALLBACK)}</em></p></div>')


def _check(corpus: str, sentence: str, corpora: list[str] | None) -> list[str]:
    for name, value in (("corpus", corpus), ("sentence", sentence)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name}: expected a non-empty string, got {value!r}")
    choices = [corpus] if corpora is None else list(corpora)
    unknown = [c for c in [corpus, *choices] if c not in CORPORA]
    if unknown:
        raise ValueError(f"corpora: unknown corpus {unknown[0]!r}, expected names from {CORPORA}")
    if corpus not in choices:
        raise ValueError(f"corpus: {corpus!r} is not among corpora={choices}")
    return choices


def live_translate(corpus: str = "fr-en", sentence: str = "je suis étudiant", *,
                   corpora: list[str] | None = None, top_k: int = 5) -> HTML:
    """Type a sentence, read the shipped model's translation, its attention and its choices.

    In the book: a text box (the corpus's vocabulary offered as one types, unknown words flagged
    before decoding), a corpus choice when ``corpora`` lists several, then the greedy
    translation, the encoder-decoder attention of a chosen decoder layer and head (or their
    mean) as a heatmap, and the ``top_k`` most probable next words at every step. Switching
    corpus puts that corpus's first test sentence in the box.

    Parameters
    ----------
    corpus : str, starting corpus (one of ``il.data.CORPORA``).
    sentence : str, starting source sentence.
    corpora : list of str or None, the corpora offered; None offers ``corpus`` only.
    top_k : int in [1, 10], words listed per step.

    Returns
    -------
    IPython.display.HTML: the container (``data-illustrated-live="translate"``).

    Raises
    ------
    ValueError
        For an unknown corpus, ``corpus`` not in ``corpora``, an empty sentence or a bad top_k.

    References
    ----------
    Post "The Decoder Side" and "The Final Linear and Softmax Layer"; paper §3.2.3.
    """
    choices = _check(corpus, sentence, corpora)
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 10:
        raise ValueError(f"top_k: expected an int in [1, 10], got {top_k!r}")
    # A sentence per corpus, shown when the reader switches to it: its first test sentence.
    examples = {c: sentence if c == corpus else load_corpus(c, "test")[0][0][0] for c in choices}
    return _container("translate", {"corpus": corpus, "sentence": sentence,
                                    "corpora": ",".join(choices), "top-k": top_k,
                                    "examples": json.dumps(examples, ensure_ascii=False)})


def live_beam(corpus: str = "fr-en", sentence: str = "je suis étudiant", *, beam_size: int = 2,
              top_beams: int = 2, alpha: float = 0.0, max_beam: int = 6,
              max_len: int = 12) -> HTML:
    """Beam search in the browser: ``beam_size``, ``top_beams`` and α → hypotheses and the tree.

    The browser twin of :func:`illustrated.widgets.beam.beam_widget`, with the same controls
    and the same reading of a ``top_beams`` above ``beam_size`` (as ``beam_size``).

    Parameters
    ----------
    corpus : str, the shipped model used.   sentence : str, starting source sentence.
    beam_size, top_beams : int in [1, max_beam], starting values.
    alpha : float >= 0, starting length-penalty exponent (GNMT, Wu et al. 2016 §7).
    max_beam : int in [1, 10], largest beam offered.   max_len : int >= 1, most tokens generated.

    Returns
    -------
    IPython.display.HTML: the container (``data-illustrated-live="beam"``).

    Raises
    ------
    ValueError
        For an unknown corpus, an empty sentence, or a setting outside its range.

    References
    ----------
    Post, end of "The Loss Function"; paper §6.1.
    """
    _check(corpus, sentence, None)
    if not isinstance(max_beam, int) or not 1 <= max_beam <= 10:
        raise ValueError(f"max_beam: expected an int in [1, 10], got {max_beam!r}")
    for name, value in (("beam_size", beam_size), ("top_beams", top_beams)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= max_beam:
            raise ValueError(f"{name}: expected an int in [1, {max_beam}], got {value!r}")
    if not isinstance(alpha, (int, float)) or not 0 <= alpha <= 2:
        raise ValueError(f"alpha: expected a number in [0, 2], got {alpha!r}")
    if not isinstance(max_len, int) or max_len < 1:
        raise ValueError(f"max_len: expected an int >= 1, got {max_len!r}")
    return _container("beam", {"corpus": corpus, "sentence": sentence, "beam-size": beam_size,
                               "top-beams": top_beams, "alpha": alpha, "max-beam": max_beam,
                               "max-len": max_len})
