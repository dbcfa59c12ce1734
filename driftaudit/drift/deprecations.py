"""Parameters a function keeps only as deprecated, read from its source with `ast`.

sglang keeps a retired keyword for old callers and marks it in one of three ways, all
read here: a comment on the parameter (`skip_attn_backend_init: Optional[bool] = None,
# deprecated`), a docstring line that names it with "deprecated", or a body that hands it
to a `*deprecated*` helper or warns about it with a deprecation message
(`if x is not None: warnings.warn("x is deprecated")`).

A deprecated parameter whose new default is None (the "not passed" sentinel) has no
default a caller that leaves it out can observe: the default change is not reported.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from driftaudit.pysource import dotted

DEPRECATIONS_VERSION = "1"  # bump when what counts as deprecated changes
_DEPRECATED = re.compile(r"deprecat", re.IGNORECASE)
_COMMENT = re.compile(r"#.*deprecat", re.IGNORECASE)


def deprecated_params(root: Path, location: str | None) -> frozenset[str]:
    """The deprecated parameters of the function defined at `location` ("file:line",
    relative to `root`)."""
    if not location or ":" not in location:
        return frozenset()
    file, _, line = location.rpartition(":")
    if not line.isdigit():
        return frozenset()
    return _deprecated_at(str(Path(root) / file), int(line))


def deprecated_in(snapshot, location: str | None) -> frozenset[str]:
    """`deprecated_params` of a function of `snapshot`, kept in its store (the tree alone
    decides it: a warm run parses nothing for it)."""
    key = f"deprecated:{DEPRECATIONS_VERSION}:{snapshot.digest}:{location}"

    def compute() -> list[str]:
        return sorted(deprecated_params(snapshot.tree.root, location))

    return snapshot.kept(key, compute, lambda names: frozenset(str(n) for n in names))


@lru_cache(maxsize=256)
def _parsed(path: str) -> tuple[ast.Module, list[str]] | None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        return ast.parse(text), text.splitlines()
    except (OSError, SyntaxError, ValueError):
        return None


@lru_cache(maxsize=1024)
def _deprecated_at(path: str, line: int) -> frozenset[str]:
    parsed = _parsed(path)
    if parsed is None:
        return frozenset()
    tree, lines = parsed
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == line:
            return frozenset(_in_function(node, lines))
    return frozenset()


def _in_function(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> set[str]:
    args = fn.args
    named = args.posonlyargs + args.args + args.kwonlyargs
    positional = [a.arg for a in reversed(args.posonlyargs + args.args)]
    defaults = dict(zip(positional, reversed(args.defaults), strict=False))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)})
    found = set()
    for arg in named:
        if defaults.get(arg.arg) is None:
            continue  # only a default can change
        span = lines[arg.lineno - 1 : defaults[arg.arg].end_lineno or arg.lineno]
        if any(_COMMENT.search(text) for text in span):
            found.add(arg.arg)
    names = {a.arg for a in named}
    doc = ast.get_docstring(fn) or ""
    for text in doc.splitlines():
        if _DEPRECATED.search(text):
            found.update(n for n in names if re.search(rf"\b{re.escape(n)}\b", text))
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _DEPRECATED.search(dotted(node.func) or ""):
            found.update(_names_in(node.args + [k.value for k in node.keywords]) & names)
        elif isinstance(node, ast.If) and _warns_deprecation(node.body):
            found.update({_tested(node.test)} & names)
    return found


def _names_in(nodes: list[ast.expr]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _tested(test: ast.expr) -> str | None:
    """`x` of `if x:` or `if x is not None:` (the test that the caller passed it)."""
    if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.IsNot):
        test = test.left
    return test.id if isinstance(test, ast.Name) else None


def _warns_deprecation(body: list[ast.stmt]) -> bool:
    """A call in `body` with a string argument that speaks of a deprecation."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                for arg in node.args:
                    for part in ast.walk(arg):
                        if isinstance(part, ast.Constant) and isinstance(part.value, str):
                            if _DEPRECATED.search(part.value):
                                return True
    return False


def deprecation_note(root: Path, location: str | None) -> str | None:
    """How the function or class defined at `location` ("file:line" under `root`) says it
    is deprecated, else None: a decorator whose name speaks of it (`@deprecated(...)`,
    `@typing_extensions.deprecated`), or a statement of its body (a class: of its
    `__init__`) that warns with a `DeprecationWarning`/`FutureWarning` or a message
    speaking of a deprecation. A warning under an `if` (a deprecated parameter, see
    `deprecated_params`) is not the definition's own."""
    if not location or ":" not in location:
        return None
    file, _, line = location.rpartition(":")
    if not line.isdigit():
        return None
    return _note_at(str(Path(root) / file), int(line))


@lru_cache(maxsize=1024)
def _note_at(path: str, line: int) -> str | None:
    parsed = _parsed(path)
    if parsed is None:
        return None
    for node in ast.walk(parsed[0]):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.lineno == line
        ):
            return _definition_note(node)
    return None


def _definition_note(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted(target) or ""
        if _DEPRECATED.search(name.rpartition(".")[2]):
            return f"@{name}"
    body = node.body
    if isinstance(node, ast.ClassDef):
        init = next(
            (s for s in body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
        )
        body = init.body if init is not None else []
    for statement in body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            if _is_deprecation_warning(call):
                return f"{dotted(call.func)}(...) on every call"
    return None


def _is_deprecation_warning(call: ast.Call) -> bool:
    """`warnings.warn(msg, DeprecationWarning)`, a logger's warning speaking of a
    deprecation, `deprecate(...)`-style helpers."""
    name = dotted(call.func) or ""
    if _DEPRECATED.search(name):
        return True
    if name.rpartition(".")[2] not in ("warn", "warning", "warning_once", "warn_once"):
        return False
    parts = [*call.args, *(k.value for k in call.keywords)]
    for part in parts:
        shown = dotted(part) or ""
        if shown.rpartition(".")[2] in ("DeprecationWarning", "FutureWarning"):
            return True
    return _warns_deprecation([ast.Expr(call)])
