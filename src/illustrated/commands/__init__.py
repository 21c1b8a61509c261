"""The commands: what a user runs from a shell, and what makes the book's files.

What it owns: :mod:`.cli` (``python -m illustrated train | translate``), :mod:`.shipped` (the
script that trains and ships the book's models, ``make models``), :mod:`.onnx_export` and
:mod:`.web_export` (the shipped models as ONNX graphs, and as the pages' safetensors and
corpora), and :mod:`.interrupt` (Ctrl-C at any moment of a command: one line, exit code 130).

What it may import: anything in the package (the Transformer and :mod:`illustrated.files`).
Nothing in the package imports a command, except ``illustrated/__init__`` (:mod:`.interrupt`)
and ``illustrated/__main__`` (:mod:`.cli`); neither imports torch before ``main`` runs.
"""
