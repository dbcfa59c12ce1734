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


_TOKEN = re.compile(r"\s*(\|\||&&|==|!=|\(|\)|!|'[^']*'|[A-Za-z_][\w.-]*(?:\(\))?)")


def _condition(text: str, context: dict[str, str], failed: bool) -> bool:
    """A step's `if:`, for the expressions action.yml uses: context values, string
    literals, ==, !=, !, &&, ||, parentheses, always(), success(), failure()."""
    words, at = [], 0
    text = _EXPR.sub(lambda m: m.group(1), text.strip())
    while at < len(text):
        match = _TOKEN.match(text, at)
        assert match, f"unsupported expression: {text!r}"
        token, at = match.group(1), match.end()
        if token in ("&&", "||", "!"):
            words.append({"&&": " and ", "||": " or ", "!": " not "}[token])
        elif token in ("==", "!=", "(", ")"):
            words.append(token)
        elif token.startswith("'"):
            words.append(repr(token[1:-1]))
        elif token in ("always()", "success()", "failure()"):
            words.append(repr({"always()": True, "success()": not failed}.get(token, failed)))
        else:
            words.append(repr(context.get(token, "")))
    return bool(eval("".join(words), {"__builtins__": {}}))  # noqa: S307 - our own tokens


class FakeCache:
    """actions/cache/restore and actions/cache/save on a folder of entries: restore takes
    the exact key, else the newest entry whose key starts with a restore key; save
    refuses a key that exists (as GitHub does: entries are immutable)."""

    def __init__(self, store: Path):
        self.store = store
        self.saved: list[str] = []
        self.restored: list[str] = []

    def restore(self, spec: dict, outputs: dict[str, str]) -> None:
        import shutil

        self.store.mkdir(exist_ok=True)
        entries = sorted(self.store.iterdir(), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        hit = [e for e in entries if e.name == spec["key"]]
        prefixes = str(spec.get("restore-keys", "")).split()
        hit = hit or [e for p in prefixes for e in entries if e.name.startswith(p)]
        if hit:
            shutil.copytree(hit[0], spec["path"], dirs_exist_ok=True)
            self.restored.append(hit[0].name)
            outputs["cache-matched-key"] = hit[0].name
            outputs["cache-hit"] = str(hit[0].name == spec["key"]).lower()

    def save(self, spec: dict, outputs: dict[str, str]) -> None:
        import shutil

        entry = self.store / spec["key"]
        if entry.exists():
            raise AssertionError(f"cache entry {spec['key']!r} already exists")
        shutil.copytree(spec["path"], entry)
        self.saved.append(spec["key"])


def run_action(
    inputs: dict[str, str], workspace: Path, tmp_path: Path, cache: FakeCache | None = None
) -> dict:
    """One job: action.yml's steps in order, `run:` ones in bash as the runner runs them,
    `uses:` ones recorded (the cache ones played by `cache`)."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs)
    cache = cache or FakeCache(tmp_path / "cache-store")
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
        "RUNNER_OS": "Linux",
    }
    env.pop("DRIFTAUDIT_CACHE_DIR", None)  # the action says where its cache is
    context = {f"inputs.{k}": v for k, v in values.items()}
    context["github.action_path"] = str(ROOT)
    context["runner.os"] = "Linux"
    context["runner.temp"] = str(files["runner-temp"])
    used, codes, stdout, stderr = [], {}, {}, {}
    failed = False
    for step in action["runs"]["steps"]:
        if "if" in step and not _condition(str(step["if"]), context, failed):
            continue
        if "uses" in step:
            name = step["uses"].split("@")[0]
            used.append(name)
            spec = {k: _substitute(v, context) for k, v in step.get("with", {}).items()}
            outputs: dict[str, str] = {}
            if name == "actions/cache/restore":
                cache.restore(spec, outputs)
            elif name == "actions/cache/save":
                cache.save(spec, outputs)
            for key, value in outputs.items():
                context[f"steps.{step.get('id')}.outputs.{key}"] = value
            continue
        files["output"].write_text("")
        step_env = {k: _substitute(v, context) for k, v in step.get("env", {}).items()}
        result = subprocess.run(
            [
                step["shell"],
                "--noprofile",
                "--norc",
                "-eo",
                "pipefail",
                "-c",
                _substitute(step["run"], context),
            ],
            cwd=workspace,
            env={**env, **step_env, "GITHUB_OUTPUT": str(files["output"])},
            capture_output=True,
            text=True,
        )
        codes[step["name"]] = result.returncode
        stdout[step["name"]] = result.stdout
        stderr[step["name"]] = result.stderr
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
        "stderr": stderr,
        "cache": cache,
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
        "actions/cache/restore",
        "actions/cache/save",  # an empty cache: the releases are stored
        "github/codeql-action/upload-sarif",
    ]
    assert run["pip"].split() == ["install", "--quiet", str(ROOT)]
    assert run["context"]["steps.check.outputs.exit-code"] == "1"
    assert run["codes"]["Fail on findings"] == 1
    annotations = run["stdout"]["driftaudit annotations"].splitlines()
    assert annotations and all(a.startswith("::") for a in annotations)
    assert "::error file=svc/calls.py,line=7,col=32," in annotations[0]
    assert run["summary"].startswith("# driftaudit: svc") and "## Summary by rule" in run["summary"]
    sarif_file = Path(run["context"]["steps.check.outputs.sarif-file"])
    assert sarif_file.parent == tmp_path / "runner-temp"  # outside the checkout
    assert not list(workspace.rglob("*.sarif"))
    sarif = json.loads(sarif_file.read_text())
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


def _summary_count(summary: str) -> int:
    match = re.search(r"\*\*(\d+) (?:findings?|facts?)\*\*", summary)  # one SARIF result a fact
    assert match, summary[:300]
    return int(match.group(1))


def _reported(sarif_file: Path) -> list[dict]:
    results = json.loads(sarif_file.read_text())["runs"][0]["results"]
    return [r for r in results if not r.get("suppressions")]  # what code scanning shows open


def test_a_second_run_restores_the_cache_and_stores_nothing(tmp_path):
    """Two jobs on one repository: the summary counts what the SARIF reports, in both;
    the first stores the release cache under the releases audited, the second restores
    that entry and stores nothing."""
    workspace = _workspace(tmp_path)
    calls = workspace / "svc" / "calls.py"
    first_line = calls.read_text().splitlines()[0]
    # one finding silenced inline: a suppressed SARIF result, not counted in the summary
    (workspace / "svc" / "more.py").write_text(first_line + "  # driftaudit: ignore\n")
    cache = FakeCache(tmp_path / "store")
    runs = []
    for job in ("job1", "job2"):
        (tmp_path / job).mkdir()
        runs.append(run_action({"path": "svc", **TREES}, workspace, tmp_path / job, cache))
    first, second = runs
    key = first["context"]["steps.releases.outputs.key"]
    assert key.startswith("driftaudit-Linux-") and cache.saved == [key]
    assert "actions/cache/save" not in second["used"] and cache.restored == [key]
    assert second["context"]["steps.releases.outputs.key"] == key
    assert (tmp_path / "job2" / "runner-temp" / "driftaudit-cache").is_dir()
    for run in runs:
        sarif_file = Path(run["context"]["steps.check.outputs.sarif-file"])
        reported = _reported(sarif_file)
        assert reported and _summary_count(run["summary"]) == len(reported)
        assert len(run["summary"]) <= 65_536  # a job summary, a PR comment


def test_a_sarif_file_asked_for_in_the_tree_is_not_audited(tmp_path):
    workspace = _workspace(tmp_path)
    inputs = {"path": "svc", "sarif-file": "svc/reports/driftaudit.sarif", **TREES}
    run = run_action(inputs, workspace, tmp_path)
    assert run["context"]["steps.check.outputs.exclude"] == "reports/driftaudit.sarif"
    reported = _reported(workspace / "svc" / "reports" / "driftaudit.sarif")
    assert _summary_count(run["summary"]) == len(reported)
    paths = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in reported}
    assert paths == {"svc/calls.py"}
