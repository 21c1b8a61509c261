"""Sphinx extension: after the build, print how long each notebook took to execute.

myst-nb keeps each page's execution data (runtime in seconds, whether it succeeded) in the build
environment. At the end of the build this prints them as a table, slowest first, and writes them
to ``_build/exec-times.json`` (next to the HTML folder). Each chapter should execute in under
a minute (BUDGET_S) on 2 CPU cores; pages over that are marked, not failed (runner speed
varies).

Also runnable on its own after a build: ``python site/exec_times.py [_build]`` prints the table.
Loaded from ``_config.yml`` (``sphinx.local_extensions: {exec_times: site/}``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BUDGET_S = 60.0


def table(rows: list[dict[str, Any]]) -> str:
    """Rows of {page, seconds, succeeded, method} as an aligned text table, slowest first."""
    rows = sorted(rows, key=lambda r: -(r["seconds"] or 0.0))
    width = max([len("page")] + [len(r["page"]) for r in rows])
    lines = [f"{'page':<{width}}  {'seconds':>8}  result", f"{'-' * width}  {'-' * 8}  ------"]
    for r in rows:
        seconds = "-" if r["seconds"] is None else f"{r['seconds']:.1f}"
        result = "ok" if r["succeeded"] else "FAILED"
        if r["seconds"] is not None and r["seconds"] > BUDGET_S:
            result += f" (over {BUDGET_S:.0f} s)"
        lines.append(f"{r['page']:<{width}}  {seconds:>8}  {result}")
    total = sum(r["seconds"] or 0.0 for r in rows)
    lines.append(f"{'total':<{width}}  {total:>8.1f}")
    return "\n".join(lines)


def report(app: Any, exception: Exception | None) -> None:
    """``build-finished``: print the table and write ``exec-times.json``."""
    from myst_nb.sphinx_ import NbMetadataCollector
    from sphinx.util import logging

    if app.builder is None or app.builder.format != "html":
        return
    rows = []
    for docname, data in sorted(NbMetadataCollector.get_doc_data(app.env).items()):
        exec_data = data.get("exec_data")
        if exec_data:
            rows.append({"page": docname, "seconds": exec_data.get("runtime"),
                         "succeeded": bool(exec_data.get("succeeded")),
                         "method": exec_data.get("method")})
    if not rows:
        return
    out = Path(app.outdir).parent / "exec-times.json"
    out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    logging.getLogger(__name__).info("\nexecution time per page (also in %s):\n%s", out, table(rows))


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", report)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    build = Path(sys.argv[1] if len(sys.argv) > 1 else "_build")
    print(table(json.loads((build / "exec-times.json").read_text(encoding="utf-8"))))
