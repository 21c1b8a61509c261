"""Kernel-free players: precomputed frames with a slider that works in the static page.

The figure is redrawn for each frame by a drawing function the caller passes in (a plot
function of this package); nothing here computes math. The result is matplotlib's
``FuncAnimation.to_jshtml()``: HTML + JavaScript with the frames embedded, so the rendered book
needs no kernel to move the slider.
"""
from __future__ import annotations

from typing import Callable

import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation
from matplotlib.figure import Figure

__all__ = ["frames_player"]

#: Lowest resolution of a player's frames: the page shows a frame at its own pixel size (up to the
#: content width), so text of MIN_FONT_PT needs about 81 dpi to read at MIN_TEXT_PX (style.py).
PLAYER_MIN_DPI = 90


def frames_player(fig: Figure, draw_frame: Callable[[int], None], n_frames: int, *,
                  interval_ms: int = 800, default_mode: str = "once") -> str:
    """Render ``n_frames`` frames of ``fig`` into a self-contained HTML player with a slider.

    Parameters
    ----------
    fig : the Figure to animate; ``draw_frame(i)`` redraws it for frame ``i`` (0-based).
    n_frames : int >= 1.   interval_ms : milliseconds between frames when playing.
    default_mode : "once", "loop" or "reflect" (the player's initial loop mode).

    Returns
    -------
    str: HTML to show with ``IPython.display.HTML``. The figure is closed afterwards so the
    notebook does not also show it as a still image.

    Raises
    ------
    ValueError
        If ``n_frames < 1``.
    """
    if n_frames < 1:
        raise ValueError(f"n_frames: expected at least one frame, got {n_frames}")
    fig.set_dpi(max(fig.dpi, PLAYER_MIN_DPI))
    animation = FuncAnimation(fig, lambda i: draw_frame(int(i)), frames=n_frames,
                              interval=interval_ms, repeat=False)
    html = animation.to_jshtml(default_mode=default_mode)
    plt.close(fig)
    return html
