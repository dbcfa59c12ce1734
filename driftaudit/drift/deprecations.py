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
