"""Running the page's JavaScript under Node.js for the tests in this folder."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[2] / "site"
NODE = shutil.which("node")
requires_node = pytest.mark.skipif(NODE is None, reason="Node.js not installed (make site-assets needs it)")


def run_node(script: str, data) -> object:
    """Run an ES module ``script`` in site/ with ``data`` as JSON on its standard input; its
    standard output parsed as JSON."""
    result = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=SITE,
                            input=json.dumps(data), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
