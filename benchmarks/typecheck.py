"""ty and pyrefly as the diffed peer of the spelling corpus and the differential harness:
each in a venv of the benchmark's own (never a runtime dependency), run over a consumer
with one unpacked sglang tree on its search path, then the other; what only the new tree
produces (same file, line and message) is the peer's answer. sglang is never installed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from checkers import checker_venv  # one venv helper for every peer

CHECKERS = ("ty", "pyrefly")


def diagnostics(
    kind: str, exe: Path, consumer: Path, sglang_root: Path, files: list[str]
) -> set[tuple[str, int, str]]:
    """(path relative to `consumer`, line, message) of each diagnostic on `files`."""
    if kind == "ty":
        argv = [str(exe), "check", "--output-format", "gitlab", "--exit-zero", "--no-progress"]
        argv += ["--project", str(consumer), "--extra-search-path", str(sglang_root)]
        argv += ["--extra-search-path", str(consumer), *files]
    else:
        argv = [str(exe), "check", "--output-format", "json", "--search-path", str(sglang_root)]
        argv += ["--search-path", str(consumer), *files]
    run = subprocess.run(argv, capture_output=True, text=True, cwd=consumer)
    out = run.stdout.strip()
    start = out.find("[") if kind == "ty" else out.find("{")
    if start < 0:
        return set()
    data = json.loads(out[start:])
    found = set()
    if kind == "ty":
        for item in data:
            path = Path(item["location"]["path"])
            line = item["location"]["positions"]["begin"]["line"]
            found.add((_relative(path, consumer), int(line), item.get("description", "")))
    else:
        for item in data.get("errors", []):
            found.add(
                (
                    _relative(Path(item["path"]), consumer),
                    int(item["line"]),
                    item.get("concise_description") or item.get("description", ""),
                )
            )
    return found


def _relative(path: Path, consumer: Path) -> str:
    if not path.is_absolute():
        path = consumer / path
    try:
        return str(path.resolve().relative_to(consumer.resolve()))
    except ValueError:
        return str(path)


def new_diagnostics(
    kind: str, cache: Path, consumer: Path, old_root: Path, new_root: Path, files: list[str]
) -> set[tuple[str, int, str]]:
    exe = checker_venv(kind, cache)
    old = diagnostics(kind, exe, consumer, old_root, files)
    new = diagnostics(kind, exe, consumer, new_root, files)
    return new - old
