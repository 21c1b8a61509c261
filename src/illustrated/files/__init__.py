"""The machinery that keeps files safe: nothing here is the Transformer.

What it owns: every file the package writes goes through :mod:`.atomic` (one file, atomically)
or :mod:`.file_set` (several files that must agree, as one transaction); every file it reads is
checked first by :mod:`.bounded` (a regular file of bounded size, bounded JSON); :mod:`.clash`
refuses an output that is one of a command's inputs; :mod:`.checkpoint` saves and loads models
(``il.save_checkpoint``, ``il.load_checkpoint``, and the page's safetensors through
:mod:`.safetensors`); :mod:`.training_state` is the saved state of a training run, for
``--resume``.

What it may import: the standard library, NumPy and torch, and of the Transformer only what a
checkpoint describes (``config``, ``data``'s vocabularies, ``modules`` to build the model it
loads, ``schedules``' names). Never :mod:`illustrated.commands` nor the book.
"""
