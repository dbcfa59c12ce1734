r"""The fixer's unified diff, which `git apply` and `patch -p1` read back exactly.

Lines are split at `\n` only, as both tools count them (`str.splitlines` also splits at
`\f`, `\x1c` or U+2028 and ran two diff lines into one), a last line without a line break
is marked `\ No newline at end of file`, and a path that needs it is quoted as git quotes
it (`escape.patch_path`: a newline in a file name cannot start a header of its own).
"""

from __future__ import annotations

import difflib

from driftaudit.report.escape import patch_path

_NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def unified_diff(path: str, before: str, after: str) -> str:
    out = []
    old, new = patch_path(f"a/{path}"), patch_path(f"b/{path}")
    for line in difflib.unified_diff(_lines(before), _lines(after), old, new):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + _NO_NEWLINE)
    return "".join(out)
