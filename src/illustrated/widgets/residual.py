"""Widget of chapter 06: post-LN or pre-LN, one layer or the whole stack, redrawn from the config.

Glue only: controls and ``interactive_output`` of a function that calls the compute function
(:func:`illustrated.explain.norms.describe_stack`) and a plot function
(:mod:`illustrated.plots.residual`). Works with ipywidgets 7.7 (Colab) and 8.

References: post "The Residuals"; paper §3.1; Xiong et al. 2020 (pre-LN).
"""
from __future__ import annotations

from dataclasses import replace

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..config import TransformerConfig
from ..explain import norms
from ..plots import residual as residual_plots

__all__ = ["VIEWS", "draw_plan", "norm_placement_widget"]

VIEWS = ("one encoder layer", "encoders and decoders")
"""What the widget can draw."""


def draw_plan(norm_first: bool, n_layers: int, view: str, cfg: TransformerConfig):
    """The widget's picture for one setting: describe the stack, then draw it.

    ``view`` is one of :data:`VIEWS`. Returns the matplotlib Figure. Used by the widget and by
    the static page's precomputed panels. Post "The Residuals"; paper §3.1.
    """
    plan = norms.describe_stack(replace(cfg, norm_first=norm_first, n_layers=n_layers))
    name = "pre-LN: x + Sublayer(LayerNorm(x))" if norm_first else \
        "post-LN: LayerNorm(x + Sublayer(x))"
    if view == VIEWS[0]:
        return residual_plots.plot_add_norm_layer(plan.encoder[0], norm_first=norm_first,
                                                  title=name)
    return residual_plots.plot_add_norm_stack(**plan._asdict(), title=name)


def _show_plan(norm_first: bool, n_layers: int, view: str, cfg: TransformerConfig) -> None:
    fig = draw_plan(norm_first, n_layers, view, cfg)
    plt.show()
    plt.close(fig)


def norm_placement_widget(cfg: TransformerConfig, *, view: str = VIEWS[1],
                          max_layers: int = 4) -> widgets.VBox:
    """A switch between post-LN and pre-LN, a layer count and a view; the diagram is redrawn.

    The default state draws the post's picture: post-LN, ``cfg.n_layers`` encoders and
    decoders with every residual and norm.

    Parameters
    ----------
    cfg : TransformerConfig
        The starting configuration (its ``norm_first`` and ``n_layers`` are the defaults).
    view : str, default "encoders and decoders"
        One of :data:`VIEWS`.
    max_layers : int, default 4
        Largest value of the layer slider.

    Returns
    -------
    ipywidgets.VBox
        The controls above the diagram.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``cfg`` is not a TransformerConfig, ``view`` is unknown, or ``cfg.n_layers`` is not
        in [1, max_layers].

    References
    ----------
    Post "The Residuals"; paper §3.1; Xiong et al. 2020, "On Layer Normalization in the
    Transformer Architecture".
    """
    if not isinstance(cfg, TransformerConfig):
        raise ValueError(f"cfg: expected a TransformerConfig, got {type(cfg).__name__}")
    if view not in VIEWS:
        raise ValueError(f"view: expected one of {VIEWS}, got {view!r}")
    if not isinstance(max_layers, int) or not 1 <= cfg.n_layers <= max_layers:
        raise ValueError(f"cfg: expected n_layers in [1, max_layers={max_layers!r}], "
                         f"got {cfg.n_layers}")
    placement = widgets.ToggleButtons(options=[("post-LN (paper, post)", False),
                                               ("pre-LN (modern code)", True)],
                                      value=cfg.norm_first, description="norm")
    layers = widgets.IntSlider(value=cfg.n_layers, min=1, max=max_layers, step=1,
                               description="n_layers", continuous_update=False)
    views = widgets.Dropdown(options=list(VIEWS), value=view, description="draw")
    out = widgets.interactive_output(_show_plan, {"norm_first": placement, "n_layers": layers,
                                                  "view": views, "cfg": widgets.fixed(cfg)})
    return widgets.VBox([placement, widgets.HBox([layers, views]), out])
