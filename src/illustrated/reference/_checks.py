"""Input checks shared by the reference functions: a clear ValueError instead of a NumPy traceback.

Every message starts with the argument's name, then says what was expected and what came in,
e.g. ``W_Q: expected shape (4, d_k) to match X's d_model=4, got (3, 2)``.
"""
from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "NonFiniteError",
    "Overflow",
    "as_float_array",
    "check_axis",
    "finite_result",
    "as_int_array",
    "check_bias",
    "check_matrix",
    "check_mask",
    "check_min_ndim",
    "check_n_heads",
    "check_param_shapes",
    "check_params",
    "check_positive_int",
]


class NonFiniteError(ValueError):
    """NaN or +inf reached a softmax (raised by it; :func:`finite_result` renames it)."""


class Overflow(ValueError):
    """Finite inputs whose computation overflowed float64 (the message names the inputs)."""


def as_float_array(name: str, x: object, finite: bool = True) -> np.ndarray:
    """Return ``x`` as a float64 array; ValueError if it holds something that is not a number.

    With ``finite`` (the default) NaN and infinities are refused too, naming ``name``.
    """
    if isinstance(x, (str, bytes)) or (isinstance(x, np.ndarray) and x.dtype.kind in "bUSOc"):
        kind = "a bool array" if isinstance(x, np.ndarray) and x.dtype == bool \
            else f"{type(x).__name__}" + (f" of dtype {x.dtype}" if hasattr(x, "dtype") else "")
        raise ValueError(f"{name}: expected an array of real numbers, got {kind}")
    if isinstance(x, bool):
        raise ValueError(f"{name}: expected an array of real numbers, got the bool {x!r}")
    try:
        array = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{name}: expected an array of real numbers, got {type(x).__name__} "
                         f"({error})") from None
    if finite and not np.isfinite(array).all():
        raise ValueError(f"{name}: expected finite numbers, got NaN or infinity")
    return array


def check_axis(name: str, axis: object, ndim: int) -> int:
    """Return ``axis`` if it is an int in [-ndim, ndim); ValueError naming ``name`` otherwise."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise ValueError(f"{name}: expected an integer axis, got {type(axis).__name__} {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: expected an axis in [{-ndim}, {ndim - 1}] for an array with "
                         f"{ndim} dimensions, got {axis}")
    return int(axis)


def finite_result(*names: str):
    """Decorator: a function of finite inputs must not return NaN or infinity.

    Inputs are checked finite on the way in; when the arithmetic itself overflows float64
    (e.g. entries near 1e200 multiplied together), the caller gets one ValueError naming the
    arguments ``names`` instead of NaN, an infinity or a softmax error about an inner ``x``.
    """
    def decorate(function):
        @functools.wraps(function)
        def checked(*args, **kwargs):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                try:
                    result = function(*args, **kwargs)
                except (NonFiniteError, Overflow):
                    result = None
            arrays = result if isinstance(result, tuple) else (result,)
            if result is None or not all(np.isfinite(a).all() for a in _arrays(arrays)):
                raise Overflow(f"{', '.join(names)}: values too large: "
                               f"{function.__name__} overflowed float64 (got NaN or infinity "
                               f"from finite input); scale the inputs down") from None
            return result
        return checked
    return decorate


def _arrays(items):
    for item in items:
        if isinstance(item, tuple):
            yield from _arrays(item)
        elif isinstance(item, np.ndarray) or isinstance(item, (float, np.floating)):
            yield item


def as_int_array(name: str, x: object) -> np.ndarray:
    """Return ``x`` as an integer array; ValueError for floats, bools or anything else."""
    array = np.asarray(x)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name}: expected integer ids, got dtype {array.dtype}")
    return array


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int >= 1 (bool excluded); ValueError otherwise."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def check_min_ndim(name: str, x: np.ndarray, ndim: int, layout: str) -> None:
    """ValueError unless ``x`` has at least ``ndim`` dimensions; ``layout`` names them."""
    if x.ndim < ndim:
        raise ValueError(f"{name}: expected shape {layout}, got {x.shape}")


def check_matrix(name: str, W: np.ndarray, rows: int, cols: int | None, reason: str,
                 layout: str) -> None:
    """ValueError unless ``W`` is 2-D with ``rows`` rows (and ``cols`` columns when given).

    ``layout`` is the expected shape in words, e.g. ``"(4, d_k)"``; ``reason`` says where the
    numbers come from, e.g. ``"to match X's d_model=4"``.
    """
    if W.ndim != 2 or W.shape[0] != rows or (cols is not None and W.shape[1] != cols):
        raise ValueError(f"{name}: expected shape {layout} {reason}, got {W.shape}")
    if 0 in W.shape:
        raise ValueError(f"{name}: expected shape {layout} with no dimension of size 0, "
                         f"got {W.shape}")


def check_bias(name: str, b: object, size: int, reason: str) -> np.ndarray:
    """Return the bias as a float64 vector of length ``size``; zeros when ``b`` is None."""
    if b is None:
        return np.zeros(size)
    b = as_float_array(name, b)
    if b.shape != (size,):
        raise ValueError(f"{name}: expected shape ({size},) {reason}, got {b.shape}")
    return b


def check_n_heads(n_heads: object, d_model: int) -> int:
    """Return ``n_heads`` if it is a positive integer dividing ``d_model``; ValueError otherwise."""
    n_heads = check_positive_int("n_heads", n_heads)
    if d_model % n_heads != 0:
        raise ValueError(f"n_heads: d_model={d_model} must be divisible by n_heads, "
                         f"got n_heads={n_heads}")
    return n_heads


def check_mask(name: str, mask: object, target: tuple[int, ...], layout: str) -> np.ndarray | None:
    """Return ``mask`` as a bool array broadcastable to ``target``; None stays None.

    The convention is True = may attend. A query row with no key allowed would give a softmax
    of 0/0 = NaN, so it is rejected with a ValueError here.
    """
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(f"{name}: expected a bool array (True = may attend), "
                         f"got dtype {mask.dtype}")
    try:
        fits = np.broadcast_shapes(mask.shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name}: expected a shape broadcastable to {layout}={target}, "
                         f"got {mask.shape}")
    if not np.broadcast_to(mask, target).any(axis=-1).all():
        raise ValueError(f"{name}: some query position may attend to no key at all (a row of "
                         "the mask is all False); its softmax would be 0/0 = NaN")
    return mask


def check_params(params: object, keys: Iterable[str], where: str) -> None:
    """ValueError naming the first key of ``keys`` that the Mapping ``params`` lacks."""
    if not isinstance(params, Mapping):
        raise ValueError(f"params: expected a Mapping of weight names to arrays for {where}, "
                         f"got {type(params).__name__}")
    missing = [key for key in keys if key not in params]
    if missing:
        raise ValueError(f"params: missing key {missing[0]!r} for {where} "
                         f"(missing: {', '.join(missing)})")


def check_param_shapes(params: Mapping[str, object], shapes: Mapping[str, tuple[int, ...]],
                       layout: Mapping[str, str]) -> dict[str, np.ndarray]:
    """Return ``params[key]`` as float64 arrays for each key of ``shapes``, checking each shape.

    ``layout`` gives each expected shape in words, e.g. ``{"W_1": "(d_model, d_ff)"}``.
    """
    arrays = {}
    for key, shape in shapes.items():
        array = as_float_array(f"params[{key!r}]", params[key])
        if array.shape != shape:
            raise ValueError(f"params[{key!r}]: expected shape {layout[key]}={shape}, "
                             f"got {array.shape}")
        arrays[key] = array
    return arrays
