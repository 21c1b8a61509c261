"""ipywidgets glue: each widget wires a compute function of the package to a plot function.

Every widget's default state reproduces the post's figure, so the executed notebook (whose
widget state is saved) shows it in the static page too.
"""
__all__: list[str] = []
