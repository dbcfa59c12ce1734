"""The GitHub Action and the pre-commit hook, run as GitHub and pre-commit would.

The action's `run:` steps are executed from action.yml by a small stand-in for the
runner: `${{ ... }}` expressions are substituted, `uses:` steps are recorded (setup-python,
cache and upload-sarif need GitHub), `pip` is a stub that records what it was asked to
install (the package under test is already installed), and `driftaudit` is this one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

from driftaudit.cli import main

from .conftest import FIXTURES, write_tree

ROOT = Path(__file__).parent.parent
CASE = FIXTURES / "themes" / "calls"
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
_EXPR = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def _substitute(text: str, context: dict[str, str]) -> str:
    return _EXPR.sub(lambda m: context.get(m.group(1), ""), str(text))


def run_action(inputs: dict[str, str], workspace: Path, tmp_path: Path) -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pip_log = tmp_path / "pip.log"
    stub = bin_dir / "pip"
    stub.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(pip_log))}\n')
    stub.chmod(0o755)
    files = {name: tmp_path / name for name in ("summary.md", "output", "runner-temp")}
    files["runner-temp"].mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
        + os.environ["PATH"],
        "GITHUB_STEP_SUMMARY": str(files["summary.md"]),
        "RUNNER_TEMP": str(files["runner-temp"]),
        "DRIFTAUDIT_CACHE_DIR": str(tmp_path / "cache"),
    }
    context = {f"inputs.{k}": v for k, v in values.items()}
    context["github.action_path"] = str(ROOT)
    used, codes, stdout = [], {}, {}
    for step in action["runs"]["steps"]:
        if "uses" in step:
            used.append(step["uses"].split("@")[0])
            continue
        files["output"].write_text("")
        step_env = {k: _substitute(v, context) for k, v in step.get("env", {}).items()}
        result = subprocess.run(
            [step["shell"], "-e", "-c", _substitute(step["run"], context)],
            cwd=workspace,
            env={**env, **step_env, "GITHUB_OUTPUT": str(files["output"])},
            capture_output=True,
            text=True,
        )
        codes[step["name"]] = result.returncode
        stdout[step["name"]] = result.stdout
        for line in files["output"].read_text().splitlines():
            key, _, value = line.partition("=")
            context[f"steps.{step.get('id')}.outputs.{key}"] = value
        if result.returncode != 0 and step is not action["runs"]["steps"][-1]:
            raise AssertionError(f"step {step['name']!r} failed: {result.stderr}")
    return {
        "used": used,
        "codes": codes,
        "pip": pip_log.read_text() if pip_log.exists() else "",
        "summary": files["summary.md"].read_text() if files["summary.md"].exists() else "",
        "context": context,
        "stdout": stdout,
    }


TREES = {"old": str(CASE / "old"), "new": str(CASE / "new")}


def _workspace(tmp_path: Path) -> Path:
    """A repository with the consumer in a subdirectory, as a monorepo would have it."""
    config = '[tool.driftaudit]\nfail-on = "error"\n'  # trees from the workflow, not the config
    calls = (CASE / "consumer" / "calls.py").read_text()
    return write_tree(tmp_path / "repo", {"svc/pyproject.toml": config, "svc/calls.py": calls})


def test_the_action_reports_and_fails_on_findings(tmp_path):
    workspace = _workspace(tmp_path)
    run = run_action({"path": "svc", "annotations": "true", **TREES}, workspace, tmp_path)
    assert run["used"] == [
        "actions/setup-python",
        "actions/cache",
        "github/codeql-action/upload-sarif",
    ]
    assert run["pip"].split() == ["install", "--quiet", str(ROOT)]
    assert run["context"]["steps.check.outputs.exit-code"] == "1"
    assert run["codes"]["Fail on findings"] == 1
    annotations = run["stdout"]["driftaudit annotations"].splitlines()
    assert annotations and all(a.startswith("::") for a in annotations)
    assert "::error file=svc/calls.py,line=7,col=32," in annotations[0]
    assert run["summary"].startswith("# driftaudit: svc") and "## Summary by rule" in run["summary"]
    sarif = json.loads((workspace / "driftaudit.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    }
    assert uris == {"svc/calls.py"}  # from the repository root, where code scanning looks


def test_the_action_passes_with_a_baseline(tmp_path):
    workspace = _workspace(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "-q"]
    trees = ["--old", TREES["old"], "--new", TREES["new"]]
    assert main(["check", *cache, *trees, "--update-baseline", str(workspace / "svc")]) == 0
    run = run_action({"path": "svc", "upload-sarif": "false", **TREES}, workspace, tmp_path)
    assert run["codes"]["Fail on findings"] == 0
    assert run["stdout"]["driftaudit annotations"] == ""  # off by default
    assert "**0 facts**" in run["summary"]
    accepted = json.loads((workspace / "svc" / ".driftaudit-baseline.json").read_text())
    assert f"Not reported: {len(accepted['findings'])} known (in the baseline" in run["summary"]


def test_pre_commit_hook(tmp_path, capsys):
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    for name in (
        "a.py",
        "scripts/run.sh",
        "conf/x.yaml",
        "pyproject.toml",
        "requirements-dev.txt",
        "docker/Dockerfile",
    ):
        assert files.search(name), name
    assert not files.search("README.md")
    command = shlex.split(hook["entry"])
    assert command[0] == "driftaudit"
    consumer = _workspace(tmp_path) / "svc"
    trees = ["--old", TREES["old"], "--new", TREES["new"]]  # a hook's `args:` in practice
    assert main([*command[1:], *trees, "--cache-dir", str(tmp_path / "cache"), str(consumer)]) == 1
    assert capsys.readouterr().err == ""
