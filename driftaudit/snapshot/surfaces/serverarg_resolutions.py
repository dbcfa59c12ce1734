"""Where ServerArgs resolves a field left unset: the value a None default becomes at
startup, read statically with `ast` from `server_args.py` and the `arg_groups` hooks.

Two shapes, both as sglang writes them:

- a declared fallback: `swa_full_tokens_ratio: A[Optional[float], Arg(...,
  fallback=0.8)] = None` (0.5.2x: the value a None input takes when nothing resolves it);
- a branch on the field being None that sets it to a value: `if self.x is None:
  self.x = 2.0` (`__post_init__` up to 0.5.1x), or in a hook `if cfg.x is None and ...:
  fields["x"] = ...`, `overrides["x"] = ...`, `declare_resolution(server_args, "...",
  x=...)`. The test may hold more conditions (`and mode != "decode"`): they are kept
  (`when`), for the differ to judge against the other fields' defaults.

Also the module constants of those files (`NAME = <literal>`), so a default written with
one (`ENCODER_TRANSFER_BACKEND_CHOICES[0]`) can be compared by value.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from pathlib import Path

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


def extract_resolutions(root: Path) -> Resolutions:
    root = Path(root)
    found = Resolutions()
    for path in redirect_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        relpath = path.relative_to(root).as_posix()
        _constants(tree, found.constants)
        for node in ast.walk(tree):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                fallback = _fallback(node.annotation)
                if fallback is not None:
                    _add(found, node.target.id, fallback, "fallback", relpath)
            elif isinstance(node, ast.If):
                for name, when in _unset(node.test):
                    for value in _sets(node.body, name):
                        _add(found, name, value, "if-none", relpath, when)
    return found


def _add(
    found: Resolutions, name: str, value: ast.expr, how: str, relpath: str, when=None
) -> None:
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
                if keyword.arg == "fallback" and not _is_none(keyword.value):
                    return keyword.value
    return None


def _unset(test: ast.expr) -> list[tuple[str, str | None]]:
    """Fields the test requires to be None (`x.f is None`, alone or in an `and`), each
    with the test's other conditions."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    found = []
    for index, part in enumerate(parts):
        if (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.ops[0], (ast.Is, ast.Eq))
            and isinstance(part.left, ast.Attribute)
            and _is_none(part.comparators[0])
        ):
            others = [ast.unparse(p) for i, p in enumerate(parts) if i != index]
            found.append((part.left.attr, " and ".join(f"({o})" for o in others) or None))
    return found


def _sets(body: list[ast.stmt], name: str) -> list[ast.expr]:
    """Values the branch gives `name`: `x.name = v`, `d["name"] = v`, `f(..., name=v)`."""
    values = []
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and target.attr == name:
                        values.append(node.value)
                    elif (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.slice, ast.Constant)
                        and target.slice.value == name
                    ):
                        values.append(node.value)
            elif isinstance(node, ast.Call):
                values += [k.value for k in node.keywords if k.arg == name]
    return values


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
