"""The consumer's own re-exports of sglang names, so `from .backend import Req` is seen.

Built with `ast` (fast) over every consumer file: the module-level imports of each
module, followed through consumer modules until they reach sglang.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from driftaudit.astwalk import walk
from driftaudit.pysource import dotted
from driftaudit.usage.consumer_guards import stands_for
from driftaudit.usage.star_imports import bound_names, from_star

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
    # module with a star import from sglang -> every name it binds itself (star_imports):
    # any other name it exports comes from the star import
    bound: dict[str, frozenset[str]] = field(default_factory=dict)
    # module -> class (every module-level class) -> (base expressions as dotted names,
    # the class node or the names its body defines: `class_names`)
    classes: dict[str, dict[str, tuple[list[str], ast.ClassDef]]] = field(default_factory=dict)
    # module -> module-level name -> what it stands for in a test (`consumer_guards.Stands`:
    # a version or feature test, sglang's version), read with the module's own imports
    conditions: dict[str, dict[str, tuple]] = field(default_factory=dict)
    _exporting: dict[str, bool] = field(default_factory=dict, repr=False)  # caches
    _subclasses: dict[tuple[str, str], tuple | None] = field(default_factory=dict, repr=False)

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
                        if _is_sglang(source) and name not in self.bound:
                            self.bound[name] = bound_names(tree)
                    else:
                        table[alias.asname or alias.name] = self._target(source, alias.name)
            elif isinstance(node, ast.ClassDef):  # with sglang bases or not (`defining`)
                bases = [d for d in map(dotted, node.bases) if d]
                self.classes.setdefault(name, {})[node.name] = (bases, node)
        conditions = module_conditions(tree)
        if conditions:
            self.conditions[name] = conditions

    def condition(self, module: str, name: str, seen: frozenset = frozenset()) -> tuple | None:
        """What `name` of consumer `module` stands for in a test (`module_conditions`),
        followed through the consumer's re-exports."""
        if (module, name) in seen or len(seen) > 20:
            return None
        found = self.conditions.get(module, {}).get(name)
        if found is not None:
            return found
        entry = self.bindings.get(module, {}).get(name)
        if entry is None or entry[0] != "consumer" or not entry[2]:
            return None
        return self.condition(entry[1], entry[2], seen | {(module, name)})

    def subclass(self, module: str, name: str, seen: frozenset = frozenset()):
        """(sglang bases, own names, inherits its `__init__`, key) of consumer class `name`
        of `module`, or None; the third as `ConsumerClass.inherits_init`, along the chain;
        key: `module.Class` of its class statement (through re-exports).

        Bases are followed through the consumer's other subclasses (B(A), A(ModelRunner)).
        """
        if not seen and (module, name) in self._subclasses:
            return self._subclasses[(module, name)]
        if not seen:
            found = self._subclass(module, name, frozenset())
            self._subclasses[(module, name)] = found
            return found
        return self._subclass(module, name, seen)

    def _subclass(self, module: str, name: str, seen: frozenset):
        if (module, name) in seen or len(seen) > 10:
            return None
        seen = seen | {(module, name)}
        entry = self.classes.get(module, {}).get(name)
        if entry is None:  # perhaps re-exported: `from .model_runner import SGLangRunner`
            target = self.bindings.get(module, {}).get(name)
            if target and target[0] == "consumer" and target[2]:
                return self.subclass(target[1], target[2], seen)
            return None
        bases: list[str] = []
        body = entry[1]  # the class node, or the names it defines (usage.collect summaries)
        own = set(body if isinstance(body, frozenset) else summary_names(body))
        inherits = len(entry[0]) == 1 and not {"__init__", "__new__"} & own
        for base in entry[0]:
            head, _, rest = base.partition(".")
            found = self.lookup(module, head)
            if found is not None:
                bases.append(f"{found}.{rest}" if rest else found)
                continue
            parent = self.subclass(module, head, seen)
            if parent is None:
                target = self.bindings.get(module, {}).get(head)
                if target and target[0] == "consumer" and target[2]:
                    parent = self.subclass(target[1], target[2], seen)
            if parent is not None:
                bases += parent[0]
                own |= parent[1]
                inherits = inherits and parent[2]
        return (tuple(bases), frozenset(own), inherits, f"{module}.{name}") if bases else None

    def defining(self, module: str, name: str, seen: int = 0) -> str | None:
        """`module.Class` where consumer class `name` of `module` is defined (through
        re-exports), its key in the consumer's attribute table; None if not a class."""
        if name in self.classes.get(module, {}):
            return f"{module}.{name}"
        target = self.bindings.get(module, {}).get(name)
        if target and target[0] == "consumer" and target[2] and seen < 10:
            return self.defining(target[1], target[2], seen + 1)
        return None

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

    def star_lookup(self, module: str, name: str) -> tuple[str, ...]:
        """The sglang modules consumer `module` star-imports that `name` may come from,
        the last first (it binds no such name itself), for a name `lookup` does not find."""
        if module not in self.bound:
            return ()
        sources = [s for s in self.stars.get(module, []) if _is_sglang(s)]
        return from_star(name, sources, self.bound[module])

    def exports_sglang(self, module: str) -> bool:
        if module not in self._exporting:
            self._exporting[module] = module in self.bound or any(
                self.lookup(module, n) for n in self.bindings.get(module, {})
            )
        return self._exporting[module]


def _is_sglang(module: str) -> bool:
    return module == SGLANG or module.startswith(SGLANG + ".")


def class_names(node: ast.ClassDef) -> frozenset[str]:
    """Names a class body defines: methods, class attributes, `self.x` assignments."""
    names: set[str] = set()
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign):
            names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
    for child in walk(node):
        if isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Store):
            if isinstance(child.value, ast.Name) and child.value.id in ("self", "cls"):
                names.add(child.attr)
    return frozenset(names)


def summary_names(node: ast.ClassDef) -> frozenset[str]:
    """`class_names` as the export table keeps them: a decorator or a class keyword
    (`@dataclass`, `metaclass=`) may build the constructor, so it counts as an own
    `__init__` (calling the class is then not calling the sglang base's)."""
    names = class_names(node)
    return names | {"__init__"} if node.decorator_list or node.keywords else names


def module_conditions(tree: ast.Module) -> dict[str, tuple]:
    """Each name a module assigns once at its top level (`SGLANG_GE_0_5 = parse(sglang.
    __version__) >= parse("0.5")`, `HAS_X = hasattr(...)`, `SGL_VERSION = version(
    "sglang")`) -> what it stands for in a test (`consumer_guards.stands_for`), its names
    resolved through the module's own imports and top-level values."""
    values: dict[str, ast.expr | None] = {}
    imports: dict[str, str] = {}
    for node in _module_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                imports[bound] = alias.name if alias.asname else bound
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is not None
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                # assigned twice (a try/except fallback, a branch): not one value
                values[target.id] = None if target.id in values else node.value
    if not values:
        return {}

    def value_of(name: str) -> ast.expr | None:
        return values.get(name)

    def resolve(node: ast.expr) -> str | None:
        name = dotted(node)
        head, _, rest = (name or "").partition(".")
        target = imports.get(head)
        if target is None or not _is_sglang(target):
            return None
        return f"{target}.{rest}" if rest else target

    found = {}
    for name, value in values.items():
        stands = stands_for(value, value_of, resolve) if value is not None else None
        if stands is not None:
            found[name] = stands
    return found


def _module_level(body: list[ast.stmt]):
    """Statements run at import time: the body, and inside if/try/with blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                yield from _module_level(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _module_level(handler.body)
