"""Does a rewritten non-Python file still read as what it is? YAML (PyYAML), TOML
(tomllib), JSON (json), shell (`bash -n`, when bash is here: it only parses, it runs
nothing, and starts as `children.py` starts programs: no rc file, no inherited
environment such as `BASH_ENV`, not from or in the consumer's tree); a Dockerfile has
no parser here, its edits are checked by their exact old text.

A file that did not parse before its edits (a template: Helm YAML, a Jinja'd config) is
not held to parse after them: its edits are checked by their exact old text only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import PurePosixPath

import yaml

from driftaudit import children

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

_SHELL_SUFFIXES = {".sh", ".bash"}
_SHELLS = ("sh", "bash", "dash", "ksh", "zsh")


def format_of(path: str, text: str) -> str:
    """yaml | toml | json | shell | dockerfile | text."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".toml":
        return "toml"
    if suffix == ".json":
        return "json"
    if suffix in _SHELL_SUFFIXES:
        return "shell"
    if name == "Dockerfile" or name.startswith("Dockerfile.") or suffix == ".dockerfile":
        return "dockerfile"
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and first.split("/")[-1].split()[-1] in _SHELLS:
        return "shell"
    return "text"


def format_problem(path: str, before: str, after: str) -> str | None:
    """Why `after` does not read as the file's format while `before` did, else None."""
    check = _CHECKS.get(format_of(path, before))
    if check is None or check(before) is not None:
        return None
    return check(after)


def _yaml(text: str) -> str | None:
    try:
        for _ in yaml.safe_load_all(text):
            pass
    except yaml.YAMLError as exc:
        return f"not YAML: {str(exc).splitlines()[0]}"
    return None


def _toml(text: str) -> str | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"not TOML: {exc}"
    return None


def _json(text: str) -> str | None:
    try:
        json.loads(text)
    except ValueError as exc:
        return f"not JSON: {exc}"
    return None


def _shell(text: str) -> str | None:
    if children.program("bash") is None:
        return None  # no parser here: the exact old text was checked
    try:
        done = children.run(
            "bash",
            ["--norc", "--noprofile", "-n"],
            stdin=text.encode("utf-8", errors="surrogateescape"),
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bash -n could not check it: {exc}"
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"bash -n: {message[0] if message else 'syntax error'}"
    return None


_CHECKS = {"yaml": _yaml, "toml": _toml, "json": _json, "shell": _shell}
