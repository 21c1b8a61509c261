"""Widget of chapter 05: the positional table for any number of positions, width and layout.

Glue only: controls and ``interactive_output`` of a function that calls the compute function
(:func:`illustrated.reference.positional_encoding`) and the plot function
(:func:`illustrated.plots.positional.plot_positional_heatmap`). Works with ipywidgets 7.7
(Colab) and 8.

References: post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
"""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt

from .. import reference
from ..plots import positional as positional_plots

__all__ = ["positional_encoding_widget"]


def _show_table(n_positions: int, d_model: int, layout: str) -> None:
    pe = reference.positional_encoding(n_positions, d_model, layout)
    fig = positional_plots.plot_positional_heatmap(
        pe, split=layout == "concatenated",
        title=f"{n_positions} positions x d_model = {d_model}, {layout} layout")
    plt.show()
    plt.close(fig)


def positional_encoding_widget(n_positions: int = 20, d_model: int = 512,
                               layout: str = "concatenated", *, max_positions: int = 200,
                               max_d_model: int = 1024) -> widgets.VBox:
    """Sliders for the number of positions and d_model, a menu for the layout; the table follows.

    The defaults draw the post's figure: 20 positions, 512 dimensions, sines then cosines.

    Parameters
    ----------
    n_positions : int, default 20
        Starting number of rows.
    d_model : int, default 512
        Starting width (even).
    layout : {"concatenated", "interleaved"}, default "concatenated"
        Starting layout: the post's (tensor2tensor) or the paper's.
    max_positions, max_d_model : int
        Largest values of the sliders.

    Returns
    -------
    ipywidgets.VBox
        The controls above the heatmap.

    Shapes
    ------
    The drawn table is (n_positions, d_model).

    Raises
    ------
    ValueError
        If a starting value is outside its slider's range, ``d_model`` is odd or ``layout`` is
        unknown.

    References
    ----------
    Post "Representing The Order of The Sequence Using Positional Encoding"; paper §3.5.
    """
    if layout not in reference.LAYOUTS:
        raise ValueError(f"layout: expected one of {reference.LAYOUTS}, got {layout!r}")
    if not isinstance(n_positions, int) or not 1 <= n_positions <= max_positions:
        raise ValueError(f"n_positions: expected an int in [1, {max_positions}], "
                         f"got {n_positions!r}")
    if not isinstance(d_model, int) or d_model % 2 or not 2 <= d_model <= max_d_model:
        raise ValueError(f"d_model: expected an even int in [2, {max_d_model}], got {d_model!r}")
    positions = widgets.IntSlider(value=n_positions, min=1, max=max_positions, step=1,
                                  description="positions", continuous_update=False)
    width = widgets.IntSlider(value=d_model, min=2, max=max_d_model, step=2,
                              description="d_model", continuous_update=False)
    layouts = widgets.Dropdown(options=list(reference.LAYOUTS)[::-1], value=layout,
                               description="layout")
    out = widgets.interactive_output(_show_table, {"n_positions": positions, "d_model": width,
                                                   "layout": layouts})
    return widgets.VBox([widgets.HBox([positions, width, layouts]), out])
