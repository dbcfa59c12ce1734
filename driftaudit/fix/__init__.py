"""Codemods: findings (and pack matches) -> edits -> rewritten files.

Every output is re-parsed before it is written, files are written atomically, and
nothing is written without `--apply`.
"""

from driftaudit.fix.apply import FileChange, apply_edits
from driftaudit.fix.edits import Edit, edits_from_findings

__all__ = ["Edit", "FileChange", "apply_edits", "edits_from_findings"]
