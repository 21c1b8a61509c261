"""The order `make test` runs its files in (tests, chapters, closing), with --no-loadscope-reorder;
the browser tests order theirs in tests/browser/conftest.py. .ci/colab-versions keeps
pytest-xdist's own order (see there)."""
from __future__ import annotations

import collections

import pytest

#: The files that take longest, slowest first (seconds of test time on this project's 2-core
#: machine, one thread each: 97, 50, 49, 32, 25, 25, 23, 21, 20, 16, 14). `make test` hands whole
#: files to two workers (--dist loadfile). pytest-xdist's own order puts the files with the most
#: tests first, so the slowest file of all, the page engine's parity with PyTorch in node (a few
#: tests, 97 s), came last and one worker ran it alone after the other had finished. `make test`
#: passes --no-loadscope-reorder, and this order is its own: these first, then the other files by
#: their number of tests, as xdist would.
SLOWEST_FIRST = ("test_engine_parity.py", "test_distributed.py", "test_onnx_export.py",
                 "10_playground.ipynb", "test_packaging.py", "test_training_state.py",
                 "test_file_set_race.py", "test_training.py", "test_cli.py",
                 "07_decoder.ipynb", "06_residuals.ipynb")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of SLOWEST_FIRST first, in that order; then the others, most tests first."""
    tests = collections.Counter(item.path for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        name = item.path.name
        first = SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else len(SLOWEST_FIRST)
        return first, -tests[item.path]
    items.sort(key=rank)  # stable: a file's tests, and a notebook's cells, keep their order
