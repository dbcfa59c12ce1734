"""Codemods: findings (and pack matches) -> edits -> rewritten files.

Every output is re-parsed before it is written, every file is written all or nothing
(`write.py`), and nothing is written without `--apply`.
"""

from driftaudit.fix.apply import FileChange, apply_edits, rewrite
from driftaudit.fix.edits import Edit, edits_from_findings, fixable
from driftaudit.fix.write import WriteRefused, sweep_stale, write_all

__all__ = [
    "Edit",
    "FileChange",
    "WriteRefused",
    "apply_edits",
    "edits_from_findings",
    "fixable",
    "rewrite",
    "sweep_stale",
    "write_all",
]
