"""What an sglang method reads from `self`, and what `__init__` sets, read from source.

For objects a consumer builds without `__init__`: the attributes a method reads
(`self.x`, following the `self.other()` calls it makes, a few levels deep) and the ones
the constructor assigns (`self.x = ...` in `__init__` and the methods it calls). Read
with `ast` from the file that defines the class; each file is parsed once per run, and
each answer is kept in the snapshot store (it depends on the tree alone).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import partial

from driftaudit.snapshot.api_model import Class
from driftaudit.snapshot.branch_conditions import branch_facts, exit_facts
from driftaudit.store.store import collector_paused

_DEPTH = 3
_VISITS = 64  # functions read for one method's guarded reads; more: nothing is known
SELFREADS_VERSION = "3"  # bump when an answer's meaning changes: invalidates the stored ones


class SelfReads:
    def __init__(self, snapshot):
        self.snapshot = snapshot
        self._files: dict[str, ast.Module | None] = {}

    def _class_node(self, path: str) -> ast.ClassDef | None:
        found = self.snapshot.resolve(path)
        if found is None or found.opaque or not isinstance(found.obj, Class):
            return None
        module = found.module
        if module is None:
            return None
        tree = self._parsed(module.file)
        name = found.canonical.rpartition(".")[2]
        if tree is None:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == name:
                if found.obj.lineno in (None, node.lineno) or any(
                    d.lineno == found.obj.lineno for d in node.decorator_list
                ):
                    return node
        return None

    def _parsed(self, file: str) -> ast.Module | None:
        if file not in self._files:
            source = self.snapshot.tree.root / file
            try:
                with collector_paused():
                    self._files[file] = ast.parse(source.read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                self._files[file] = None
        return self._files[file]

    def method(self, cls: str, name: str) -> tuple[str, ast.FunctionDef] | None:
        """The definition a call of `cls.name` runs: (its class's path, its node)."""
        found = self.snapshot.resolve(f"{cls}.{name}")
        if found is None or found.opaque:
            return None
        owner = found.canonical.rpartition(".")[0]
        node = self._class_node(owner)
        if node is None:
            return None
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if statement.name == name:
                    return owner, statement
        return None

    def _stored(self, question: str, compute: Callable, load: Callable):
        """The answer to `question` on this tree (JSON-ready from `compute`, turned back
        by `load`), kept in the snapshot store."""
        key = f"selfreads:{SELFREADS_VERSION}:{self.snapshot.digest}:{question}"
        return self.snapshot.kept(key, compute, load)

    def reads(self, cls: str, name: str) -> tuple[dict[str, int], set[str]] | None:
        """Attributes `cls.name` reads from self (-> first line), and those it (or the
        methods it calls) assigns itself; None when the method is not found."""
        compute = partial(_dump_pair, self._reads, cls, name)
        return self._stored(f"reads:{cls}:{name}", compute, _pair)

    def _reads(self, cls: str, name: str) -> tuple[dict[str, int], set[str]] | None:
        start = self.method(cls, name)
        if start is None:
            return None
        reads: dict[str, int] = {}
        stores: set[str] = set()
        seen: set[str] = set()
        pending = [(start[1], 0)]
        while pending:
            function, depth = pending.pop()
            if function.name in seen:
                continue
            seen.add(function.name)
            own_reads, own_stores, called = _self_accesses(function)
            stores |= own_stores
            for attr, line in own_reads.items():
                reads.setdefault(attr, line)
            if depth < _DEPTH:
                for callee in called:
                    found = self.method(cls, callee)
                    if found is not None:
                        pending.append((found[1], depth + 1))
        return reads, stores

    def read_guards(self, cls: str, name: str) -> dict[str, list[list[list]]]:
        """Each attribute `cls.name` reads from self (through the methods it calls) ->
        one entry per place that reads it: the conditions on the object's own attributes
        (`[subject, op, values]`, see `branch_conditions`) that hold there, on the way
        from `name` included. Empty when the methods are too many to follow."""
        return self._stored(
            f"guards:{cls}:{name}", partial(self._read_guards, cls, name), _guarded_places
        )

    def _read_guards(self, cls: str, name: str) -> dict[str, list[list[list]]]:
        start = self.method(cls, name)
        if start is None:
            return {}
        places: dict[str, list[list[list]]] = {}
        pending: list[tuple[ast.FunctionDef, int, list[list]]] = [(start[1], 0, [])]
        for _ in range(_VISITS):
            if not pending:
                return places
            function, depth, above = pending.pop()
            reads, calls, facts = _guarded_accesses(function)
            for attr, line in reads:
                places.setdefault(attr, []).append(above + _holding(facts, line))
            if depth < _DEPTH:
                for callee, line in calls:
                    found = self.method(cls, callee)
                    if found is not None:
                        pending.append((found[1], depth + 1, above + _holding(facts, line)))
        return {} if pending else places

    def init_sets(self, cls: str) -> dict[str, int]:
        """Attributes the constructor assigns (-> line), through the methods it calls."""
        return self._stored(f"init:{cls}", partial(self._init_sets, cls), _lines)

    def _init_sets(self, cls: str) -> dict[str, int]:
        found = self.reads(cls, "__init__")
        if found is None:
            return {}
        start = self.method(cls, "__init__")
        sets: dict[str, int] = {}
        pending, seen = [(start[1], 0)], set()
        while pending:
            function, depth = pending.pop()
            if function.name in seen:
                continue
            seen.add(function.name)
            for node in ast.walk(function):
                target = _self_attribute(node)
                if target is not None and isinstance(node.ctx, ast.Store):
                    sets.setdefault(target, node.lineno)
            if depth < _DEPTH:
                for callee in _self_accesses(function)[2]:
                    method = self.method(cls, callee)
                    if method is not None:
                        pending.append((method[1], depth + 1))
        return sets

    def parameter_reads(self, path: str, param: str) -> tuple[dict[str, int], set[str]] | None:
        """Attributes a function reads from one of its parameters (`param.x`), and those
        it assigns or reads with a fallback; None when the function is not found."""
        compute = partial(_dump_pair, self._parameter_reads, path, param)
        return self._stored(f"param:{path}:{param}", compute, _pair)

    def _parameter_reads(self, path: str, param: str):
        found = self.snapshot.resolve(path)
        if found is None or found.opaque or found.module is None:
            return None
        tree = self._parsed(found.module.file)
        lineno = getattr(found.obj, "lineno", None)
        name = found.canonical.rpartition(".")[2]
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                if lineno in (None, node.lineno) or any(
                    d.lineno == lineno for d in node.decorator_list
                ):
                    reads, stores, _ = _self_accesses(node, param)
                    return reads, stores
        return None

    def class_level(self, cls: str, name: str) -> bool:
        """Is `name` a method, property or class attribute (not set per instance)?"""
        found = self.snapshot.resolve(f"{cls}.{name}")
        if found is None or found.opaque:
            return False
        labels = getattr(found.obj, "labels", [])
        return "instance-attribute" not in labels


def _dump_pair(compute: Callable, *args) -> list | None:
    """A (reads, stores) answer as JSON holds it: the set as a sorted list."""
    value = compute(*args)
    return None if value is None else [value[0], sorted(value[1])]


def _pair(value) -> tuple[dict[str, int], set[str]] | None:
    """A stored (reads, stores) answer, or None."""
    if value is None:
        return None
    reads, stores = value
    return _lines(reads), {str(s) for s in stores}


def _lines(value) -> dict[str, int]:
    if not isinstance(value, dict) or not all(isinstance(v, int) for v in value.values()):
        raise TypeError("not a name -> line table")
    return value


def _guarded_places(value) -> dict[str, list[list[list]]]:
    if not isinstance(value, dict) or not all(
        isinstance(places, list)
        and all(isinstance(place, list) and all(len(g) == 3 for g in place) for place in places)
        for places in value.values()
    ):
        raise TypeError("not an attribute -> guarded places table")
    return value


def _holding(facts: list[list], line: int) -> list[list]:
    """The conditions (subject, op, values) that hold at `line`."""
    return [fact[2:] for fact in facts if fact[0] <= line <= fact[1]]


def _guarded_accesses(
    function: ast.FunctionDef,
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], list[list]]:
    """(self.x read, line), (self.m() called, line) and the branch conditions on the
    object's attributes (`branch_conditions`: the if/else branches and what follows an
    early exit) in one function body."""
    args = function.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    reads, calls, facts = [], [], []
    for node in ast.walk(function):
        if isinstance(node, ast.If):
            facts += branch_facts(node, "self", params)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and len(block) > 1:
                facts += exit_facts(block, "self", params)
        if isinstance(node, ast.Call):
            callee = _self_attribute(node.func)
            if callee is not None:
                calls.append((callee, node.lineno))
        attr = _self_attribute(node)
        if attr is not None and isinstance(node.ctx, ast.Load):
            reads.append((attr, node.lineno))
    return reads, calls, [f for f in facts if f[2].startswith("self.")]


def _self_attribute(node: ast.AST, receiver: str = "self") -> str | None:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == receiver
    ):
        return node.attr
    return None


def _self_accesses(
    function: ast.FunctionDef, receiver: str = "self"
) -> tuple[dict[str, int], set[str], list[str]]:
    """(self.x read -> line, self.x assigned or read with a fallback, self.m() called)
    in one function body."""
    reads: dict[str, int] = {}
    stores: set[str] = set()
    called: list[str] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            callee = _self_attribute(node.func, receiver)
            if callee is not None:
                called.append(callee)
            # hasattr(self, "x") / getattr(self, "x", default): read with a fallback
            if (
                isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr")
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == receiver
                and isinstance(node.args[1], ast.Constant)
            ):
                stores.add(str(node.args[1].value))
        attr = _self_attribute(node, receiver)
        if attr is None:
            continue
        if isinstance(node.ctx, ast.Load):
            reads[attr] = min(node.lineno, reads.get(attr, node.lineno))
        else:
            stores.add(attr)
    return reads, stores, called
