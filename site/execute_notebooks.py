"""Execute the book's notebooks a process per core into jupyter-cache, before the book build.

jupyter-book executes the pages one after another while Sphinx reads them, and Sphinx cannot
read in parallel here (``sphinx_multitoc_numbering``, which numbers the figures across chapters,
is not parallel-safe), so a two-core machine executed the book on one core. With
``execute_notebooks: cache`` (``_config.yml``) the build takes a page's outputs from the cache
in ``_build/.jupyter_cache`` when its code cells match; this script fills that cache first, the
slowest notebooks first, each executed in its own folder as the build would. ``make book``
empties the cache before it runs, so every build executes every page with the package as it is
now: no output of an earlier build stands in. A notebook that fails here is executed once more
by the build, which then fails and keeps its traceback under ``_build/html/reports`` as before;
pages that are MyST text (``index.md``) are left to the build.

    python site/execute_notebooks.py [--cache PATH] [--processes N]   # PATH: execute.cache
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

import yaml
from jupyter_cache import get_cache
from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ProcessData
from sphinx_external_toc.parsing import parse_toc_yaml

ROOT = Path(__file__).resolve().parents[1]
# Measured by site/exec_times.py (make book prints the table): the long ones start first, so
# that no core is left running one alone at the end.
SLOWEST_FIRST = ["chapters/08_training_and_loss", "chapters/10_playground",
                 "chapters/05_positional_encoding"]


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The .ipynb pages of _toc.yml (read as jupyter-book reads it), the slowest first, then in
    the book's order."""
    pages = sorted(parse_toc_yaml(root / "_toc.yml"),  # the docnames, in the book's order
                   key=lambda page: SLOWEST_FIRST.index(page) if page in SLOWEST_FIRST
                   else len(SLOWEST_FIRST))
    return [root / f"{page}.ipynb" for page in pages if (root / f"{page}.ipynb").exists()]


def main() -> int:
    # the cache, a cell's timeout and whether errors pass: those of the build's own execution
    execute = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["execute"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / execute["cache"])
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    parser.add_argument("--processes", type=int, default=cores or 1)
    args = parser.parse_args()
    cache = get_cache(str(args.cache))
    records = [cache.add_nb_to_project(str(path)) for path in toc_notebooks()]
    start = time.perf_counter()
    jobs = [ProcessData(r.pk, r.uri, cache, execute["timeout"], execute["allow_errors"])
            for r in records]
    with multiprocessing.Pool(max(1, args.processes)) as pool:  # one notebook a task, in order
        results = list(pool.imap_unordered(ExecutionWorkerLocalMProc(), jobs, chunksize=1))
    failed = sorted(uri for status, uri in results if status != 0)
    print(f"executed {len(jobs)} notebooks in {time.perf_counter() - start:.1f} s on "
          f"{args.processes} processes" + (f"; failed (the build executes them again and "
                                            f"reports why): {failed}" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
