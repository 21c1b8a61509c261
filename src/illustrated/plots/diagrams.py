"""Block diagrams of the Transformer drawn from its sizes: the black box, the stacks, the layers.

Every function takes plain numbers and strings (``cfg.n_layers``, a sentence and its
translation) and returns a matplotlib Figure built from patches and arrows. Nothing here
computes math or imports torch. Each artist carries a ``gid`` naming what it stands for
(``"encoder-0"``, ``"memory-arrow-2"``, ...), so tests and readers can find it.

References: post "A High-Level Look" (its first five figures); paper §3.1 and Figure 1.
"""
from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from .primitives import box, canvas
from .style import COLORS, MIN_FONT_PT

__all__ = ["MAX_DRAWN_LAYERS", "black_box", "encoders_decoders", "encoder_decoder_stack",
           "encoder_diagram", "decoder_diagram"]

MAX_DRAWN_LAYERS = 12
"""The tallest stack :func:`encoder_decoder_stack` draws; beyond it the boxes become unreadable."""

_INK = COLORS["text"]
_MUTED = "#78909c"


def _canvas(fig: Figure | None, figsize: tuple[float, float], xlim: tuple[float, float],
            ylim: tuple[float, float]) -> tuple[Figure, Axes]:
    """A figure with one frameless axes spanning it below a title band, limits ``xlim`` x ``ylim``."""
    return canvas(fig, figsize, rect=(0.0, 0.0, 1.0, 0.92), xlim=xlim, ylim=ylim)

def _box(ax: Axes, x: float, y: float, w: float, h: float, text: str, color: str, *,
         gid: str, fontsize: float = 11, subtitle: str = "", dashed: bool = False,
         alpha: float = 1.0) -> FancyBboxPatch:
    """A rounded box with a bold label (and an optional smaller line under it)."""
    return box(ax, x, y, w, h, text, color, gid=gid, fontsize=fontsize, subtitle=subtitle,
               dashed=dashed, alpha=alpha, rounding=0.12, linewidth=1.2)

def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], *, gid: str,
           color: str = _INK) -> FancyArrowPatch:
    """A straight arrow from ``start`` to ``end`` (data coordinates)."""
    arrow = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=13, color=color,
                            linewidth=1.4, shrinkA=0, shrinkB=0, gid=gid)
    ax.add_patch(arrow)
    return arrow


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a str, got {type(value).__name__} {value!r}")
    return value


def _check_size(name: str, value: object, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}: expected a positive int{' or None' if allow_none else ''}, "
                         f"got {value!r}")
    return value


def _title(ax: Axes, title: str) -> None:
    if title:
        ax.set_title(title, fontsize=12, color=_INK)


def black_box(source: str, target: str, *, title: str = "", fig: Figure | None = None) -> Figure:
    """The model as a single black box: a sentence in one language goes in, its translation comes out.

    Parameters
    ----------
    source : str
        The input sentence, as given to the model.
    target : str
        The model's output for it.
    title : str, optional
        Axes title.
    fig : Figure, optional
        A figure to clear and redraw into (for players); a new one by default.

    Returns
    -------
    Figure
        One axes; texts ``source`` (gid ``"source"``), ``target`` (gid ``"target"``) and the
        box label "THE TRANSFORMER" (gid ``"transformer-label"``).

    Shapes
    ------
    Not applicable (strings).

    Raises
    ------
    ValueError
        If ``source`` or ``target`` is not a str.

    References
    ----------
    Post "A High-Level Look" (first figure); paper §1 (translation as the task).
    """
    source, target = _check_text("source", source), _check_text("target", target)
    fig, ax = _canvas(fig, (8.0, 2.0), (0, 17), (0, 4))
    _box(ax, 6.0, 0.8, 5.0, 2.4, "THE TRANSFORMER", COLORS["attention"], gid="transformer",
         fontsize=13)
    _arrow(ax, (4.6, 2.0), (6.0, 2.0), gid="input-arrow")
    _arrow(ax, (11.0, 2.0), (12.4, 2.0), gid="output-arrow")
    ax.text(4.4, 2.0, source, ha="right", va="center", fontsize=13, color=_INK, gid="source")
    ax.text(12.6, 2.0, target, ha="left", va="center", fontsize=13, color=_INK, gid="target")
    ax.text(4.4, 1.3, "input", ha="right", va="center", fontsize=9, color=_MUTED)
    ax.text(12.6, 1.3, "output", ha="left", va="center", fontsize=9, color=_MUTED)
    _title(ax, title)
    return fig


def encoders_decoders(source: str, target: str, *, n_layers: int | None = None,
                      title: str = "", fig: Figure | None = None) -> Figure:
    """The opened box: an encoding component, a decoding component, and a connection between them.

    Parameters
    ----------
    source, target : str
        Input sentence and output sentence, written under and over the components.
    n_layers : int, optional
        When given, each component's box says how many layers it stacks (``cfg.n_layers``).
    title : str, optional
        Axes title.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes with the patches ``"transformer"`` (dashed outline), ``"encoders"``,
        ``"decoders"`` and the arrow ``"memory-arrow"`` from the first to the second.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``source``/``target`` are not str or ``n_layers`` is not a positive int.

    References
    ----------
    Post "A High-Level Look" (second figure); paper §3 and Figure 1.
    """
    source, target = _check_text("source", source), _check_text("target", target)
    n_layers = _check_size("n_layers", n_layers)
    fig, ax = _canvas(fig, (7.5, 4.6), (0, 12), (0, 7.4))
    _box(ax, 0.5, 1.3, 11.0, 4.7, "", "none", gid="transformer", dashed=True)
    ax.text(0.75, 5.7, "THE TRANSFORMER", ha="left", va="center", fontsize=10,
            fontweight="bold", color=_MUTED, gid="transformer-label")
    subtitle = "" if n_layers is None else f"a stack of {n_layers}"
    _box(ax, 1.4, 2.7, 3.9, 1.7, "ENCODERS", COLORS["encoder"], gid="encoders",
         subtitle=subtitle)
    _box(ax, 6.7, 2.7, 3.9, 1.7, "DECODERS", COLORS["decoder"], gid="decoders",
         subtitle=subtitle)
    _arrow(ax, (5.3, 3.55), (6.7, 3.55), gid="memory-arrow")
    _arrow(ax, (3.35, 0.85), (3.35, 2.7), gid="input-arrow")
    _arrow(ax, (8.65, 4.4), (8.65, 6.55), gid="output-arrow")
    ax.text(3.35, 0.5, source, ha="center", va="center", fontsize=12, color=_INK, gid="source")
    ax.text(8.65, 6.95, target, ha="center", va="center", fontsize=12, color=_INK, gid="target")
    _title(ax, title)
    return fig


def encoder_decoder_stack(n_layers: int, *, source: str = "", target: str = "",
                          title: str = "", fig: Figure | None = None) -> Figure:
    """A stack of ``n_layers`` encoders and one of ``n_layers`` decoders; the last encoder feeds
    every decoder.

    Parameters
    ----------
    n_layers : int
        Number of encoders, and of decoders (``cfg.n_layers``; the paper's 6), 1 to
        :data:`MAX_DRAWN_LAYERS`.
    source, target : str, optional
        Input under the encoder stack, output over the decoder stack.
    title : str, optional
        Axes title.
    fig : Figure, optional
        A figure to clear and redraw into (the n_layers player uses this); new by default.

    Returns
    -------
    Figure
        One axes with patches ``"encoder-i"`` and ``"decoder-i"`` (i = 0 at the bottom),
        arrows ``"encoder-arrow-i"``/``"decoder-arrow-i"`` from layer i to i + 1, and
        ``"memory-arrow-j"`` from the top encoder's output (the line ``"memory-bus"``) into
        decoder j, for every j.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If ``n_layers`` is not an int in [1, MAX_DRAWN_LAYERS], or a text is not a str.

    References
    ----------
    Post "A High-Level Look" (third figure; "the paper stacks six of them"); paper §3.1
    ("a stack of N = 6 identical layers").
    """
    n_layers = _check_size("n_layers", n_layers, allow_none=False)
    if n_layers > MAX_DRAWN_LAYERS:
        raise ValueError(f"n_layers: expected at most {MAX_DRAWN_LAYERS} layers to draw, "
                         f"got {n_layers}")
    source, target = _check_text("source", source), _check_text("target", target)
    fig, ax = _canvas(fig, (6.6, 5.6), (0, 12), (0, 10.4))
    bottom, top = 1.3, 8.9
    slot = (top - bottom) / n_layers
    h = slot * 0.64
    fontsize = max(MIN_FONT_PT, min(11.0, 4.0 + 40.0 / (n_layers + 3)))
    enc_x, dec_x, w = 0.9, 7.3, 3.8
    centers = []
    for i in range(n_layers):
        y = bottom + i * slot + (slot - h) / 2
        centers.append(y + h / 2)
        _box(ax, enc_x, y, w, h, f"ENCODER #{i + 1}", COLORS["encoder"], gid=f"encoder-{i}",
             fontsize=fontsize)
        _box(ax, dec_x, y, w, h, f"DECODER #{i + 1}", COLORS["decoder"], gid=f"decoder-{i}",
             fontsize=fontsize)
        if i > 0:
            y_prev_top = centers[i - 1] + h / 2
            _arrow(ax, (enc_x + w / 2, y_prev_top), (enc_x + w / 2, y),
                   gid=f"encoder-arrow-{i - 1}")
            _arrow(ax, (dec_x + w / 2, y_prev_top), (dec_x + w / 2, y),
                   gid=f"decoder-arrow-{i - 1}")
    # The top encoder's output runs along a bus that branches into every decoder.
    bus_x = (enc_x + w + dec_x) / 2
    ax.add_line(Line2D([enc_x + w, bus_x, bus_x], [centers[-1], centers[-1], centers[0]],
                       color=COLORS["key"], linewidth=2.0, gid="memory-bus"))
    for j, c in enumerate(centers):
        _arrow(ax, (bus_x, c), (dec_x, c), gid=f"memory-arrow-{j}", color=COLORS["key"])
    first_y = centers[0] - h / 2
    _arrow(ax, (enc_x + w / 2, 0.75), (enc_x + w / 2, first_y), gid="input-arrow")
    _arrow(ax, (dec_x + w / 2, centers[-1] + h / 2), (dec_x + w / 2, 9.6), gid="output-arrow")
    ax.text(enc_x + w / 2, 0.4, source, ha="center", va="center", fontsize=12, color=_INK,
            gid="source")
    ax.text(dec_x + w / 2, 9.95, target, ha="center", va="center", fontsize=12, color=_INK,
            gid="target")
    _title(ax, title)
    return fig


def _layer_frame(ax: Axes, name: str, color: str, x: float, y: float, w: float,
                 h: float) -> None:
    _box(ax, x, y, w, h, "", color, gid=name.lower(), alpha=0.35)
    ax.text(x + 0.2, y + h - 0.35, name, ha="left", va="center", fontsize=11,
            fontweight="bold", color=_INK, gid=f"{name.lower()}-label")


def encoder_diagram(*, d_model: int | None = None, n_heads: int | None = None,
                    d_ff: int | None = None, title: str = "",
                    fig: Figure | None = None) -> Figure:
    """Inside an encoder: the inputs flow through a self-attention layer, then a feed-forward network.

    Parameters
    ----------
    d_model, n_heads, d_ff : int, optional
        Sizes from a TransformerConfig; when given they are written under the sub-layers.
    title : str, optional
        Axes title.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes with patches ``"encoder"`` (the frame), ``"self-attention"`` and
        ``"feed-forward"``, and arrows ``"input-arrow"``, ``"inner-arrow-0"``,
        ``"output-arrow"`` from bottom to top.

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If a size is given and is not a positive int.

    References
    ----------
    Post "A High-Level Look" (fourth figure); paper §3.1 (encoder: two sub-layers).
    """
    d_model, n_heads, d_ff = (_check_size("d_model", d_model), _check_size("n_heads", n_heads),
                              _check_size("d_ff", d_ff))
    fig, ax = _canvas(fig, (4.8, 4.8), (0, 8), (0, 8.3))
    _layer_frame(ax, "ENCODER", COLORS["encoder"], 0.8, 1.1, 6.4, 5.9)
    attn_sub = ", ".join(s for s in (f"{n_heads} heads" if n_heads else "",
                                     f"d_model = {d_model}" if d_model else "") if s)
    ffn_sub = f"{d_model} → {d_ff} → {d_model}" if d_model and d_ff else ""
    _box(ax, 1.6, 2.0, 4.8, 1.3, "Self-Attention", COLORS["attention"], gid="self-attention",
         subtitle=attn_sub)
    _box(ax, 1.6, 4.4, 4.8, 1.3, "Feed Forward", COLORS["ffn"], gid="feed-forward",
         subtitle=ffn_sub)
    _arrow(ax, (4.0, 0.3), (4.0, 2.0), gid="input-arrow")
    _arrow(ax, (4.0, 3.3), (4.0, 4.4), gid="inner-arrow-0")
    _arrow(ax, (4.0, 5.7), (4.0, 7.9), gid="output-arrow")
    ax.text(4.2, 0.55, "vectors in", ha="left", va="center", fontsize=9, color=_MUTED)
    ax.text(4.2, 7.55, "vectors out", ha="left", va="center", fontsize=9, color=_MUTED)
    _title(ax, title)
    return fig


def decoder_diagram(*, d_model: int | None = None, n_heads: int | None = None,
                    d_ff: int | None = None, title: str = "",
                    fig: Figure | None = None) -> Figure:
    """Inside a decoder: self-attention, then encoder-decoder attention, then a feed-forward network.

    Parameters
    ----------
    d_model, n_heads, d_ff : int, optional
        Sizes from a TransformerConfig; when given they are written under the sub-layers.
    title : str, optional
        Axes title.
    fig : Figure, optional
        A figure to clear and redraw into; a new one by default.

    Returns
    -------
    Figure
        One axes with patches ``"decoder"`` (the frame), ``"self-attention"``,
        ``"encoder-decoder-attention"`` and ``"feed-forward"``; arrows ``"input-arrow"``,
        ``"inner-arrow-0"``, ``"inner-arrow-1"``, ``"output-arrow"`` and ``"memory-arrow"``
        (the encoder stack's output entering the encoder-decoder attention from the side).

    Shapes
    ------
    Not applicable.

    Raises
    ------
    ValueError
        If a size is given and is not a positive int.

    References
    ----------
    Post "A High-Level Look" (fifth figure) and "The Decoder Side"; paper §3.1 (decoder: a third
    sub-layer attends over the encoder's output) and §3.2.3.
    """
    d_model, n_heads, d_ff = (_check_size("d_model", d_model), _check_size("n_heads", n_heads),
                              _check_size("d_ff", d_ff))
    fig, ax = _canvas(fig, (6.0, 6.0), (0, 10), (0, 10.6))
    _layer_frame(ax, "DECODER", COLORS["decoder"], 0.8, 1.1, 6.4, 8.2)
    heads = f"{n_heads} heads" if n_heads else ""
    ffn_sub = f"{d_model} → {d_ff} → {d_model}" if d_model and d_ff else ""
    _box(ax, 1.6, 2.0, 4.8, 1.3, "Self-Attention", COLORS["attention"], gid="self-attention",
         subtitle=", ".join(s for s in ("masked: earlier positions only", heads) if s))
    _box(ax, 1.6, 4.4, 4.8, 1.3, "Encoder-Decoder Attention", COLORS["attention"],
         gid="encoder-decoder-attention", subtitle=heads, fontsize=10.5)
    _box(ax, 1.6, 6.8, 4.8, 1.3, "Feed Forward", COLORS["ffn"], gid="feed-forward",
         subtitle=ffn_sub)
    _arrow(ax, (4.0, 0.3), (4.0, 2.0), gid="input-arrow")
    _arrow(ax, (4.0, 3.3), (4.0, 4.4), gid="inner-arrow-0")
    _arrow(ax, (4.0, 5.7), (4.0, 6.8), gid="inner-arrow-1")
    _arrow(ax, (4.0, 8.1), (4.0, 10.2), gid="output-arrow")
    _arrow(ax, (9.4, 5.05), (6.4, 5.05), gid="memory-arrow", color=COLORS["key"])
    ax.text(8.0, 5.75, "from the top\nencoder", ha="center", va="center", fontsize=9,
            color=_INK)
    ax.text(8.0, 4.45, "(keys, values)", ha="center", va="center", fontsize=8, color=_MUTED)
    ax.text(4.2, 0.55, "vectors in", ha="left", va="center", fontsize=9, color=_MUTED)
    ax.text(4.2, 9.85, "vectors out", ha="left", va="center", fontsize=9, color=_MUTED)
    _title(ax, title)
    return fig
