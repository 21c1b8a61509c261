"""Questions a reader answers in the page: an exercise checked there (a number or a choice), and a
prediction made before an experiment and read back after it. Each is HTML checked by
site/js/widgets/quiz.js; its solution is a dropdown, open to a reader without JavaScript too.
"""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

from IPython.display import HTML

__all__ = ["question", "predict"]


def _slug(name: str) -> str:
    if not re.fullmatch(r"[a-z0-9-]+", name):
        raise ValueError(f"name: expected lowercase letters, digits and '-', got {name!r}")
    return f"quiz-{name}"


def _choices(slug: str, choices: Sequence[str]) -> str:
    return "".join(f'<label class="il-quiz-choice"><input type="radio" name="{slug}" value="{i}">'
                   f" {html.escape(c)}</label>" for i, c in enumerate(choices))


def question(name: str, text: str, *, answer, solution: str,
             choices: Sequence[str] | None = None, tolerance: float = 0.0) -> HTML:
    """An exercise answered in the page: ``answer`` is the index of the right one of
    ``choices``, or (without choices) a number, right within ``tolerance``; ``solution`` (HTML)
    is one click away."""
    slug = _slug(name)
    if choices is None:
        field = (f'<label class="il-quiz-number">Your answer <input type="text" '
                 f'inputmode="decimal" autocomplete="off" name="{slug}"></label>')
        data = f'data-answer="{float(answer)!r}" data-tolerance="{float(tolerance)!r}"'
    else:
        if not 0 <= answer < len(choices):
            raise ValueError(f"answer: expected an index of the {len(choices)} choices, "
                             f"got {answer!r}")
        field, data = _choices(slug, choices), f'data-answer="{int(answer)}"'
    return HTML(
        f'<div class="il-quiz" id="{slug}" data-il-quiz="question" {data}>'
        f'<fieldset><legend>{text}</legend>{field}</fieldset>'
        f'<button type="button" class="il-quiz-check">Check</button>'
        f'<p class="il-quiz-result" role="status" aria-live="polite"></p>'
        f'<details class="il-quiz-solution"><summary>Solution</summary>{solution}</details></div>')


def predict(name: str, text: str, *, choices: Sequence[str], answer: int, outcome: str,
            runs: Sequence[str] = ()) -> HTML:
    """A prediction asked before an experiment: the reader picks one of ``choices``; after the
    experiment (when every run named in ``runs`` has ended in the page's trainer, or when the
    reader asks, if ``runs`` is empty) the page reads ``outcome`` (HTML) back against the
    choice (``answer``: the index of the choice the experiment bears out)."""
    slug = _slug(name)
    if not 0 <= answer < len(choices):
        raise ValueError(f"answer: expected an index of the {len(choices)} choices, got {answer!r}")
    runs_attr = html.escape("|".join(runs))
    return HTML(
        f'<div class="il-quiz il-predict" id="{slug}" data-il-quiz="predict" '
        f'data-answer="{int(answer)}" data-runs="{runs_attr}">'
        f'<fieldset><legend><strong>Predict first.</strong> {text}</legend>'
        f'{_choices(slug, choices)}</fieldset>'
        f'<button type="button" class="il-quiz-check">Lock in my prediction</button>'
        f'<p class="il-quiz-result" role="status" aria-live="polite"></p>'
        f'<details class="il-quiz-solution"><summary>What the experiment shows</summary>'
        f'{outcome}</details></div>')
