"""Changes to generate code for: mined from `driftaudit diff --format json` between two
releases, with the old signature of each changed function read from the old tree (so a
generated call is valid against the old release and breaks only on the new one)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
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

    @property
    def group(self) -> str:
        """Which template group reaches it (spellings.py)."""
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


def _function_def(tree: Path, location: str, name: str) -> ast.FunctionDef | None:
    path, _, line = location.rpartition(":")
    try:
        module = ast.parse((tree / path).read_bytes())
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
        module = ast.parse((tree / path).read_bytes())
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
