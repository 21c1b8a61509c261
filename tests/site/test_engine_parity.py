"""The page's engine (site/js/engine/engine.js, jax-js) against PyTorch, with Node: the fixture is
written here from the package (tests/site/js_fixture.py) into a temporary folder, and
tests/site/engine.test.mjs checks training (losses, step-0 gradients, weights after 20 steps;
post-LN and pre-LN, label smoothing 0 and 0.1) and inference (every shipped model's test
sentences: logits, greedy and beam tokens, each step the same with and without the KV cache),
and both positional layouts on a seeded model (a config it cannot run is refused). Skipped without Node or `npm ci` in site/, except
under CI=true, where that is a failure."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JAX = ROOT / "site" / "node_modules" / "@jax-js" / "jax" / "package.json"


def test_engine_equals_pytorch(tmp_path):
    node = shutil.which("node")
    if node is None or not JAX.exists():
        missing = "Node.js" if node is None else "@jax-js/jax (run `npm ci` in site/)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} is missing, and CI must run the engine's parity test")
        pytest.skip(f"{missing} not installed")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, str(ROOT / "tests" / "site" / "js_fixture.py"), str(tmp_path)],
                   check=True, env=env, timeout=300)
    result = subprocess.run([node, "--test", str(ROOT / "tests" / "site" / "engine.test.mjs")],
                            env={**env, "FIXTURE_DIR": str(tmp_path)}, capture_output=True,
                            text=True, timeout=600)
    summary = [line for line in result.stdout.splitlines() if line.startswith(("# pass", "# fail"))]
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert summary == ["# pass 12", "# fail 0"], summary
