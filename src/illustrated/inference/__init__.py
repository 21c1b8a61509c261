"""Using a trained Transformer: decoding (greedy and beam search, ``decoding``), translating and
scoring sentences (``translate``), and tracing every intermediate of one sentence (``tracing``).
Submodules are imported on first use."""
from importlib import import_module

__all__ = ["decoding", "tracing", "translate"]


def __getattr__(name: str):
    if name in __all__:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
