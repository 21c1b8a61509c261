"""Compute functions behind the chapters' figures and widgets (one module per topic).

They take models, vocabularies and sentences and return plain arrays and labels for the plots in
:mod:`illustrated.plots`. Import the submodule you need, e.g. ``from illustrated.explain import
attention``.
"""
__all__: list[str] = []
