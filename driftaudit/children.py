"""The programs driftaudit starts: git (for `git:` specs) and `bash -n` (the fixer's check
of a rewritten shell script). Nothing a consumer commits may become the program, its
working directory or its settings, whatever directory driftaudit was started in:

- the program is looked up on the absolute entries of PATH only (an empty entry, `.` or
  `bin` is the working directory, in CI the checkout: a committed `git` would run);
- it runs in a working directory of its own (the file-system root), so a relative name
  it opens cannot be the consumer's;
- its environment is built here: PATH (absolute entries), `LC_ALL=C` and what the
  caller passes, nothing inherited (`GIT_DIR`, `GIT_INDEX_FILE` a git hook sets,
  `BASH_ENV`, exported functions).

No Python child is started: the build-ahead and behaviour children are forks (`forked.py`),
which import nothing anew; `__main__` drops the working directory from `sys.path` before
anything is imported lazily.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess

_WORKDIR = os.path.abspath(os.sep)


def search_path() -> str:
    """The absolute entries of PATH."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(e for e in entries if e and os.path.isabs(e))


def program(name: str) -> str | None:
    """The absolute path of program `name` on the absolute entries of PATH, or None."""
    found = shutil.which(name, path=search_path())
    return os.path.abspath(found) if found else None


def run(
    name: str,
    args: list[str],
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess:
    """Run program `name` with `args`, output captured; OSError when it is not found."""
    path = program(name)
    if path is None:
        raise FileNotFoundError(errno.ENOENT, "not found on PATH", name)
    environment = {"PATH": search_path(), "LC_ALL": "C", **(env or {})}
    return subprocess.run(
        [path, *args],
        input=stdin,
        capture_output=True,
        cwd=_WORKDIR,
        env=environment,
        timeout=timeout,
        check=False,
    )
