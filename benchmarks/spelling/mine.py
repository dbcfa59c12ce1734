"""Changes to generate code for: mined from `driftaudit diff --format json` between two
releases, with the old signature of each changed function read from the old tree (so a
generated call is valid against the old release and breaks only on the new one)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

# the breaking kinds the corpus covers, by what a consumer reaches: a module-level name,
# a class member, or a function's parameters
NAME_KINDS = ("symbol-removed", "import-moved")
MEMBER_KINDS = ("member-removed",)
PARAM_KINDS = ("required-parameter-added", "keyword-removed", "keyword-renamed")
KINDS = NAME_KINDS + MEMBER_KINDS + PARAM_KINDS


@dataclass
class Target:
    """One change, with what the generator needs to reach it."""

    kind: str
    symbol: str  # dotted: module.name or module.Class.member
    module: str  # the module a consumer imports it from (the old one)
    qualname: list[str]  # names below the module: [name] or [Class, member]
    param: str = ""  # the parameter the change is about (param kinds)
    params: list[str] = field(default_factory=list)  # old required parameters (no self)
    old_params: list[str] = field(default_factory=list)  # every old named parameter
    dataclass: bool = False  # a dataclass's fields changed (its generated `__init__`)
    member: str = ""  # READ_KIND: the member newly read on `param`
    read: list[str] = field(default_factory=list)  # READ_KIND: what the old release read too
    also_new: list[str] = field(default_factory=list)  # READ_KIND: other members newly read
    stand_in_group: str = ""  # READ_KIND: function, constructor, method (`param` is self),
    # method_arg (another parameter of a method, called on a typed receiver)
    # or installed (the stand-in is put in `self.<holder>` of an object the method runs on)
    holder: str = ""

    @property
    def names(self) -> set[str]:
        """The names a finding about this change must name."""
        if self.member:
            return {self.member}
        return {self.qualname[-1], self.param} - {""}

    @property
    def group(self) -> str:
        """Which template group reaches it (spellings.py)."""
        if self.kind == READ_KIND:
            return "stand_in"
        if self.kind in NAME_KINDS:
            return "name"
        if self.kind in MEMBER_KINDS:
            return "member"
        if self.dataclass:
            return "dataclass"
        if len(self.qualname) == 1:
            return "function"
        return "constructor" if self.qualname[1] == "__init__" else "method"


def diff_json(old: str, new: str, cache_dir: Path) -> dict:
    """`driftaudit diff` of the pair, as JSON (the importable driftaudit)."""
    argv = [sys.executable, "-m", "driftaudit", "diff", "--old", old, "--new", new]
    argv += ["--format", "json", "--cache-dir", str(cache_dir), "-q"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def _parse(path: Path) -> ast.Module:
    """A release's file as an AST, without the warnings its old string escapes raise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
        return ast.parse(path.read_bytes())


def _function_def(tree: Path, location: str, name: str) -> ast.FunctionDef | None:
    path, _, line = location.rpartition(":")
    try:
        module = _parse(tree / path)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            if abs(node.lineno - int(line or 0)) <= 2 or not line:
                return node  # type: ignore[return-value]
    return None


def _old_dataclass(tree: Path, location: str, name: str) -> ast.ClassDef | None:
    """The dataclass `name` defined at `location` in the old tree."""
    path, _, _ = location.rpartition(":")
    try:
        module = _parse(tree / path)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(module):
        if isinstance(node, ast.ClassDef) and node.name == name:
            names = {ast.unparse(d).split("(")[0].rpartition(".")[2] for d in node.decorator_list}
            return node if "dataclass" in names else None
    return None


def _fields(node: ast.ClassDef) -> tuple[list[str], list[str]]:
    """A dataclass's (required fields, every field), in order (ClassVar left out)."""
    named, required = [], []
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if "ClassVar" in ast.unparse(statement.annotation):
                continue
            named.append(statement.target.id)
            if statement.value is None:
                required.append(statement.target.id)
    return required, named


def _module_of(symbol: str, old_location: str) -> tuple[str, list[str]] | None:
    """Split `symbol` into (module, names below it) by the old file's path."""
    path = old_location.rpartition(":")[0] if ":" in old_location else old_location
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    if not symbol.startswith(module + "."):
        return None
    return module, symbol[len(module) + 1 :].split(".")


def _public(names: list[str]) -> bool:
    return all(not n.startswith("_") or n == "__init__" for n in names)


def _absorbed(change: dict, new_tree: Path | None, name: str) -> bool:
    """A keyword removed or renamed into a new `**kwargs`: an old call still binds."""
    if new_tree is None or change["kind"] == "required-parameter-added":
        return False
    node = _function_def(new_tree, change.get("new_location") or "", name)
    return node is not None and node.args.kwarg is not None


def targets(
    changes: list[dict], old_tree: Path, per_kind: int, new_tree: Path | None = None
) -> list[Target]:
    """Up to `per_kind` changes of each breaking kind and template group, public names of
    sglang.srt first (what consumers reach), each with its old signature when a parameter
    changed."""
    picked: dict[tuple[str, str], list[Target]] = {}
    ordered = sorted(
        changes, key=lambda c: (not c["symbol"].startswith("sglang.srt."), c["symbol"])
    )
    for change in ordered:
        kind = change.get("kind")
        if kind not in KINDS or not change.get("old_location"):
            continue
        split = _module_of(change["symbol"], change["old_location"])
        if split is None or not _public(split[1]) or not split[0].startswith("sglang."):
            continue
        module, qual = split
        target = Target(kind, change["symbol"], module, qual)
        if kind in NAME_KINDS and len(qual) != 1:
            continue
        if kind in MEMBER_KINDS and len(qual) != 2:
            continue
        if kind in PARAM_KINDS:
            if len(qual) > 2:
                continue
            quoted = re.findall(r"`([^`]+)`", change["message"])
            if not quoted:
                continue
            node = _function_def(old_tree, change["old_location"], qual[-1])
            if node is None and len(qual) == 1:
                fields = _old_dataclass(old_tree, change["old_location"], qual[0])
                if fields is None:
                    continue
                target.dataclass = True
                target.params, target.old_params = _fields(fields)
                target.param = quoted[-1] if kind == "required-parameter-added" else quoted[0]
                if kind != "required-parameter-added" and target.param not in target.old_params:
                    continue
                _pick(picked, target, per_kind)
                continue
            if node is None or _absorbed(change, new_tree, qual[-1]):
                continue
            args = node.args
            named = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            if len(qual) == 2:
                if not named or named[0] not in ("self", "cls"):
                    continue
                named = named[1:]
            if any(
                isinstance(d, ast.Name) and d.id in ("staticmethod",) for d in node.decorator_list
            ):
                continue
            n_pos = len(args.posonlyargs + args.args) - (1 if len(qual) == 2 else 0)
            required = named[: n_pos - len(args.defaults)]
            required += [
                a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None
            ]
            if args.posonlyargs:
                continue  # positional-only: keyword spellings do not apply
            target.param = quoted[-1] if kind == "required-parameter-added" else quoted[0]
            target.params = required
            target.old_params = named
            if kind != "required-parameter-added" and target.param not in named:
                continue
        _pick(picked, target, per_kind)
    return [t for group in picked.values() for t in group]


def _pick(picked: dict[tuple[str, str], list[Target]], target: Target, per_kind: int) -> None:
    group = picked.setdefault((target.kind, target.group), [])
    if len(group) < per_kind and target.symbol not in {t.symbol for t in group}:
        group.append(target)


# --- stand-ins: a member the new release newly reads on a parameter --------------------
#
# Not a `driftaudit diff` kind: read here from both trees with `ast` alone (the ground
# truth does not come from the tool it scores). A callee's parameter `p` whose new body
# reads `p.x` where the old one read neither it (in its body, nor one call deep in the
# `self.m(...)`/module helpers it passes `p` to) nor guards it (`getattr(p, "x", d)`,
# `hasattr`, an assignment): a stand-in that sets what the old release read breaks.
READ_KIND = "member-newly-read"


@dataclass
class _Def:
    node: ast.FunctionDef
    owner: str  # "" for a module-level function
    module: dict[str, ast.FunctionDef]  # the module's functions, for helpers
    methods: dict[str, ast.FunctionDef]  # the class's methods


def _definitions(path: Path) -> dict[tuple[str, ...], _Def]:
    try:
        tree = _parse(path)
    except (OSError, SyntaxError, ValueError):
        return {}
    module = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found: dict[tuple[str, ...], _Def] = {
        (n.name,): _Def(n, "", module, {}) for n in module.values()
    }
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
        for name, node in methods.items():
            found[(cls.name, name)] = _Def(node, cls.name, module, methods)
    return found


def _param_reads(node: ast.FunctionDef, param: str) -> tuple[dict[str, int], set[str]] | None:
    """`param.x` loads (-> first line) and what is stored or guarded; None if rebound."""
    reads: dict[str, int] = {}
    guarded: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id == param and isinstance(inner.ctx, ast.Store):
            return None
        if (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.value, ast.Name)
            and inner.value.id == param
        ):
            if isinstance(inner.ctx, ast.Load):
                reads.setdefault(inner.attr, inner.lineno)
            else:
                guarded.add(inner.attr)
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(inner.args) >= 2
            and isinstance(inner.args[0], ast.Name)
            and inner.args[0].id == param
            and isinstance(inner.args[1], ast.Constant)
        ):
            guarded.add(str(inner.args[1].value))
    return reads, guarded


def _passes_on(definition: _Def, param: str) -> bool:
    """Does the callee hand `param` to another call (its reads there are not counted)?"""
    for inner in ast.walk(definition.node):
        if isinstance(inner, ast.Call):
            values = [*inner.args, *(k.value for k in inner.keywords)]
            if any(isinstance(v, ast.Name) and v.id == param for v in values):
                return True
    return False


def _old_reads(definition: _Def, param: str) -> set[str] | None:
    """What the old callee reads or guards on `param`, one call deep into `self.m()`
    (for `self`) and the module's helpers it passes `param` to."""
    own = _param_reads(definition.node, param)
    if own is None:
        return None
    known = set(own[0]) | own[1]
    for inner in ast.walk(definition.node):
        if not isinstance(inner, ast.Call):
            continue
        func = inner.func
        if param == "self" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and func.attr in definition.methods:
                more = _param_reads(definition.methods[func.attr], "self")
                known |= set(more[0]) | more[1] if more else set()
        if isinstance(func, ast.Name) and func.id in definition.module:
            helper = definition.module[func.id]
            names = [a.arg for a in helper.args.args]
            for index, arg in enumerate(inner.args):
                if isinstance(arg, ast.Name) and arg.id == param and index < len(names):
                    more = _param_reads(helper, names[index])
                    known |= set(more[0]) | more[1] if more else set()
    return known


def _held_reads(node: ast.FunctionDef) -> tuple[dict[str, dict[str, int]], set[str]]:
    """`self.a.x` loads (a -> x -> first line), and the `a` the method assigns or the
    `a.x` it guards (`getattr(self.a, "x", d)`, `hasattr`)."""
    reads: dict[str, dict[str, int]] = {}
    other: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Attribute):
            holder = inner.value
            if isinstance(holder.value, ast.Name) and holder.value.id == "self":
                if isinstance(inner.ctx, ast.Load) and isinstance(holder.ctx, ast.Load):
                    reads.setdefault(holder.attr, {}).setdefault(inner.attr, inner.lineno)
                else:
                    other.add(f"{holder.attr}.{inner.attr}")
        if isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store):
            if isinstance(inner.value, ast.Name) and inner.value.id == "self":
                other.add(inner.attr)
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id in ("getattr", "hasattr")
            and len(inner.args) >= 2
            and isinstance(inner.args[0], ast.Attribute)
            and isinstance(inner.args[0].value, ast.Name)
            and inner.args[0].value.id == "self"
            and isinstance(inner.args[1], ast.Constant)
        ):
            other.add(f"{inner.args[0].attr}.{inner.args[1].value}")
    return reads, other


def _old_held(definition: _Def) -> tuple[dict[str, set[str]], set[str]]:
    """The old method's `self.a.x` reads and guards, one call deep into `self.m()`."""
    nodes = [definition.node]
    for inner in ast.walk(definition.node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
            func = inner.func
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                if func.attr in definition.methods:
                    nodes.append(definition.methods[func.attr])
    known: dict[str, set[str]] = {}
    other: set[str] = set()
    for node in nodes:
        reads, guarded = _held_reads(node)
        for holder, members in reads.items():
            known.setdefault(holder, set()).update(members)
        other |= guarded
    return known, other


def _installed(qual, module, old_def: _Def, new_def: _Def, old_sig) -> Target | None:
    """A member the new method newly reads on one of its attributes (`self.a.x`): a
    stand-in the consumer installs there (`obj.a = Fake()`) breaks."""
    new_reads, new_other = _held_reads(new_def.node)
    old_reads, old_other = _old_held(old_def)
    for holder, members in sorted(new_reads.items()):
        if holder not in old_reads or holder in new_other or holder.startswith("_"):
            continue  # the old method read the attribute too: the consumer installs it
        for member in sorted(members):
            if (
                member in old_reads[holder]
                or f"{holder}.{member}" in new_other | old_other
                or member.startswith("__")
            ):
                continue
            symbol = ".".join((module, *qual))
            target = Target(READ_KIND, f"{symbol}.self.{holder}.{member}", module, list(qual))
            target.param, target.member, target.holder = "self", member, holder
            target.read = sorted(m for m in old_reads[holder] if m in members)
            target.params, target.old_params = old_sig
            target.stand_in_group = "installed"
            return target
    return None


def _self_closure(definition: _Def) -> set[str]:
    """Every `self.x` a method reads, through the methods of its class it calls."""
    found: set[str] = set()
    pending, seen = [definition.node], set()
    while pending:
        node = pending.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        reads = _param_reads(node, "self")
        found |= set(reads[0]) if reads else set()
        pending += [definition.methods[n] for n in found if n in definition.methods]
    return found


def _signature(node: ast.FunctionDef, method: bool) -> tuple[list[str], list[str]] | None:
    """(required parameters, every named one), `self` left out; None with positional-only
    or variadic parameters (the generated call would not be plain)."""
    args = node.args
    if args.posonlyargs or args.vararg:
        return None
    named = [a.arg for a in args.args + args.kwonlyargs]
    positional = [a.arg for a in args.args]
    required = positional[: len(positional) - len(args.defaults)]
    required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    if method:
        named, required = named[1:], required[1:]
    return required, named


def newly_read(old_root: Path, new_root: Path, per_kind: int) -> list[Target]:
    """Up to `per_kind` callees per shape (a function, a constructor, a method called on its
    class with a stand-in as `self`, a method's other parameter) whose new release reads a
    member of a parameter that the old one did not: the member, and what the old release
    read there."""
    picked: dict[tuple[str, str], list[Target]] = {}
    base = old_root / "sglang" / "srt"
    for old_file in sorted(base.rglob("*.py")):
        rel = old_file.relative_to(old_root)
        if any(part.startswith(("_", "test")) for part in rel.parts[:-1]) or "test" in rel.name:
            continue
        new_file = new_root / rel
        if not new_file.is_file():
            continue
        module = str(rel.with_suffix("")).replace("/", ".").removesuffix(".__init__")
        olds, news = _definitions(old_file), _definitions(new_file)
        for qual, new_def in sorted(news.items()):
            old_def = olds.get(qual)
            if old_def is None or not _public(list(qual)):
                continue
            if qual[0].startswith("_") or (
                len(qual) == 2 and qual[1].startswith("_") and qual[1] != "__init__"
            ):
                continue
            if any(
                isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod", "property")
                for d in new_def.node.decorator_list
            ):
                continue
            method = len(qual) == 2
            old_sig, new_sig = _signature(old_def.node, method), _signature(new_def.node, method)
            if old_sig is None or new_sig is None or old_sig != new_sig:
                continue  # a signature change is another kind
            group = (
                "function" if not method else ("constructor" if qual[1] == "__init__" else "method")
            )
            if group == "method":
                installed = _installed(qual, module, old_def, new_def, old_sig)
                chosen = picked.setdefault((READ_KIND, "installed"), [])
                if installed is not None and len(chosen) < per_kind:
                    chosen.append(installed)
            required = [p for p in old_sig[1] if p in old_sig[0]]
            # a method: `self` (a stand-in as self) and its other parameters (a stand-in
            # handed to the method called on a typed receiver, `method_arg`)
            pairs = [(group, p) for p in required]
            if group == "method":
                pairs = [("method", "self"), *(("method_arg", p) for p in required)]
            done: set[str] = set()
            for shape, param in pairs:
                if shape in done:
                    continue
                if _passes_on(new_def, param) and param != "self":
                    continue  # its reads one call down: followed by driftaudit, not here
                new = _param_reads(new_def.node, param)
                old = _old_reads(old_def, param)
                if new is None or old is None:
                    continue
                fresh = [
                    m
                    for m in new[0]
                    if m not in old
                    and m not in new[1]
                    and not m.startswith("__")
                    and not (param == "self" and m in new_def.methods)
                ]
                if not fresh:
                    continue
                symbol = ".".join((module, *qual))
                target = Target(READ_KIND, f"{symbol}.{param}.{fresh[0]}", module, list(qual))
                target.param = param
                target.member, target.also_new = fresh[0], fresh[1:]
                if param == "self":  # a near miss sets all the new method reads on self
                    target.also_new = sorted(_self_closure(new_def) - set(old) - {fresh[0]})
                target.read = sorted(m for m in old if m in new[0] or m in set(new[0]))
                target.params, target.old_params = old_sig
                target.stand_in_group = shape
                group_list = picked.setdefault((READ_KIND, shape), [])
                if len(group_list) < per_kind:
                    group_list.append(target)
                done.add(shape)
    return [t for group in picked.values() for t in group]
