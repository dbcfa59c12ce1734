"""A function's code changed between two releases: the change a copy of it has to port.

The body is compared normalised (`similarity.function_tokens`: comments, docstrings and
formatting do not count); the diff shown is the plain unified diff of the two sources,
with the line numbers of the real files, so it reads (and applies) like an upstream patch.

What a copy has to port is smaller than the diff: of the old lines the diff touches
(`changed_lines`: a changed line, or the line before an insertion), those a diff of the
normalised tokens also touches (a renamed local or a reworded message is nothing to port),
taken after the new code's new modes are turned off
(`_new_modes_off`): a branch or a conditional expression that runs only when something the
old function never read holds (a conjunct of its condition, not negated, reading a new
flag, helper or argument: `if self.server_args.new_flag and ...`, `if new_helper():`,
`x if new_arg is not None else ...`; a new local of the function is not a new mode, it
carries old data; a new parameter with a falsy default is a new mode's input, and passing
it on, `f(..., quant_config=quant_config)`, is left out too) runs only in a mode the old
code did not have, and a copy of the old code never runs it; unless what it reads is a
setting on by default (`_on_by_default`: a ServerArgs field whose default is not falsy or
not known, an environment variable of the new tree with a default that is not falsy),
which the new code runs unasked. Its else arm stays, and a local that the change
introduced to carry such a value is put back in place, so
`use_x = True if new_mode() else OLD; f(x=use_x)` reads as the old `f(x=OLD)`. A keyword
the new code passes and the old never did is left out where it passes what the callee
uses without it (`_DefaultsLeftOut`: a literal equal to the parameter's default in the new
tree's API model, or a ServerArgs field whose default equals it), and the text an
`f"{x=}"` writes before its value is dropped (it spells the expression, compared already).
The statements binding a local the copy never reads (`refactors.values_dropped`: where
upstream reads it later, a value for a reader the copy does not have) are left out on
both sides. When all that differs is new modes, there is nothing to port. Both sides are
then taken with the behaviour-preserving refactors of `drift.refactors` undone (the
branches the copy's asserts decide, an extracted function inlined back, independent
statements moved back), an inlining or a move kept only where it leaves fewer old lines
changed.
"""

from __future__ import annotations

import ast
import copy
import difflib
import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from driftaudit import codes
from driftaudit.astwalk import walk
from driftaudit.drift.changes import Change, short_name
from driftaudit.drift.refactors import Pins, decided, inlined, moved_back, values_dropped
from driftaudit.similarity import FunctionNode, compare, function_tokens
from driftaudit.snapshot.fingerprints import FunctionPrint, find_function

MAX_MOVED_CANDIDATES = 10  # modules of the new tree defining the same top-level name
MIN_MOVED_SIMILARITY = 0.5  # a moved function still looks like the original

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class BodyChanged(Change):
    """The code of `symbol` changed (or the function is gone from the new release)."""

    diff: str = ""  # unified diff old -> new, paths and line numbers of the real files
    changed_lines: set[int] = field(default_factory=set)  # old lines the change touches
    added: int = 0
    removed: int = 0
    gone: bool = False
    moved_to: str = ""  # the module that defines it now, when it moved

    code = codes.COPIED_CODE_DRIFTED

    def explain(self) -> str:
        if self.gone:
            return f"`{short_name(self.symbol)}` is gone from the new release"
        if self.moved_to:
            return f"`{short_name(self.symbol)}` moved to `{self.moved_to}`"
        return f"`{short_name(self.symbol)}` changed (+{self.added} -{self.removed} lines)"


def _unified(
    old_path: str,
    old_lines: list[str],
    old_start: int,
    new_path: str,
    new_lines: list[str],
    new_start: int,
) -> tuple[str, set[int], int, int]:
    """The diff of two source segments, renumbered to the files' lines; and the old lines
    it changes (a pure insertion counts the line before it), lines added and removed."""
    out = []
    changed: set[int] = set()
    added = removed = 0
    old_line = old_start
    for line in difflib.unified_diff(
        old_lines, new_lines, f"a/{old_path}", f"b/{new_path}", lineterm=""
    ):
        match = _HUNK.match(line)
        if match:
            a, b, c, d = match.groups()
            old_line = int(a) + old_start - 1
            line = f"@@ -{old_line},{b or 1} +{int(c) + new_start - 1},{d or 1} @@"
        elif line.startswith(("---", "+++")):
            pass
        elif line.startswith("-"):
            changed.add(old_line)
            removed += 1
            old_line += 1
        elif line.startswith("+"):
            changed.add(max(old_line - 1, old_start))
            added += 1
        else:
            old_line += 1
        out.append(line)
    return "\n".join(out) + "\n", changed, added, removed


def body_change(
    old_snapshot,
    new_snapshot,
    original: FunctionPrint,
    pins: Pins = frozenset(),
    unread: frozenset[str] = frozenset(),
) -> BodyChanged | None:
    """What changed in `original` (a function of the old tree), or None when its
    normalised body is the same in the new tree. The function is looked up in the new tree
    by module and qualified name. `pins`: the conditions the copy asserts
    (`refactors.asserted`); `unread`: the locals the copy binds and never reads
    (`refactors.unread`)."""
    old_path = old_snapshot.files[original.module]
    old_location = f"{old_path}:{original.lineno}"
    found = _in_new_tree(new_snapshot, original)
    if found is None:
        return BodyChanged(original.symbol, old_location, None, gone=True)
    new, new_module, new_code = found
    if new.tokens == original.tokens:
        return None  # the same code (perhaps in another module): nothing to port
    old_code = old_snapshot.source(original.module) or ""
    old_source = old_code.splitlines()
    new_path = new_snapshot.files[new_module]
    lookup = _Lookup(new_snapshot, new_module, new_code, new.qualname)
    on = _on_by_default(new_snapshot)
    ported = _to_port(original, old_code, new, new_code, on, pins, lookup, unread)
    if ported is not None and not ported:
        return None  # only new modes differ: nothing a copy of the old code runs
    diff, changed, added, removed = _unified(
        old_path,
        old_source[original.start - 1 : original.end],
        original.start,
        new_path,
        new_code.splitlines()[new.start - 1 : new.end],
        new.start,
    )
    if ported is not None:
        changed &= ported
        if not changed:
            return None  # what the text changes, the tokens do not: nothing to port
    return BodyChanged(
        original.symbol,
        old_location,
        f"{new_path}:{new.lineno}",
        diff=diff,
        changed_lines=changed,
        added=added,
        removed=removed,
        moved_to=new_module if new_module != original.module else "",
    )


def _in_new_tree(new_snapshot, original: FunctionPrint):
    """The function in the new tree: same module and qualified name, else (a module split
    or renamed) a definition of the same top-level name elsewhere, the closest one."""
    code = new_snapshot.source(original.module)
    found = find_function(code, original.qualname) if code is not None else None
    if found is not None:
        return found, original.module, code
    best = None
    top = original.qualname.split(".")[0]
    for module in new_snapshot.definers([top])[top][:MAX_MOVED_CANDIDATES]:
        code = new_snapshot.source(module) or ""
        candidate = find_function(code, original.qualname)
        if candidate is None:
            continue
        similarity = compare(candidate.tokens, original.tokens, original.lines)
        ratio = similarity.ratio if similarity else 0.0
        if ratio >= MIN_MOVED_SIMILARITY and (best is None or ratio > best[0]):
            best = (ratio, candidate, module, code)
    return best[1:] if best else None


def _to_port(
    original: FunctionPrint,
    old_code: str,
    new: FunctionPrint,
    new_code: str,
    on: frozenset[str] = frozenset(),
    pins: Pins = frozenset(),
    lookup: _Lookup | None = None,
    unread: frozenset[str] = frozenset(),
):
    """The old lines the normalised diff touches (see the module docstring): the lines of
    the old tokens it replaces or deletes, and for an insertion the lines of the old tokens
    either side of it; an empty set when only new modes differ. None when a function
    cannot be found again in its source (the textual diff then stands). Both sides are
    taken with the refactors of `drift.refactors` undone."""
    old_fn, new_fn = _node(old_code, original.lineno), _node(new_code, new.lineno)
    if old_fn is None or new_fn is None:
        return None
    new_fn = decided(_new_modes_off(new_fn, _identifiers(old_fn), on), pins)
    if lookup is not None:
        new_fn = _DefaultsLeftOut(old_fn, lookup).visit(new_fn)
    old_fn = _DebugTextDropped().visit(values_dropped(decided(old_fn, pins), unread))
    new_fn = _DebugTextDropped().visit(values_dropped(new_fn, unread))
    old_tokens, old_lines = function_tokens(old_fn)

    def cost(fn: FunctionNode) -> int:
        return len(_changed(old_tokens, old_lines, function_tokens(fn)[0]))

    if lookup is not None:
        new_fn = inlined(new_fn, old_fn, lookup, cost)
    new_fn = moved_back(new_fn, old_fn, cost)
    return _changed(old_tokens, old_lines, function_tokens(new_fn)[0])


def _changed(old_tokens: list[str], old_lines: list[int], tokens: list[str]) -> set[int]:
    changed: set[int] = set()
    matcher = SequenceMatcher(None, old_tokens, tokens, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            changed.update(old_lines[i1:i2])
        elif tag == "insert":
            changed.update(old_lines[max(i1 - 1, 0) : i1 + 1])
    return changed


class _Lookup:
    """The function a call of the new code runs, when it is plain to see: a function of
    its module, a method of its class called on `self`, a function imported from a
    module of the tree (at the module's top or in the function; where a package
    re-exports it, in the module that defines it)."""

    def __init__(self, snapshot, module: str, code: str, qualname: str):
        self.snapshot, self.module, self.code = snapshot, module, code
        self.owner = qualname.rpartition(".")[0]
        self.trees: dict[str, ast.Module | None] = {}

    def _tree(self, module: str) -> ast.Module | None:
        if module not in self.trees:
            code = self.code if module == self.module else self.snapshot.source(module)
            try:
                self.trees[module] = ast.parse(code) if code is not None else None
            except (SyntaxError, ValueError):
                self.trees[module] = None
        return self.trees[module]

    def __call__(self, call: ast.Call) -> FunctionNode | None:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in ("self", "cls") and self.owner:
                return self._defined(self.module, f"{self.owner}.{func.attr}")
            return None
        if not isinstance(func, ast.Name):
            return None
        tree = self._tree(self.module)
        if tree is None:
            return None
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if (alias.asname or alias.name) == func.id:
                        return self._exported(node.module, alias.name)
        return self._defined(self.module, func.id)

    def _exported(self, module: str, name: str) -> FunctionNode | None:
        """`name` of `module`: defined there, or where the name it re-exports is defined."""
        found = self._defined(module, name)
        if found is not None:
            return found
        resolved = self.snapshot.resolve(f"{module}.{name}")
        home = resolved.module.name if resolved is not None and resolved.module else ""
        if not home or home == module or not resolved.canonical.startswith(home + "."):
            return None
        return self._defined(home, resolved.canonical[len(home) + 1 :])

    def parameter_default(self, call: ast.Call, name: str) -> str | None:
        """The source text of the default of the parameter `name` of the function `call`
        runs (read in the tree's API model, through re-exports), None when it has none or
        the function is not plain to see."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id not in ("self", "cls") or not self.owner:
                return None
            path = f"{self.module}.{self.owner}.{func.attr}"
        elif isinstance(func, ast.Name):
            path = f"{self.module}.{func.id}"
            tree = self._tree(self.module)
            for node in walk(tree) if tree is not None else ():
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    for alias in node.names:
                        if (alias.asname or alias.name) == func.id:
                            path = f"{node.module}.{alias.name}"
        else:
            return None
        found = self.snapshot.resolve(path)
        params = getattr(found.obj, "params", None) if found is not None else None
        named = [p for p in params or () if p.name == name and p.kind != "positional-only"]
        return named[0].default if named else None

    def setting_default(self, name: str) -> str | None:
        """The source text of the default of the ServerArgs field `name`."""
        model = self.snapshot.server_args()
        found = model.fields.get(name) if model is not None else None
        return found.default if found is not None else None

    def _defined(self, module: str, qualname: str) -> FunctionNode | None:
        tree = self._tree(module)
        if tree is None:
            return None
        scope: list[ast.stmt] = tree.body
        *outer, name = qualname.split(".")
        for part in outer:
            classes = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == part]
            if not classes:
                return None
            scope = classes[-1].body
        found = [
            n
            for n in scope
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
        ]
        return found[-1] if len(found) == 1 and not found[0].decorator_list else None


def _node(code: str, lineno: int) -> FunctionNode | None:
    """The function defined at `lineno` (its `def` line) of a module's source."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for node in walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == lineno:
            return node
    return None


def _identifiers(node: ast.AST) -> set[str]:
    """The names and attribute names an expression or a function reads or binds."""
    found = set()
    for part in walk(node):
        if isinstance(part, ast.Name):
            found.add(part.id)
        elif isinstance(part, ast.Attribute):
            found.add(part.attr)
        elif isinstance(part, ast.alias):
            found.add((part.asname or part.name).split(".")[0])
    return found


_FALSY = frozenset({"False", "None", "0", "0.0", "''", '""', "[]", "{}", "()", "'0'", '"0"'})
_FALSY |= {f"'{w}'" for w in ("false", "False", "none")} | {f'"{w}"' for w in ("false", "none")}


def _on_by_default(snapshot) -> frozenset[str]:
    """The settings of a tree on unless set off: ServerArgs fields whose default is not a
    falsy literal (or not known), environment variables whose default is not falsy (one
    read without a default is unset: off)."""
    model = snapshot.server_args()
    fields = model.fields.values() if model is not None else ()
    envs = (snapshot.surface("env_vars") or {}).values()
    on = {f.name for f in fields if f.default is None or f.default.strip() not in _FALSY}
    on |= {e.name for e in envs if e.default is not None and e.default.strip() not in _FALSY}
    return frozenset(on)


def _new_modes_off(
    fn: FunctionNode, old: set[str], on: frozenset[str] = frozenset()
) -> FunctionNode:
    """A copy of `fn` with every branch whose condition reads a name outside `old` taken
    to be false, then the locals and imports only those branches needed dropped: a local
    of a new name bound once to a plain value (a name, an attribute, a constant) is
    replaced by that value."""
    fn = copy.deepcopy(fn)
    _NewModesOff(old, _locals(fn), on).visit(fn)
    bound: dict[str, list[ast.AST]] = {}
    for node in walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.setdefault(node.id, []).append(node)
    plain = {}
    for node in walk(fn):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id not in old
            and len(bound.get(node.targets[0].id, ())) == 1
            and isinstance(node.value, (ast.Name, ast.Attribute, ast.Constant))
        ):
            plain[node.targets[0].id] = node
    if plain:
        fn = _Inlined(plain).visit(fn)
    used = {n.id for n in walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return _UnusedImportsDropped(old, used).visit(fn)


def _locals(fn: FunctionNode) -> tuple[set[str], set[str], set[str]]:
    """The parameters, those of them with a falsy default (a caller that never heard of
    one leaves it off), and the names the function's own code binds (imports aside: an
    imported helper is as new as a global one)."""
    args = fn.args
    positional = args.posonlyargs + args.args
    params = {a.arg for a in positional + args.kwonlyargs}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    defaults = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    defaults += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    off = {a.arg for a, d in defaults if isinstance(d, ast.Constant) and not d.value}
    bound = set()
    for node in walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
    return params, off - bound, bound - params  # a parameter set again is data


def _root(node: ast.expr) -> ast.expr:
    """`a` of `a.b.c`, `a.b()`, `a[0].b`."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


class _NewModesOff(ast.NodeTransformer):
    def __init__(
        self, old: set[str], locals_: tuple[set[str], set[str], set[str]], on: frozenset[str]
    ):
        params, off, self.data = locals_  # a body local holds data: what it reads is no mode
        self.plumbed = off - old  # new parameters a caller of the old code leaves off
        self.outside = old | (params - self.plumbed) | self.data  # no mode read alone
        self.on = on

    def _new(self, test: ast.expr) -> bool:
        conjuncts = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        )
        for conjunct in conjuncts:
            if (
                isinstance(conjunct, ast.Compare)
                and len(conjunct.ops) == 1
                and isinstance(conjunct.ops[0], (ast.Eq, ast.In, ast.IsNot))
            ):
                conjunct = conjunct.left  # `new == "x"`, `new in (...)`, `new is not None`
            root = _root(conjunct)
            if isinstance(root, ast.Name) and root.id in self.data:
                continue  # `na.is_ipv6`: a property of the function's own data
            if isinstance(conjunct, (ast.Name, ast.Attribute, ast.Call)):
                new = _identifiers(conjunct) - self.outside
                named = {c.value for c in walk(conjunct) if isinstance(c, ast.Constant)}
                if new and not (new | named) & self.on:  # `get_bool_env_var("X", "1")`
                    return True
        return False

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        return node.orelse if self._new(node.test) else node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return node.orelse if self._new(node.test) else node

    def visit_Call(self, node: ast.Call):
        """`f(..., quant_config=quant_config)`: a new parameter passed on, left off."""
        self.generic_visit(node)
        node.keywords = [
            k
            for k in node.keywords
            if not (isinstance(k.value, ast.Name) and k.value.id in self.plumbed)
        ]
        return node


def _literal(text: str | None) -> tuple[bool, object]:
    """(True, the value) of a literal's source text, else (False, None)."""
    try:
        return (True, ast.literal_eval(text)) if text is not None else (False, None)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _setting(node: ast.expr) -> str | None:
    """`F` of `server_args.F`, `self.server_args.F`: a ServerArgs field read."""
    if not isinstance(node, ast.Attribute):
        return None
    owner = node.value
    if isinstance(owner, ast.Attribute) and owner.attr == "server_args":
        return node.attr
    return node.attr if isinstance(owner, ast.Name) and owner.id == "server_args" else None


class _DefaultsLeftOut(ast.NodeTransformer):
    """A keyword argument the new code passes and the old code never did, left out where
    it passes what the callee uses without it: a literal equal to the parameter's default,
    or a ServerArgs field whose default equals it (a setting left as it is). A copy of
    the old code gets the same value by leaving it out: nothing to port. Values compared
    as Python literals of the same type (`False` is not `0`, `'none'` is not `None`)."""

    def __init__(self, old: FunctionNode, lookup: _Lookup):
        self.old = {k.arg for k in walk(old) if isinstance(k, ast.keyword) and k.arg}
        self.lookup = lookup

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords if not self._default(node, k)]
        return node

    def _default(self, call: ast.Call, keyword: ast.keyword) -> bool:
        if keyword.arg is None or keyword.arg in self.old:
            return False
        field = _setting(keyword.value)
        if field is not None:
            known, value = _literal(self.lookup.setting_default(field))
        elif isinstance(keyword.value, ast.Constant):
            known, value = True, keyword.value.value
        else:
            return False
        if not known:
            return False
        has, default = _literal(self.lookup.parameter_default(call, keyword.arg))
        return has and type(default) is type(value) and default == value


class _DebugTextDropped(ast.NodeTransformer):
    """The text `f"{x=}"` writes before a value: it spells the expression, which the
    tokens already compare (a renamed local renames it; nothing to port)."""

    def visit_JoinedStr(self, node: ast.JoinedStr):
        self.generic_visit(node)  # an f-string nested in one of its values
        parts = node.values
        for text, value in zip(parts, parts[1:], strict=False):
            if not (
                isinstance(text, ast.Constant)
                and isinstance(text.value, str)
                and isinstance(value, ast.FormattedValue)
            ):
                continue
            head = text.value.rstrip()
            spelled = ast.unparse(value.value)
            if head.endswith("=") and head[:-1].rstrip().endswith(spelled):
                text.value = head[:-1].rstrip()[: -len(spelled)]
        return node


class _Inlined(ast.NodeTransformer):
    def __init__(self, plain: dict[str, ast.Assign]):
        self.plain = plain
        self.dropped = {id(node) for node in plain.values()}

    def visit_Assign(self, node: ast.Assign):
        return None if id(node) in self.dropped else self.generic_visit(node)

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.plain:
            return copy.deepcopy(self.plain[node.id].value)
        return node


class _UnusedImportsDropped(ast.NodeTransformer):
    def __init__(self, old: set[str], used: set[str]):
        self.keep = old | used

    def _import(self, node: ast.Import | ast.ImportFrom):
        names = [(a.asname or a.name).split(".")[0] for a in node.names]
        return node if any(name in self.keep for name in names) else None

    visit_Import = _import
    visit_ImportFrom = _import
