"""Text and HTML tables of the chapters' computed results (formatting only, no torch, no math).

The compute functions of :mod:`illustrated.explain` return named tuples; the functions here turn
lists of them into aligned text or a table, and :mod:`illustrated.explain` re-exports them under
the names the chapters call (``tensors.format_parameter_table``, ``beam.format_step_table``, ...).
"""
from __future__ import annotations

import html
from typing import Sequence

__all__ = ["format_parameter_table", "format_step_rows", "format_decoder_table",
           "format_translation_table"]


def format_parameter_table(rows: Sequence) -> str:
    """The parameter table as aligned text, one row per component plus the total.

    Parameters
    ----------
    rows : sequence of ParameterRow
        From ``explain.tensors.parameter_counts`` or ``config_parameter_counts`` (fields
        component, part, per_copy, copies, total).

    Returns
    -------
    str
        Columns component, part, per copy, copies, total; a last line with the sum.

    Raises
    ------
    ValueError
        If ``rows`` is empty.

    References
    ----------
    Post "A High-Level Look".
    """
    if not rows:
        raise ValueError("rows: expected at least one ParameterRow, got none")
    header = ("component", "part", "per copy", "copies", "total")
    lines = [(r.component, r.part, f"{r.per_copy:,}", str(r.copies), f"{r.total:,}") for r in rows]
    lines.append(("all", "", "", "", f"{sum(r.total for r in rows):,}"))
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(5)]

    def fmt(line: tuple[str, ...]) -> str:
        left = [line[i].ljust(widths[i]) for i in range(2)]
        right = [line[i].rjust(widths[i]) for i in range(2, 5)]
        return "  ".join(left + right).rstrip()

    rule = "-" * len(fmt(header))
    return "\n".join([fmt(header), rule, *map(fmt, lines[:-1]), rule, fmt(lines[-1])])


def format_step_rows(step: int, rows: Sequence[tuple[str, float, str]], decimals: int = 2) -> str:
    """Text table of one beam-search step: rank, hypothesis, cumulative log-prob, status.

    Parameters
    ----------
    step : the step number printed first.
    rows : (words, log_prob, status) per candidate, best first (``explain.beam.step_table``).
    decimals : int >= 0, digits of the log-probabilities.

    Raises
    ------
    ValueError
        If ``decimals`` is not an int >= 0.
    """
    if not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals: expected an int >= 0, got {decimals!r}")
    width = max(len("hypothesis"), *(len(words) for words, _, _ in rows))
    lines = [f"step {step}", f"{'#':>2}  {'hypothesis':<{width}}  {'log-prob':>9}  status"]
    for rank, (words, log_prob, status) in enumerate(rows, 1):
        lines.append(f"{rank:>2}  {words:<{width}}  {log_prob:>9.{decimals}f}  {status}")
    return "\n".join(lines)


def format_decoder_table(rows: Sequence, *, n_sentences: int | None = None) -> str:
    """Text table of ``explain.beam.compare_decoders``: decoder, exact match (%), median
    milliseconds per sentence."""
    head = f"{'decoder':<8}  {'exact match':>11}  {'ms / sentence (median)':>22}"
    lines = [head] + [f"{r.name:<8}  {100 * r.exact_match:>10.1f}%  "
                      f"{1000 * r.seconds_per_sentence:>22.1f}" for r in rows]
    if n_sentences is not None:
        lines.append(f"({n_sentences} test sentences)")
    return "\n".join(lines)


def format_translation_table(rows: Sequence, *, limit: int | None = None,
                             beam_size: int | None = None, fmt: str = "markdown") -> str:
    """A table of translations: source, reference, greedy, beam, each marked right or wrong.

    Parameters
    ----------
    rows : TranslationRow list (``explain.playground.translation_rows``).
    limit : show at most this many rows (default all).
    beam_size : named in the beam column's header when given.
    fmt : "markdown" (for ``IPython.display.Markdown`` in a notebook cell) or "html" (for an
        ``ipywidgets.Output``, whose static-page renderer shows no Markdown).

    Returns
    -------
    str: a header, then one line (Markdown) or one ``<tr>`` (HTML) per row; ✓ marks an exact
    match, ✗ a miss. HTML text is escaped.

    Raises
    ------
    ValueError
        If ``limit`` is negative or ``fmt`` is not "markdown" or "html".
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit: expected None or an int >= 0, got {limit!r}")
    if fmt not in ("markdown", "html"):
        raise ValueError(f"fmt: expected 'markdown' or 'html', got {fmt!r}")
    header = ["source", "reference", "greedy", f"beam {beam_size}" if beam_size else "beam"]
    body = [[row.source, row.target, f"{'✓' if row.greedy_ok else '✗'} {row.greedy}",
             f"{'✓' if row.beam_ok else '✗'} {row.beam}"] for row in list(rows)[:limit]]
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |", "|---|---|---|---|"]
        return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in body])

    def tr(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"
    return ('<table border="1" class="dataframe">\n<thead>' + tr(header, "th") + "</thead>\n<tbody>\n"
            + "\n".join(tr(cells, "td") for cells in body) + "\n</tbody>\n</table>")
