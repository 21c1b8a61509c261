"""Training the Transformer: the loop (``loop``), its learning-rate schedules and the "it"
objective, and the faster steps that are its clients (a compiled step, a CUDA-graphed step,
several processes). Submodules are imported on first use, so ``illustrated.recipe`` can read
the schedules' names without importing torch."""
from importlib import import_module

__all__ = ["captured_step", "distributed", "graphed_step", "loop", "referent", "schedules"]


def __getattr__(name: str):
    if name in __all__:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
