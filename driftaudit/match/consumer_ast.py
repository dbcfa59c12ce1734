"""The consumer files that import sglang, parsed once for the behaviour checks (copies and
call-graph reach), which need whole function bodies, not just the usage records."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from driftaudit.usage import ImportUsage, UsageSet
from driftaudit.usage.files import ConsumerFiles


def sglang_paths(usages: UsageSet) -> list[str]:
    """The consumer files with an sglang import, in path order."""
    return sorted({u.path for u in usages.usages if isinstance(u, ImportUsage)})


class SglangFiles(Mapping):
    """path -> (text, tree) of each consumer file with an sglang import, from the file
    index, parsed one file at a time on first access (a warm run whose files are cached
    parses none unless a check needs a tree; parse errors are DA001 findings already)."""

    def __init__(self, usages: UsageSet, files: ConsumerFiles):
        self._paths = sglang_paths(usages)
        self._known = set(self._paths)
        self._files = files

    def __getitem__(self, path: str) -> tuple[str, ast.Module]:
        file = self._files.get(path) if path in self._known else None
        if file is None or file.text is None or file.tree is None:
            raise KeyError(path)
        return file.text, file.tree

    def __iter__(self):
        return (path for path in self._paths if path in self)

    def spelling(self, word: str) -> list[tuple[str, ast.Module]]:
        """(text, tree) of the files whose text spells `word`, in path order: the others
        are not parsed."""
        found = []
        for path in self._paths:
            file = self._files.get(path)
            if file is not None and file.text and word in file.text and file.tree is not None:
                found.append((file.text, file.tree))
        return found

    def __len__(self) -> int:
        return sum(1 for _ in self)
