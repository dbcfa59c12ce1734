"""Codemods: findings (and pack matches) -> edits -> rewritten files.

Every output is re-parsed before it is written, every file is written all or nothing
(`write.py`), and nothing is written without `--apply`.
"""

# imported on first use: a report whose fixes are all kept (`suggest.py`) loads no libcst
_HOMES = {
    "FileChange": "apply",
    "apply_edits": "apply",
    "rewrite": "apply",
    "Edit": "edits",
    "edits_from_findings": "edits",
    "fixable": "edits",
    "WriteRefused": "write",
    "sweep_stale": "write",
    "write_all": "write",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"driftaudit.fix.{home}"), name)
