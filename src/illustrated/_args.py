"""Argument checks shared by the package's public functions.

Every message reads ``"<argument>: expected <what>, got <value>"`` with the caller's own name for
the argument. A value of the wrong type raises :class:`ArgumentTypeError`, which is both a
``TypeError`` and a ``ValueError``: code written against either keeps working.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Any, Iterable

#: Largest array (in numbers) that size arguments alone may ask for: 2**25 numbers (256 MiB of
#: float64; e.g. a 65536 x 512 table, a 5792 x 5792 weight). Bigger ones are refused by name
#: instead of failing with a MemoryError deep inside, or swapping the machine to a halt.
MAX_ELEMENTS = 1 << 25

#: Largest model (in weights) ``Transformer(cfg)`` builds: 2**28, 1 GiB of float32.
MAX_WEIGHTS = 1 << 28

#: Seeds NumPy accepts: integers in [0, 2**32 - 1].
MAX_SEED = 2**32 - 1

__all__ = ["MAX_ELEMENTS", "MAX_WEIGHTS", "MAX_SEED", "check_size_limit", "ArgumentTypeError", "describe",
           "check_int", "check_real", "check_bool",
           "check_choice", "check_instance", "check_pairs"]


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type. Both a TypeError and a ValueError."""


def describe(value: Any) -> str:
    """A short description of ``value`` for an error message: a repr, or shape and dtype."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, (int, float)):
        kind = type(value).__name__
        if getattr(value, "ndim", len(tuple(shape))) == 0:
            try:
                return f"{kind} {value.item()!r} (dtype {dtype})"
            except Exception:  # noqa: BLE001 - description only
                pass
        return f"{kind} of shape {tuple(shape)}, dtype {dtype}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) \
        and type(value).__name__ != "bool_"


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high}"
    return ""


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None,
              what: str = "an integer") -> int:
    """Return ``value`` as an int if it is an integer (bool excluded) in [low, high].

    Raises ArgumentTypeError for a non-integer (floats included: 3.0 is not an id), ValueError
    when out of range.
    """
    if not _is_int(value):
        raise ArgumentTypeError(f"{name}: expected {what} "
                                f"{_range_text(low, high, False, False)}".rstrip()
                                + f", got {type(value).__name__} {describe(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name}: expected {what} {_range_text(low, high, False, False)}, "
                         f"got {value}")
    return value


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False, what: str = "a number") -> float:
    """Return ``value`` as a float if it is a finite real number (bool excluded) in the range.

    NaN and infinities are refused: ``nan < 0`` is False, so a NaN would pass any plain
    comparison. Raises ArgumentTypeError for a non-number, ValueError otherwise.
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool) \
            or type(value).__name__ == "bool_":
        raise ArgumentTypeError(f"{name}: expected {what} (a finite real number), "
                                f"got {type(value).__name__} {describe(value)}")
    value = float(value)
    rng = _range_text(low, high, low_open, high_open)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite {re.sub(r'^an? ', '', what)} {rng}".rstrip()
                         + f", got {value}")
    if low is not None and (value < low or (low_open and value == low)) \
            or high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name}: expected {what} {rng}, got {value}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is a bool (NumPy's included); ArgumentTypeError otherwise.

    Strings such as ``'yes'`` or ``'False'`` are refused: ``bool('False')`` is True.
    """
    if isinstance(value, bool) or (type(value).__module__ == "numpy"
                                   and type(value).__name__ in ("bool_", "bool")):
        return bool(value)
    raise ArgumentTypeError(f"{name}: expected True or False, got {type(value).__name__} "
                            f"{describe(value)}")


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of the strings ``choices``; ValueError otherwise."""
    choices = tuple(choices)
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name}: expected one of {choices}, got "
                                f"{type(value).__name__} {describe(value)}")
    if value not in choices:
        raise ValueError(f"{name}: expected one of {choices}, got {value!r}")
    return value


def check_size_limit(name: str, elements: int, what: str) -> None:
    """ValueError naming ``name`` if an array of ``elements`` numbers exceeds MAX_ELEMENTS."""
    if elements > MAX_ELEMENTS:
        raise ValueError(f"{name}: expected sizes giving at most {MAX_ELEMENTS} numbers, got "
                         f"{what} = {elements} numbers")


def check_instance(name: str, value: Any, cls: type | tuple[type, ...], what: str) -> Any:
    """Return ``value`` if it is an instance of ``cls``; ArgumentTypeError naming ``what``."""
    if not isinstance(value, cls):
        raise ArgumentTypeError(f"{name}: expected {what}, got {type(value).__name__} "
                                f"{describe(value)}")
    return value


def check_pairs(pairs: object) -> list:
    """``pairs`` (training or test sentence pairs) as a non-empty list; ValueError/TypeError
    naming ``pairs`` otherwise (each pair is checked where it is encoded)."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise ArgumentTypeError(f"pairs: expected a list of (source, target) sentence pairs, "
                                f"got {type(pairs).__name__} {describe(pairs)}")
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs: expected at least one (source, target) pair, got none")
    return pairs
