"""What an sglang method reads from `self`, and what `__init__` sets, read from source.

For objects a consumer builds without `__init__`: the attributes a method reads
(`self.x`, following the `self.other()` calls it makes, a few levels deep, and one call
deep into the functions it hands `self` to: `helper(self)`), the members
it reads on them (`self.x.y`), and the ones the constructor assigns (`self.x = ...` in
`__init__` and the methods it calls). For stand-ins a consumer hands to a function: the
attributes it reads on that parameter, one call deep into the helpers it passes it to. Read
with `ast` from the file that defines the class; each file is parsed once per run, and
each answer is kept in the snapshot store (it depends on the tree alone).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import partial

from driftaudit.pysource import dotted
from driftaudit.snapshot.api_model import Alias, Class
from driftaudit.snapshot.branch_conditions import branch_facts, exit_facts
from driftaudit.store.store import collector_paused

_DEPTH = 3
_VISITS = 64  # functions read for one method's guarded reads; more: nothing is known
SELFREADS_VERSION = "5"  # bump when an answer's meaning changes: invalidates the stored ones


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
        for owner, function, (own_reads, own_stores, _) in self._reached(cls, start):
            stores |= own_stores
            for attr, line in own_reads.items():
                reads.setdefault(attr, line)
            for attr, (_, call_line) in self._handed(owner, function, stores).items():
                reads.setdefault(attr, call_line)  # the call, in the method's own file
        return reads, stores

    def _reached(
        self, cls: str, start: tuple[str, ast.FunctionDef]
    ) -> Iterator[tuple[str, ast.FunctionDef, tuple]]:
        """The methods a method of `cls` runs on self: `start` (owner, function) first,
        then those it calls, to `_DEPTH` calls deep, each once; with its
        `_self_accesses`."""
        seen: set[str] = set()
        pending = [(start, 0)]
        while pending:
            (owner, function), depth = pending.pop()
            if function.name in seen:
                continue
            seen.add(function.name)
            accesses = _self_accesses(function)
            yield owner, function, accesses
            if depth < _DEPTH:
                for callee in accesses[2]:
                    method = self.method(cls, callee)
                    if method is not None:
                        pending.append((method, depth + 1))

    def _file(self, owner: str) -> str:
        found = self.snapshot.resolve(owner)
        return found.module.file if found is not None and found.module else ""

    def _handed(self, owner: str, function: ast.FunctionDef, stores: set[str]) -> dict:
        """What the functions `function` hands `self` to read on it, one call deep
        (`helper(self)`, `module.helper(x, obj=self)`): attr -> (`file:line` of the read,
        line of the call); what they assign or read with a fallback goes into `stores`."""
        accesses = _parameter_accesses(function, "self")
        caller = self.snapshot.resolve(f"{owner}.{function.name}")
        if accesses is None or caller is None or caller.module is None:
            return {}
        found: dict[str, tuple[str, int]] = {}
        for callee, argument, call_line in _passed_at(function, "self"):
            if callee.startswith("self."):
                continue  # a method of its own: followed as one
            helper = self._helper(caller, callee)
            located = self._function(helper) if helper else None
            if located is None:
                continue
            file, node, _ = located
            name = _bound_name(node, argument, False)
            inner = _parameter_accesses(node, name) if name else None
            if inner is None:
                continue
            stores |= inner[1]
            for attr, line in inner[0].items():
                found.setdefault(attr, (f"{file}:{line}", call_line))
        return found

    def read_places(self, cls: str, name: str) -> dict[str, str]:
        """Attributes `cls.name` reads from self, as `reads`, each at the `file:line` of
        its first read in the method that reads it (a base's or a mixin's file)."""
        return self._stored(f"places:{cls}:{name}", partial(self._read_places, cls, name), _places)

    def _read_places(self, cls: str, name: str) -> dict[str, str]:
        start = self.method(cls, name)
        if start is None:
            return {}
        places: dict[str, str] = {}
        for owner, function, (own_reads, _, _) in self._reached(cls, start):
            file = self._file(owner)
            for attr, line in own_reads.items():
                places.setdefault(attr, f"{file}:{line}")
            for attr, (place, _) in self._handed(owner, function, set()).items():
                places.setdefault(attr, place)
        return places

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
        if start is None:  # `reads` found it: only a guard for the type checker
            return {}
        sets: dict[str, int] = {}
        for _, function, _ in self._reached(cls, start):
            for node in ast.walk(function):
                target = _self_attribute(node)
                if target is not None and isinstance(node.ctx, ast.Store):
                    sets.setdefault(target, node.lineno)
        return sets

    def parameter_reads(self, path: str, param: str) -> tuple[dict[str, str], set[str]] | None:
        """Attributes a function reads from one of its parameters (`param.x` -> the
        `file:line` of its first read), there and in the helpers it passes the parameter
        to (one call deep: a function of its module, or imported, or `self.m`), and those
        it assigns or reads with a fallback; None when the function is not found or
        rebinds the parameter."""
        compute = partial(_dump_pair, self._parameter_reads, path, param)
        return self._stored(f"param:{path}:{param}", compute, _located_pair)

    def _parameter_reads(self, path: str, param: str):
        found = self._function(path)
        if found is None:
            return None
        file, node, resolved = found
        own = _parameter_accesses(node, param)
        if own is None:
            return None
        reads = {attr: f"{file}:{line}" for attr, line in own[0].items()}
        stores = set(own[1])
        for callee, helper_param in own[2]:
            helper = self._helper(resolved, callee)
            if helper is None:
                continue
            helper_found = self._function(helper)
            if helper_found is None:
                continue
            helper_file, helper_node, _ = helper_found
            name = _bound_name(helper_node, helper_param, callee.startswith("self."))
            inner = _parameter_accesses(helper_node, name) if name else None
            if inner is None:
                continue
            for attr, line in inner[0].items():
                reads.setdefault(attr, f"{helper_file}:{line}")
            stores |= inner[1]
        return reads, stores

    def _function(self, path: str) -> tuple[str, ast.FunctionDef, object] | None:
        """(file, definition, resolved) of the function or method at `path`."""
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
                    return found.module.file, node, found
        return None

    def _helper(self, caller, callee: str) -> str | None:
        """The sglang path of a function `caller` calls by `callee` (`helper`,
        `module.helper`, `self.method`), as its module sees the name."""
        first, _, rest = callee.partition(".")
        if first == "self":
            owner = caller.canonical.rpartition(".")[0]
            found = self.snapshot.resolve(owner)
            if found is None or not isinstance(found.obj, Class) or "." in rest:
                return None
            return f"{owner}.{rest}"
        member = caller.module.members.get(first)
        if isinstance(member, Alias):
            path = member.target
        elif member is not None:
            path = f"{caller.module.name}.{first}"
        else:
            return None
        return f"{path}.{rest}" if rest else path

    def member_reads(self, cls: str, name: str) -> tuple[dict[str, dict[str, str]], set[str]]:
        """The members `cls.name` reads on its own attributes (`self.x.y`: x -> y -> the
        `file:line` of its first read), through the methods it calls, and those read with
        a fallback or assigned (`"x.y"`). Empty when the method is not found."""
        compute = partial(self._member_reads, cls, name)
        return self._stored(f"members:{cls}:{name}", compute, _member_table)

    def _member_reads(self, cls: str, name: str) -> list:
        start = self.method(cls, name)
        if start is None:
            return [{}, []]
        reads: dict[str, dict[str, str]] = {}
        fallbacks: set[str] = set()
        for owner, function, _ in self._reached(cls, start):
            file = self._file(owner)
            for node in sorted(ast.walk(function), key=lambda n: getattr(n, "lineno", 0)):
                chain = dotted(node) if isinstance(node, ast.Attribute) else None
                parts = chain.split(".") if chain else []
                if len(parts) == 3 and parts[0] == "self":
                    if isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                        members = reads.setdefault(parts[1], {})
                        members.setdefault(parts[2], f"{file}:{node.lineno}")
                    else:
                        fallbacks.add(f"{parts[1]}.{parts[2]}")
                fallback = _fallback(node)
                if fallback is not None:
                    holder, attr = fallback
                    if holder.startswith("self.") and holder.count(".") == 1:
                        fallbacks.add(f"{holder[5:]}.{attr}")
        return [reads, sorted(fallbacks)]

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


def _located_pair(value) -> tuple[dict[str, str], set[str]] | None:
    """A stored (reads at `file:line`, stores) answer, or None."""
    if value is None:
        return None
    reads, stores = value
    if not isinstance(reads, dict) or not all(isinstance(v, str) for v in reads.values()):
        raise TypeError("not a name -> place table")
    return reads, {str(s) for s in stores}


def _places(value) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TypeError("not a name -> place table")
    return value


def _member_table(value) -> tuple[dict[str, dict[str, str]], set[str]]:
    reads, fallbacks = value
    if not isinstance(reads, dict) or not all(
        isinstance(members, dict) and all(isinstance(v, str) for v in members.values())
        for members in reads.values()
    ):
        raise TypeError("not an attribute -> member -> line table")
    return reads, {str(f) for f in fallbacks}


def _parameter_accesses(
    function: ast.FunctionDef, param: str
) -> tuple[dict[str, int], set[str], list[tuple[str, str]]] | None:
    """(param.x read -> line, param.x assigned or read with a fallback, (callee, "0" or a
    keyword) for each call that passes the parameter on); None when the function rebinds
    it (its reads are then of another object)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == param and isinstance(node.ctx, ast.Store):
            return None
    reads, stores, _ = _self_accesses(function, param)
    return (
        reads,
        stores,
        [(callee, argument) for callee, argument, _ in _passed_at(function, param)],
    )


def _passed_at(function: ast.FunctionDef, param: str) -> list[tuple[str, str, int]]:
    """(callee, "0" or a keyword, line) for each call that passes the parameter on."""
    passed = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        callee = dotted(node.func)
        if callee is None:
            continue
        for index, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            if isinstance(arg, ast.Name) and arg.id == param:
                passed.append((callee, str(index), node.lineno))
        for keyword in node.keywords:
            if keyword.arg and isinstance(keyword.value, ast.Name) and keyword.value.id == param:
                passed.append((callee, keyword.arg, node.lineno))
    return passed


def _bound_name(function: ast.FunctionDef, argument: str, bound: bool) -> str | None:
    """The parameter of `function` an argument binds to (a position or a keyword);
    `bound`: called on an instance (`self` is given)."""
    args = function.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    if bound:
        positional = positional[1:]
    if not argument.isdigit():
        names = positional + [a.arg for a in args.kwonlyargs]
        return argument if argument in names else None
    index = int(argument)
    return positional[index] if index < len(positional) else None


def _fallback(node: ast.AST) -> tuple[str, str] | None:
    """`hasattr(x, "a")` / `getattr(x, "a", default)` -> ("x", "a")."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and (
            (node.func.id == "hasattr" and len(node.args) == 2)
            or (node.func.id == "getattr" and len(node.args) == 3)
        )
        and isinstance(node.args[1], ast.Constant)
    ):
        holder = dotted(node.args[0])
        if holder is not None:
            return holder, str(node.args[1].value)
    return None


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
