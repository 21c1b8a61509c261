"""ipywidgets glue: each widget wires a compute function of the package to a plot function.

Every widget's default state reproduces the post's figure, so the notebook shows it in Jupyter
and Colab before a control is touched. The static pages show no ipywidget (their cells are
tagged remove-output; the site loads no widget manager): live widgets (``widgets.live``, run by
``site/js/``) or precomputed panels take their place.
"""
__all__: list[str] = []
