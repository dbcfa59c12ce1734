"""Behaviour-preserving rewrites of a function, undone so its diff shows only what changes.

Upstream often restructures code without changing what it does; a copy of the old code
has nothing to port then. Each rewrite here keeps the semantics of the function:

- `decided`: the branches a copy's asserts decide (`assert not C` makes `if C:` dead and
  `if not C:` always taken; facts keyed by the condition's source), the statements after
  a `return` or `raise` in the same block (never run), `del` of plain locals (only frees
  memory);
- `inlined`: a call of a function replaced by that function's body with its parameters
  bound to the call's arguments (`x = f(a)` with `return`s in tail position becoming
  `x = ...`, `if c: return a` followed by more read as `if c: ... else: ...`), the
  reverse of an "extract function";
- `moved_back`: a statement of the function's top level that the new code moved past
  statements it does not depend on (names it reads they do not bind, names it binds they
  do not use, no exit in between), put back where the old code had it. Names only: what
  a call does to the objects it is given is not followed.

Hand-written over the stdlib `ast`: no maintained library undoes refactors of Python.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from difflib import SequenceMatcher

from driftaudit.astwalk import walk
from driftaudit.similarity import FunctionNode, body_statements

Pins = frozenset[tuple[str, bool]]  # (a condition's source, the truth a copy asserts)
Lookup = Callable[[ast.Call], FunctionNode | None]  # the function a call runs, if known

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def asserted(fn: FunctionNode) -> Pins:
    """The conditions a function asserts on its top level: `assert C` pins C true,
    `assert not C` pins it false, `assert A and B` both."""
    found: set[tuple[str, bool]] = set()
    todo = [s.test for s in body_statements(fn) if isinstance(s, ast.Assert)]
    while todo:
        test = todo.pop()
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            todo.extend(test.values)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            found.add((ast.unparse(test.operand), False))
        elif not isinstance(test, ast.Constant):
            found.add((ast.unparse(test), True))
    return frozenset(found)


def decide(test: ast.expr, leaf: Callable[[ast.expr], bool | None]) -> bool | None:
    """The truth of `test` where `leaf` knows a part's (tried first on every part, then
    through `not`, `and`, `or`), else None."""
    known = leaf(test)
    if known is not None:
        return known
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = decide(test.operand, leaf)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [decide(v, leaf) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # True decides an `or`, False an `and`
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    return None


def truth(test: ast.expr, pins: dict[str, bool]) -> bool | None:
    """The truth of `test` the pins (conditions by their source) decide, else None."""
    return decide(test, lambda part: pins.get(ast.unparse(part)))


def decided(fn: FunctionNode, pins: Pins = frozenset()) -> FunctionNode:
    """A copy of `fn` with the branches `pins` decide reduced to the arm taken, the code
    after an exit and `del` of plain names dropped."""
    return _Decided(dict(pins)).visit(copy.deepcopy(fn))


class _Decided(ast.NodeTransformer):
    def __init__(self, pins: dict[str, bool]):
        self.pins = pins

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, _live_prefix(block) or ([ast.Pass()] if name == "body" else []))
        return node

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        taken = truth(node.test, self.pins)
        if taken is None:
            return node
        return node.body if taken else node.orelse

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        taken = truth(node.test, self.pins)
        if taken is None:
            return node
        return node.body if taken else node.orelse

    def visit_Delete(self, node: ast.Delete):
        return None if all(isinstance(t, ast.Name) for t in node.targets) else node


def unread(fn: FunctionNode) -> frozenset[str]:
    """The locals a function binds and never reads (anywhere in it, nested scopes
    included); none when it can read them by name (`locals()`, `vars()`, `eval`,
    `exec`) or shares them (`global`, `nonlocal`)."""
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in walk(fn):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            return frozenset()
    if loaded & {"locals", "vars", "eval", "exec"}:
        return frozenset()
    return frozenset(bound - loaded)


def values_dropped(fn: FunctionNode, names: frozenset[str]) -> FunctionNode:
    """A copy of `fn` without the statements that bind one of `names` (`x = value`,
    `x: T = value`) where `fn` reads it later: a value computed for a reader a copy
    does not have. A binding `fn` never reads (`_ = setup()`) is kept: it is there for
    what its call does."""
    if not names:
        return fn
    loaded = {n.id for n in walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return _ValuesDropped(names & loaded).visit(copy.deepcopy(fn))


class _ValuesDropped(ast.NodeTransformer):
    def __init__(self, names: frozenset[str]):
        self.names = names

    def _target(self, target: ast.expr) -> bool:
        return isinstance(target, ast.Name) and target.id in self.names

    def visit_Assign(self, node: ast.Assign):
        return None if len(node.targets) == 1 and self._target(node.targets[0]) else node

    def visit_AnnAssign(self, node: ast.AnnAssign):
        return None if node.value is not None and self._target(node.target) else node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if name == "body" and isinstance(block, list) and not block:
                node.body = [ast.Pass()]  # type: ignore[attr-defined]
        return node


def _live_prefix(block: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a block up to and including its first exit."""
    for number, statement in enumerate(block):
        if isinstance(statement, _EXITS):
            return block[: number + 1]
    return block


def inlined(
    fn: FunctionNode, old: FunctionNode, lookup: Lookup, cost: Callable[[FunctionNode], int]
) -> FunctionNode:
    """`fn` with each new call (a statement the old function does not have) whose function
    `lookup` finds replaced by that function's body, where that lowers `cost` (the old
    lines the diff touches): inlining keeps the semantics, so the diff after it is as true
    as before, and shows less when the call replaced the same code."""
    had = {ast.dump(n) for n in walk(old) if isinstance(n, ast.stmt)}
    best = cost(fn)
    number = 0
    while best and number < len(sites := _sites(fn)):
        block, index = sites[number]
        number += 1
        if ast.dump(block[index]) in had or lookup(block[index].value) is None:  # type: ignore[attr-defined]
            continue
        candidate = copy.deepcopy(fn)
        if not _inline(_sites(candidate)[number - 1], lookup):
            continue
        score = cost(candidate)
        if score < best:
            fn, best = candidate, score
    return fn


def _sites(fn: FunctionNode) -> list[tuple[list[ast.stmt], int]]:
    """The statements of `fn` that are a call, its value assigned to one name, or returned:
    (block, index) pairs, in source order."""
    found = []
    for node in walk(fn):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for index, statement in enumerate(block):
                value = getattr(statement, "value", None)
                if isinstance(value, ast.Call) and (
                    isinstance(statement, (ast.Expr, ast.Return))
                    or (
                        isinstance(statement, ast.Assign)
                        and len(statement.targets) == 1
                        and isinstance(statement.targets[0], ast.Name)
                    )
                ):
                    found.append((block, index))
    return found


def _inline(site: tuple[list[ast.stmt], int], lookup: Lookup) -> bool:
    block, index = site
    statement = block[index]
    call = statement.value  # type: ignore[attr-defined]
    callee = lookup(call)
    if callee is None:
        return False
    body = _bound(callee, call)
    if body is None:
        return False
    if isinstance(statement, ast.Assign):
        body = _tail_assigned(body, statement.targets[0])
    elif isinstance(statement, ast.Expr):
        body = body if not any(isinstance(n, ast.Return) for s in body for n in walk(s)) else None
    elif not _all_paths_return(body):
        body = None  # `return f()`: f's body must end every path in a `return`
    if body is None:
        return False
    block[index : index + 1] = body
    return True


def _bound(callee: FunctionNode, call: ast.Call) -> list[ast.stmt] | None:
    """The callee's body with its parameters replaced by the call's arguments; None when
    they do not bind plainly (star arguments, a parameter rebound, a missing value)."""
    args = callee.args
    if args.vararg or args.kwarg or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    positional = args.posonlyargs + args.args
    bound: dict[str, ast.expr] = {}
    defaults = dict(
        zip(
            [a.arg for a in positional[len(positional) - len(args.defaults) :]],
            args.defaults,
            strict=True,
        )
    )
    defaults |= {
        a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    }
    if isinstance(call.func, ast.Attribute) and positional and positional[0].arg in ("self", "cls"):
        bound[positional[0].arg] = call.func.value  # a method: its receiver
        positional = positional[1:]
    if len(call.args) > len(positional):
        return None
    bound |= {p.arg: a for p, a in zip(positional, call.args, strict=False)}
    bound |= {k.arg: k.value for k in call.keywords if k.arg is not None}
    for parameter in positional + args.kwonlyargs:
        if parameter.arg not in bound:
            if parameter.arg not in defaults:
                return None
            bound[parameter.arg] = defaults[parameter.arg]
    body = copy.deepcopy(body_statements(callee))
    for node in (n for s in body for n in walk(s)):
        if isinstance(node, ast.Name) and node.id in bound and not isinstance(node.ctx, ast.Load):
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None  # a scope of its own: names in it are not the parameters
    module = ast.Module(body=body, type_ignores=[])
    return _Substituted(bound).visit(module).body


class _Substituted(ast.NodeTransformer):
    def __init__(self, bound: dict[str, ast.expr]):
        self.bound = bound

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.bound:
            return copy.deepcopy(self.bound[node.id])
        return node


def _tail_assigned(body: list[ast.stmt], target: ast.expr) -> list[ast.stmt] | None:
    """`body` with each `return e` in tail position made `target = e`; None when a
    `return` sits elsewhere (it would skip code the caller runs). A path that falls off
    the end (the call's None) is taken as the old code's chain without an `else`."""
    if not body:
        return body
    for index, statement in enumerate(body[:-1]):  # `if c: return a` then more: an `else`
        if isinstance(statement, ast.If) and not statement.orelse:
            if _all_paths_return(statement.body):
                rest = body[index + 1 :]
                body = [*body[:index], ast.If(statement.test, statement.body, rest)]
                ast.copy_location(body[-1], statement)
                break
    *head, last = body
    if any(isinstance(n, ast.Return) for s in head for n in walk(s)):
        return None
    if isinstance(last, ast.Return):
        value = last.value if last.value is not None else ast.Constant(None)
        return [*head, ast.Assign(targets=[copy.deepcopy(target)], value=value, lineno=last.lineno)]
    if isinstance(last, ast.If):
        then = _tail_assigned(last.body, target)
        orelse = _tail_assigned(last.orelse, target)
        if then is None or orelse is None:
            return None
        return [*head, ast.If(test=last.test, body=then, orelse=orelse, lineno=last.lineno)]
    if any(isinstance(n, ast.Return) for n in walk(last)):
        return None
    return body


def _all_paths_return(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _all_paths_return(last.body) and _all_paths_return(last.orelse)
    return False


def moved_back(
    new: FunctionNode, old: FunctionNode, cost: Callable[[FunctionNode], int]
) -> FunctionNode:
    """`new` with top-level statements that also stand, unchanged, on the old top level
    moved across statements independent of them, where that lowers `cost`."""
    old_keys = [ast.dump(s) for s in body_statements(old)]
    best = cost(new)
    improved = True
    while improved and best:
        improved = False
        block = new.body
        keys = [ast.dump(s) for s in block]
        unaligned = [  # statements of both blocks that a statement-level diff leaves apart
            (old_keys[i1:i2], range(j1, j2))
            for tag, i1, i2, j1, j2 in SequenceMatcher(
                None, old_keys, keys, autojunk=False
            ).get_opcodes()
            if tag != "equal"
        ]
        elsewhere = {k for removed, _ in unaligned for k in removed}
        for at in (j for _, added in unaligned for j in added):
            if keys[at] not in elsewhere:
                continue
            for target in range(len(block) + 1):
                if target in (at, at + 1) or not _independent(block, at, target):
                    continue
                candidate = copy.deepcopy(new)
                moving = candidate.body.pop(at)
                candidate.body.insert(target if target < at else target - 1, moving)
                score = cost(candidate)
                if score < best:
                    new, best, improved = candidate, score, True
                    break
            if improved:
                break
    return new


def _independent(block: list[ast.stmt], at: int, target: int) -> bool:
    statement = block[at]
    crossed = block[target:at] if target < at else block[at + 1 : target]
    reads, binds = _uses(statement)
    for other in [statement, *crossed]:
        if any(isinstance(n, _EXITS) for n in walk(other)):
            return False
        if other is statement:
            continue
        other_reads, other_binds = _uses(other)
        if binds & (other_reads | other_binds) or reads & other_binds:
            return False
    return True


def _uses(statement: ast.stmt) -> tuple[set[str], set[str]]:
    """The names a statement reads and those it binds (an attribute or item stored or
    deleted binds its root name); a comprehension's own variables are its own."""
    reads: set[str] = set()
    binds: set[str] = set()
    _collect(statement, frozenset(), reads, binds)
    return reads, binds


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _collect(node: ast.AST, own: frozenset[str], reads: set[str], binds: set[str]) -> None:
    if isinstance(node, _COMPREHENSIONS):
        own = own | {
            n.id for g in node.generators for n in walk(g.target) if isinstance(n, ast.Name)
        }
    if isinstance(node, ast.Name) and node.id not in own:
        (reads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
    elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
        root = node.value
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name) and root.id not in own:
            binds.add(root.id)
    for child in ast.iter_child_nodes(node):
        _collect(child, own, reads, binds)
