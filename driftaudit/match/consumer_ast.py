"""The consumer files that import sglang, parsed once for the behaviour checks (copies and
call-graph reach), which need whole function bodies, not just the usage records."""

from __future__ import annotations

import ast

from driftaudit.usage import ImportUsage, UsageSet
from driftaudit.usage.files import ConsumerFiles


def sglang_files(usages: UsageSet, files: ConsumerFiles) -> dict[str, tuple[str, ast.Module]]:
    """path -> (text, tree) of each consumer file with an sglang import, from the file
    index (read and parsed once per run; parse errors are DA001 findings already)."""
    parsed = {}
    for path in sorted({u.path for u in usages.usages if isinstance(u, ImportUsage)}):
        file = files.get(path)
        if file is not None and file.text is not None and file.tree is not None:
            parsed[path] = (file.text, file.tree)
    return parsed
