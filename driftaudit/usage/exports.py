"""The consumer's own re-exports of sglang names, so `from .backend import Req` is seen.

Built with `ast` (fast) over every consumer file: the module-level imports of each
module, followed through consumer modules until they reach sglang.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

SGLANG = "sglang"


def absolute_module(current: str, is_package: bool, level: int, module: str | None) -> str:
    """Resolve a relative import (`from ..x import y` in `current`) to a dotted name."""
    if level == 0:
        return module or ""
    parts = current.split(".") if current else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


@dataclass
class ConsumerExports:
    modules: set[str] = field(default_factory=set)
    # module -> name -> ("sglang", path) | ("consumer", module, attr or "")
    bindings: dict[str, dict[str, tuple]] = field(default_factory=dict)
    stars: dict[str, list[str]] = field(default_factory=dict)  # consumer star imports

    def add_module(self, name: str, tree: ast.Module | None, is_package: bool) -> None:
        self.modules.add(name)
        if tree is None:
            return
        table = self.bindings.setdefault(name, {})
        for node in _module_level(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        table[alias.asname] = self._target(alias.name, "")
            elif isinstance(node, ast.ImportFrom):
                source = absolute_module(name, is_package, node.level, node.module)
                for alias in node.names:
                    if alias.name == "*":
                        self.stars.setdefault(name, []).append(source)
                    else:
                        table[alias.asname or alias.name] = self._target(source, alias.name)

    @staticmethod
    def _target(module: str, attr: str) -> tuple:
        if module == SGLANG or module.startswith(SGLANG + "."):
            return (SGLANG, f"{module}.{attr}" if attr else module)
        return ("consumer", module, attr)

    def lookup(self, module: str, name: str, seen: frozenset = frozenset()) -> str | None:
        """The sglang path that `name` of consumer `module` names, or None."""
        if (module, name) in seen or len(seen) > 20:
            return None
        seen = seen | {(module, name)}
        entry = self.bindings.get(module, {}).get(name)
        if entry is None:
            for source in self.stars.get(module, []):
                found = self.lookup(source, name, seen)
                if found:
                    return found
            return None
        if entry[0] == SGLANG:
            return entry[1]
        _, source, attr = entry
        if not attr:
            return None
        if f"{source}.{attr}" in self.modules:
            return None  # a consumer module, not an sglang name
        return self.lookup(source, attr, seen)

    def exports_sglang(self, module: str) -> bool:
        return any(self.lookup(module, n) for n in self.bindings.get(module, {}))


def _module_level(body: list[ast.stmt]):
    """Statements run at import time: the body, and inside if/try/with blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                yield from _module_level(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _module_level(handler.body)
