"""`dataclasses` functions called on an sglang class that stopped being a dataclass.

A class is a dataclass when `@dataclass` made it (griffe's `dataclass` label), or when one
of its sglang bases is one; the label the snapshot gives a class sglang assembles at
import time (`ASSEMBLED`, see `Snapshot._with_surfaces`) does not count.
"""

from __future__ import annotations

from driftaudit.drift.changes import DataclassLost
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.snapshot.api_model import ASSEMBLED, Class
from driftaudit.usage import DataclassCallUsage


def dataclass_findings(usage: DataclassCallUsage, differ, classes: list[str]) -> list[Finding]:
    """`classes`: the sglang classes of the usage's receiver, when it names no class."""
    for cls in [usage.symbol] if usage.symbol else classes:
        old, new = differ.old.resolve(cls), differ.new.resolve(cls)
        if old is None or new is None:
            continue  # gone or new: reported where it is imported
        if not isinstance(old.obj, Class) or not isinstance(new.obj, Class):
            continue
        if not is_dataclass(differ.old, old.obj) or is_dataclass(differ.new, new.obj):
            continue
        change = DataclassLost(new.canonical, _where(old), _where(new), function=usage.function)
        severity = "warning" if usage.function == "is_dataclass" else ""
        fix = Fix(f"read the fields of `{cls.rpartition('.')[2]}` through its new API")
        return [finding_at(usage, change, change.explain(), fix, severity=severity)]
    return []


def is_dataclass(snapshot, cls: Class, depth: int = 0) -> bool:
    if "dataclass" in cls.labels and ASSEMBLED not in cls.labels:
        return True
    for base in cls.bases if depth < 6 else ():
        found = snapshot.resolve(base) if base.startswith("sglang.") else None
        if found is not None and isinstance(found.obj, Class):
            if is_dataclass(snapshot, found.obj, depth + 1):
                return True
    return False


def _where(found) -> str | None:
    if found.module is None:
        return None
    line = getattr(found.obj, "lineno", None)
    return f"{found.module.file}:{line}" if line else found.module.file
