"""The colours a book figure draws with, and the check that they are book/palette.py's."""
import matplotlib
import numpy as np
from matplotlib.colors import to_rgb, to_rgba

from illustrated.book import palette

__all__ = ["drawn_colors", "assert_palette"]

_DECLARED = np.array([to_rgb(c) for c in palette.ALL_COLORS])
_RAMPS = np.concatenate([matplotlib.colormaps[name](np.linspace(0, 1, 256))[:, :3]
                         for name in palette.COLORMAPS.values()])


def drawn_colors(fig) -> list[tuple[str, tuple]]:
    """(what, rgb) of every colour the figure's own artists draw with: the patches, lines and
    collections its code adds to each axes (boxes, bars, cells, curves), their outlines, the texts
    written in the axes and in the figure, the axes' titles and the frames round a matrix
    (spines). Ticks and legend boxes are matplotlib's, not ours."""
    found = [(f"figure text {t.get_text()[:20]!r}", to_rgba(t.get_color())) for t in fig.texts
             if t.get_visible() and t.get_text().strip()]
    for ax in fig.axes:
        found += [("spine", to_rgba(s.get_edgecolor())) for s in ax.spines.values()
                  if s.get_visible()]
        found += [("title", to_rgba(t.get_color())) for t in (ax.title, ax._left_title,
                                                               ax._right_title)
                  if t.get_text().strip()]
        for patch in ax.patches:
            if patch.get_visible():
                found += [("patch face", to_rgba(patch.get_facecolor())),
                          ("patch edge", to_rgba(patch.get_edgecolor()))]
        for line in ax.lines:
            if line.get_visible():
                found += [("line", to_rgba(line.get_color())),
                          ("marker", to_rgba(line.get_markerfacecolor()))]
        for collection in ax.collections:
            found += [("collection", tuple(c)) for c in collection.get_facecolors()]
        for text in ax.texts:
            if text.get_visible() and text.get_text().strip():
                found.append((f"text {text.get_text()[:20]!r}", to_rgba(text.get_color())))
                box = text.get_bbox_patch()
                if box is not None:
                    found.append(("text box", to_rgba(box.get_facecolor())))
    return [(what, rgba[:3]) for what, rgba in found if rgba[3] > 0]


def assert_palette(fig) -> None:
    """Every colour the figure's own artists draw with is one of book/palette.py's, or a value
    on one of its colour maps (a heatmap cell, a faint curve)."""
    def declared(rgb):
        rgb = np.asarray(rgb)
        return (np.abs(_DECLARED - rgb).max(axis=1).min() < 2 / 255
                or np.abs(_RAMPS - rgb).max(axis=1).min() < 3 / 255)
    stray = sorted({(what, "#%02x%02x%02x" % tuple(round(255 * c) for c in rgb))
                    for what, rgb in drawn_colors(fig) if not declared(rgb)})
    assert not stray, f"colours outside book/palette.py: {stray[:6]}"
