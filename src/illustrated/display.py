"""Showing the package's own code and labelled matrices in a chapter."""
from __future__ import annotations

import inspect

import numpy as np

__all__ = ["show_source", "show_matrix", "format_matrix"]


def show_source(obj) -> None:
    """Display the source code of a function, class or module, syntax-highlighted in a notebook.

    The chapters show the package's code this way instead of copying it, so the page always shows
    the code that computed its numbers.
    """
    source = inspect.getsource(obj)
    try:
        from IPython.display import Markdown, display
    except ImportError:  # plain Python: print it
        print(source)
        return
    display(Markdown(f"```python\n{source}\n```"))


def format_matrix(name: str, array, decimals: int = 4, labels: list[str] | None = None) -> str:
    """Text of a labelled matrix: its name, its shape and its values.

    Parameters
    ----------
    name : label printed first (e.g. "Q = X @ W_Q").
    array : array-like of 0, 1 or 2 dimensions (a torch tensor works too).
    decimals : digits after the point.   labels : optional row labels (e.g. words).

    Raises
    ------
    ValueError
        If ``array`` has more than 2 dimensions or ``labels`` does not match its rows.
    """
    a = np.asarray(array.detach().cpu() if hasattr(array, "detach") else array, dtype=np.float64)
    if a.ndim > 2:
        raise ValueError(f"array: expected at most 2 dimensions, got shape {a.shape}")
    rows = np.atleast_2d(a)
    if labels is not None and len(labels) != rows.shape[0]:
        raise ValueError(f"labels: expected {rows.shape[0]} row labels, got {len(labels)}")
    body = np.array2string(rows, precision=decimals, suppress_small=True, floatmode="maxprec",
                           max_line_width=120).splitlines()
    if labels is not None:
        width = max(len(label) for label in labels)
        body = [f"{label:>{width}} {line}" for label, line in zip(labels, body)]
    return f"{name}  shape {a.shape}\n" + "\n".join(body)


def show_matrix(name: str, array, decimals: int = 4, labels: list[str] | None = None) -> None:
    """Print a labelled matrix (see :func:`format_matrix`)."""
    print(format_matrix(name, array, decimals, labels))
