"""Matplotlib drawings: arrays and labels in, Figure out. Nothing here computes math or imports torch."""
from .player import frames_player
from .training import plot_training_curves
from .style import CMAP, COLORS, DIVERGING_CMAP

__all__ = ["CMAP", "COLORS", "DIVERGING_CMAP", "frames_player", "plot_training_curves"]
