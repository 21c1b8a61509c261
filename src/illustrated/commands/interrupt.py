"""Ctrl-C while a command starts: one line and exit code 130, never a traceback from an import.

``python -m illustrated ...`` (and ``illustrated.commands.shipped``,
``illustrated.commands.onnx_export``) imports the package, NumPy and torch before its ``main`` can
catch anything. While the package is imported as a command, a Ctrl-C prints ``interrupted`` and
exits 130 at once (nothing is being written yet); each command's ``main`` hands Ctrl-C back to
Python's own handler (a KeyboardInterrupt it catches) once torch is imported (the command line's
after parsing its arguments, the others as their first step), and :func:`exit_with` ends
the process: once ``main`` has returned the work is done, and a Ctrl-C during the interpreter's
shutdown changes nothing.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Iterator

__all__ = ["INTERRUPTED", "run_as_command", "guard_start", "end_of_start", "torch_start_up",
           "exit_with"]

#: Exit code after Ctrl-C, as a shell reports a process ended by SIGINT (128 + 2).
INTERRUPTED = 130


def run_as_command() -> bool:
    """True when this process runs ``python -m illustrated[.something]``."""
    argv = list(getattr(sys, "orig_argv", []))
    return any(arg == "-m" and argv[i + 1].split(".")[0] == "illustrated"
               for i, arg in enumerate(argv[:-1]))


def _interrupted_while_starting(signum, frame) -> None:  # noqa: ARG001 - a signal handler
    os.write(2, b"interrupted\n")
    os._exit(INTERRUPTED)


def guard_start() -> None:
    """From now until :func:`end_of_start`, Ctrl-C exits 130 with one line (if Python's own
    handler is in place: an ignored SIGINT, as under ``nohup``, stays ignored)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted_while_starting)


def end_of_start() -> None:
    """Give Ctrl-C back to Python (a KeyboardInterrupt) if :func:`guard_start` took it."""
    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def torch_start_up() -> Iterator[None]:
    """Inside, Ctrl-C exits 130 with one line, as during the imports: torch's one-time start-up
    (its import, torch.optim importing torch._dynamo, the first step's kernels) runs Python
    code called from C++, where a KeyboardInterrupt ends the process with SIGABRT (exit code
    -6, seen under load). Nothing is written there yet. Python's handler is back after the
    block, unless the imports' guard was in place before it."""
    already = signal.getsignal(signal.SIGINT) is _interrupted_while_starting  # the imports' guard
    guard_start()
    try:
        yield
    finally:
        if not already:
            end_of_start()


def exit_with(code: int) -> None:
    """End a command's process with ``code``, its output flushed, Ctrl-C ignored from here on.

    After a handled Ctrl-C (130) the process ends with ``os._exit``: a KeyboardInterrupt that
    came while torch ran Python code from C++ leaves CPython believing it unhandled, and
    CPython then ends the process by SIGINT (exit code -2) whatever ``main`` returned.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say
            pass
    if code == INTERRUPTED:
        os._exit(code)
    sys.exit(code)
