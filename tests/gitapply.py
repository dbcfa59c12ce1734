"""`git apply --check` as the oracle for the hunk checker (tests and the agreement script).

The patch is checked in a scratch folder holding only the files it touches, laid out
as the patch names them (`python/sglang/...` or `sglang/...`), copied from a tree
whose `sglang/` package lies in `root`. `--reject -v` makes git try every hunk and
name each failing one (`error: patch failed: FILE:OLD_START`), so a verdict per hunk
can be read back; a hunk git does not name applies.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from driftaudit.usage.patch_files import PatchFile

_CHECKING = re.compile(r"^Checking patch (.+)\.\.\.$")
_SUCCEEDED = re.compile(r"^Hunk #(\d+) succeeded at (\d+)")
_FAILED = re.compile(r"^error: patch failed: (.+):(\d+)$", re.M)
_FILE_ERROR = re.compile(
    r"^error: (.+?): (No such file or directory|already exists in working)", re.M
)


def git_verdicts(patch: Path, parsed: PatchFile, root: Path) -> dict[tuple[str, int], int | None]:
    """(written path, hunk header line) -> the line where git applies the hunk to the tree
    at `root`, or None where it does not (git names a line only for a moved hunk)."""
    with tempfile.TemporaryDirectory(prefix="driftaudit-gitapply-") as scratch:
        work = Path(scratch)
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        for file in parsed.files:
            source = root / file.path
            if source.is_file():
                target = work / file.written
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        run = subprocess.run(
            ["git", "apply", "--check", "--reject", "-v", str(patch.resolve())],
            cwd=work,
            capture_output=True,
            text=True,
        )
    output = run.stdout + run.stderr
    failed = {(name, int(line)) for name, line in _FAILED.findall(output)}
    broken_files = {name for name, _ in _FILE_ERROR.findall(output)}
    moved: dict[tuple[str, int], int] = {}  # (file, hunk number) -> line
    current = ""
    for line in output.splitlines():
        if match := _CHECKING.match(line):
            current = match.group(1)
        elif match := _SUCCEEDED.match(line):
            moved[(current, int(match.group(1)))] = int(match.group(2))
    verdicts: dict[tuple[str, int], int | None] = {}
    for file in parsed.files:
        for number, hunk in enumerate(file.hunks, 1):
            fails = file.written in broken_files or (file.written, hunk.old_start) in failed
            at = moved.get((file.written, number), hunk.new_start or 1)
            verdicts[(file.written, hunk.line)] = None if fails else at
    return verdicts
