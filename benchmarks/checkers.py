"""The type-checker peer of the benchmarks (`bench_targets.py`, `accuracy/run.py`):
pyright or mypy, installed in a venv of the benchmark's own, run over the consumer's
files that mention sglang with one unpacked sglang tree on the search path (sglang is
never installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def checker_venv(kind: str, cache: Path) -> Path:
    """A venv of the benchmark's own holding the checker (not sglang)."""
    venv = cache / f"bench-{kind}-venv"
    exe = venv / "bin" / kind
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", kind], check=True)
    return exe


def sglang_files(tree: Path) -> list[str]:
    """The consumer's Python files that mention sglang: all a checker needs to look at."""
    files = []
    for path in sorted(tree.rglob("*.py")):
        if ".git" in path.parts or not path.is_file():
            continue
        if "sglang" in path.read_text(errors="ignore"):
            files.append(str(path))
    return files


def checker_command(
    kind: str,
    exe: Path,
    tree: Path,
    sglang_root: Path,
    work: Path,
    pyright_rules: dict | None = None,
    mypy_flags: tuple[str, ...] = (),
) -> tuple[list[str], dict | None, Path | None]:
    """(argv, env, cwd) of one checker run over the consumer `tree` with `sglang_root` on
    its path; its configuration is written into `work`."""
    files = sglang_files(tree)
    if kind == "pyright":
        config = work / f"pyrightconfig-{sglang_root.name}.json"
        settings = {
            "include": files,
            "extraPaths": [str(sglang_root), str(tree)],
            "typeCheckingMode": "basic",
            **(pyright_rules or {}),
        }
        config.write_text(json.dumps(settings))
        return [str(exe), "--outputjson", "-p", str(config)], None, None
    # mypy stops at a directory that is no valid package name (`fast-gpu/`): skip those files
    files = [
        f
        for f in files
        if all(part.isidentifier() for part in Path(f).relative_to(tree).with_suffix("").parts)
    ]
    config = work / "mypy.ini"  # missing third-party imports are noise; missing sglang is not
    config.write_text(
        "[mypy]\nignore_missing_imports = True\n[mypy-sglang.*]\nignore_missing_imports = False\n"
    )
    env = dict(os.environ, MYPYPATH=os.pathsep.join([str(sglang_root), str(tree)]))
    argv = [
        str(exe),
        "--config-file",
        str(config),
        "--follow-imports=silent",
        "--no-error-summary",
        "--explicit-package-bases",
        *mypy_flags,
        "--cache-dir",
        str(work / f"mypy-{sglang_root.name}"),
        *files,
    ]
    return argv, env, tree
