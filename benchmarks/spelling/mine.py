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


def diff_json(old: str, new: str, cache_dir: Path) -> dict:
    """`driftaudit diff` of the pair, as JSON (the importable driftaudit)."""
    argv = [sys.executable, "-m", "driftaudit", "diff", "--old", old, "--new", new]
    argv += ["--format", "json", "--cache-dir", str(cache_dir), "-q"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def _old_def(tree: Path, location: str, name: str) -> ast.FunctionDef | None:
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


def _module_of(symbol: str, old_location: str) -> tuple[str, list[str]] | None:
    """Split `symbol` into (module, names below it) by the old file's path."""
    path = old_location.rpartition(":")[0] if ":" in old_location else old_location
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    if not symbol.startswith(module + "."):
        return None
    return module, symbol[len(module) + 1 :].split(".")


def _public(names: list[str]) -> bool:
    return all(not n.startswith("_") for n in names)


def targets(changes: list[dict], old_tree: Path, per_kind: int) -> list[Target]:
    """Up to `per_kind` changes of each breaking kind, public names of sglang.srt first
    (what consumers reach), each with its old signature when a parameter changed."""
    picked: dict[str, list[Target]] = {k: [] for k in KINDS}
    ordered = sorted(
        changes, key=lambda c: (not c["symbol"].startswith("sglang.srt."), c["symbol"])
    )
    for change in ordered:
        kind = change.get("kind")
        if kind not in picked or len(picked[kind]) >= per_kind or not change.get("old_location"):
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
            node = _old_def(old_tree, change["old_location"], qual[-1])
            if node is None or not quoted:
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
        picked[kind].append(target)
    return [t for kind in KINDS for t in picked[kind]]
