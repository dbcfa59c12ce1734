"""The package's layout as docs/ARCHITECTURE.md states it."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "driftaudit"


def test_no_two_modules_share_a_name():
    names = Counter(p.name for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")
    assert [name for name, count in names.items() if count > 1] == []


def test_the_snapshot_class_stays_small():
    tree = ast.parse((PACKAGE / "snapshot" / "snapshot.py").read_text())
    (snapshot,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Snapshot"]
    assert snapshot.end_lineno - snapshot.lineno + 1 < 350
