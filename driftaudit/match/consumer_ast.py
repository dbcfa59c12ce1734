"""The consumer files that import sglang, parsed once for the behaviour checks (copies and
call-graph reach), which need whole function bodies and every attribute read, not just
the usage records."""

from __future__ import annotations

import ast
from pathlib import Path

from driftaudit.usage import ImportUsage, UsageSet


def sglang_files(usages: UsageSet, root: Path) -> dict[str, tuple[str, ast.Module]]:
    """path -> (text, tree) of each consumer file with an sglang import (parse errors are
    DA001 findings already: skipped here)."""
    parsed = {}
    for path in sorted({u.path for u in usages.usages if isinstance(u, ImportUsage)}):
        try:
            text = (root / path).read_text(encoding="utf-8", errors="replace")
            parsed[path] = (text, ast.parse(text))
        except (OSError, SyntaxError, ValueError):
            continue
    return parsed


def attribute_reads(files: dict[str, tuple[str, ast.Module]]) -> set[str]:
    """Every attribute name the consumer reads (`x.name`, whatever `x` is)."""
    return {
        node.attr
        for _, tree in files.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
    }
