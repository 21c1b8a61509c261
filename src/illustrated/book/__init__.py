"""The book's code, one module per chapter (``ch01`` ... ``ch10``), over a small figure kit
(:mod:`.kit`) and one way to make an interactive figure (:mod:`.interactive`)."""
