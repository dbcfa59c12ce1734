"""The consumer files that import sglang, parsed once for the behaviour checks (copies and
call-graph reach), which need whole function bodies and every attribute read, not just
the usage records."""

from __future__ import annotations

import ast

from driftaudit.usage import ImportUsage, UsageSet
from driftaudit.usage.files import ConsumerFiles


def sglang_paths(usages: UsageSet) -> list[str]:
    """The consumer files with an sglang import, in path order."""
    return sorted({u.path for u in usages.usages if isinstance(u, ImportUsage)})


def sglang_files(usages: UsageSet, files: ConsumerFiles) -> dict[str, tuple[str, ast.Module]]:
    """path -> (text, tree) of each consumer file with an sglang import, from the file
    index (read and parsed once per run; parse errors are DA001 findings already)."""
    parsed = {}
    for path in sglang_paths(usages):
        file = files.get(path)
        if file is not None and file.text is not None and file.tree is not None:
            parsed[path] = (file.text, file.tree)
    return parsed


def attribute_reads(files: dict[str, tuple[str, ast.Module]]) -> set[str]:
    """Every attribute name the consumer reads (`x.name`, whatever `x` is)."""
    return {
        node.attr
        for _, tree in files.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
    }
