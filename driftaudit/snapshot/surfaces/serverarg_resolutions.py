"""Where ServerArgs resolves a field left unset: the value a None default becomes at
startup, read statically with `ast` from `server_args.py` and the `arg_groups` hooks.

Two shapes, both as sglang writes them:

- a declared fallback: `swa_full_tokens_ratio: A[Optional[float], Arg(...,
  fallback=0.8)] = None` (0.5.2x: the value a None input takes when nothing resolves it);
- a branch on the field being None that sets it to a value: `if self.x is None:
  self.x = 2.0` (`__post_init__` up to 0.5.1x), or one expression that does
  (`self.x = self.x or 2.0`, `self.x = 2.0 if self.x is None else self.x`), or in a
  hook `if cfg.x is None and ...: fields["x"] = ...`, `overrides["x"] = ...`,
  `declare_resolution(server_args, "...", x=...)`, also in a nested branch. Every
  condition it runs under is kept (`when`: the other conjuncts, `mode != "decode"`, the
  enclosing `if`s, the early exits before it), for the differ to judge against the
  fields' defaults.

Also the module constants of those files (`NAME = <literal>`), so a default written with
one (`ENCODER_TRANSFER_BACKEND_CHOICES[0]`) can be compared by value.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from pathlib import Path

from driftaudit.pysource import is_none
from driftaudit.snapshot.surfaces._files import parse_text
from driftaudit.snapshot.surfaces.serverarg_redirects import redirect_files


@dataclass
class Resolution:
    field: str  # the ServerArgs field
    value: str  # source text of what it is set to
    how: str  # "fallback" or "if-none"
    file: str  # relative to the tree root
    line: int
    when: str | None = None  # the branch's other conditions (source text), if any

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Resolution:
        return cls(**data)


@dataclass
class Resolutions:
    by_field: dict[str, list[Resolution]] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)  # NAME -> source text

    def to_json(self) -> dict:
        return {
            "by_field": {k: [r.to_json() for r in v] for k, v in self.by_field.items()},
            "constants": self.constants,
        }

    @classmethod
    def from_json(cls, data: dict) -> Resolutions:
        by_field = {k: [Resolution.from_json(r) for r in v] for k, v in data["by_field"].items()}
        return cls(by_field, dict(data["constants"]))


def extract_resolutions(scan: Path) -> Resolutions:
    root = Path(scan)
    found = Resolutions()
    for path in redirect_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = parse_text(scan, text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        relpath = path.relative_to(root).as_posix()
        _constants(tree, found.constants)
        _walk(tree.body, [], found, relpath)
    return found


# an early exit that skips what follows (a `raise` is validation, which the default
# configuration passes)
_EXITS = (ast.Return, ast.Continue, ast.Break)


def _walk(
    body: list[ast.stmt],
    conditions: list[str],
    found: Resolutions,
    relpath: str,
    unset: frozenset[str] = frozenset(),
) -> None:
    """Resolutions in `body`: a statement that sets a field an enclosing test requires to
    be None, with every condition it runs under (within its function): the tests of the
    `if`s around it (negated in an `else`) and of the early exits before it (`if not
    cfg.enable_x: return`); a function registered by a decorator call
    (`@_register_for("InklingForCausalLM")`) runs only for what it is registered for, so
    the call is a condition too. The differ reads them with each field at its default."""
    conditions = list(conditions)
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            registered = [f"({ast.unparse(d)})" for d in node.decorator_list]
            registered = [
                d
                for d, n in zip(registered, node.decorator_list, strict=True)
                if isinstance(n, ast.Call)
            ]
            _walk(node.body, registered, found, relpath)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            fallback = _fallback(node.annotation)
            if fallback is not None:
                _add(found, node.target.id, fallback, "fallback", relpath)
        elif isinstance(node, (ast.Assign, ast.Expr)):
            for name in sorted(unset):
                for value in _sets(node, name):
                    _add(found, name, value, "if-none", relpath, " and ".join(conditions))
            for name, value in _replaced(node):
                _add(found, name, value, "if-none", relpath, " and ".join(conditions))
        elif isinstance(node, ast.If):
            test = ast.unparse(node.test)
            inner = unset | set(_unset(node.test))
            _walk(node.body, conditions + [f"({test})"], found, relpath, inner)
            _walk(node.orelse, conditions + [f"(not ({test}))"], found, relpath, unset)
            if node.body and isinstance(node.body[-1], _EXITS) and not node.orelse:
                conditions.append(f"(not ({test}))")
        else:  # for, while, with, try: their blocks run under the same conditions
            for block in ("body", "orelse", "finalbody"):
                _walk(getattr(node, block, None) or [], conditions, found, relpath, unset)
            for handler in getattr(node, "handlers", None) or []:
                _walk(handler.body, conditions, found, relpath, unset)


def _add(found: Resolutions, name: str, value: ast.expr, how: str, relpath: str, when=None) -> None:
    text = ast.unparse(value)
    if len(text) <= 200:
        found.by_field.setdefault(name, []).append(
            Resolution(name, text, how, relpath, value.lineno, when)
        )


def _constants(tree: ast.Module, into: dict[str, str]) -> None:
    """Module-level `NAME = <literal display>` (the first definition wins)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id.isupper():
                try:
                    ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, RecursionError):
                    continue
                into.setdefault(target.id, ast.unparse(node.value))


def _fallback(annotation: ast.expr) -> ast.expr | None:
    """`fallback=` of the `Arg(...)` in an `A[T, Arg(...)]` annotation."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "fallback" and not is_none(keyword.value):
                    return keyword.value
    return None


def _unset(test: ast.expr) -> list[str]:
    """Fields the test requires to be None: `x.f is None`, alone or in an `and`."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return [
        part.left.attr
        for part in parts
        if isinstance(part, ast.Compare)
        and len(part.ops) == 1
        and isinstance(part.ops[0], (ast.Is, ast.Eq))
        and isinstance(part.left, ast.Attribute)
        and is_none(part.comparators[0])
    ]


def _replaced(statement: ast.Assign | ast.Expr) -> list[tuple[str, ast.expr]]:
    """A field set to what replaces its None in one expression: `x.f = x.f or v`,
    `x.f = v if x.f is None else x.f`, `x.f = x.f if x.f is not None else v`."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return []
    target, value = statement.targets[0], statement.value
    if not isinstance(target, ast.Attribute):
        return []
    same = ast.dump(target.value)

    def is_field(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == target.attr
            and ast.dump(node.value) == same
        )

    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2:
        if is_field(value.values[0]):
            return [(target.attr, value.values[1])]
    if isinstance(value, ast.IfExp) and isinstance(value.test, ast.Compare):
        test = value.test
        if (
            len(test.ops) == 1
            and is_field(test.left)
            and is_none(test.comparators[0])
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        ):
            kept, other = (
                (value.orelse, value.body)
                if isinstance(test.ops[0], ast.Is)
                else (value.body, value.orelse)
            )
            if is_field(kept):
                return [(target.attr, other)]
    return []


def _sets(statement: ast.Assign | ast.Expr, name: str) -> list[ast.expr]:
    """Values a statement gives `name`: `x.name = v`, `d["name"] = v`, `f(..., name=v)`."""
    if isinstance(statement, ast.Expr):
        call = statement.value
        if not isinstance(call, ast.Call):
            return []
        return [k.value for k in call.keywords if k.arg == name]
    values = []
    for target in statement.targets:
        if isinstance(target, ast.Attribute) and target.attr == name:
            values.append(statement.value)
        elif (
            isinstance(target, ast.Subscript)
            and isinstance(target.slice, ast.Constant)
            and target.slice.value == name
        ):
            values.append(statement.value)
    return values
