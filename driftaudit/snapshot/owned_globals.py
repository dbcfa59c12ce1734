"""Attributes sglang stores on a module-level object it owns.

`app = FastAPI(...)` in `sglang/srt/entrypoints/http_server.py`, and later, in the same
module, `app.server_args = server_args` / `app.warmup_thread_args = (...)`: these names
are a protocol between sglang's own code (`launch_server` sets them, `lifespan` reads
them). A consumer that drives the object itself sets the same names; when a release
stores another name instead, the consumer's store is dead and sglang's read fails.

Read from the module's source with `ast`, only for the globals a consumer stores on
(parsed on demand, once per module content: kept in the snapshot store).
"""

from __future__ import annotations

import ast

from driftaudit.store import key

GLOBAL_ATTRS_VERSION = "1"


def stored_attributes(snapshot, module: str, name: str) -> dict[str, int] | None:
    """attribute -> first line where `module` stores `<name>.<attribute>` on its global
    `name`; None when the module does not assign `name` at module level."""
    digest = snapshot.file_digest(module)  # None: not a readable file of the tree
    if digest is None:
        return None
    found = _stored(snapshot, module, digest)  # remembered by the store for the run
    return None if found is None else found.get(name)


def _stored(snapshot, module: str, digest: str) -> dict[str, dict[str, int]] | None:
    """`_read` of the module, kept in the snapshot store (keyed by the file's content)."""
    entry = key("global_attrs", GLOBAL_ATTRS_VERSION, module, digest)
    return snapshot.kept(entry, lambda: _read(snapshot.source(module)), _table)


def _table(data) -> dict[str, dict[str, int]] | None:
    if data is not None and not isinstance(data, dict):
        raise TypeError("not a table of stored attributes")
    return data


def _read(code: str | None) -> dict[str, dict[str, int]] | None:
    if code is None:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    owned = set()
    for statement in tree.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(
            statement.value, ast.Call
        ):  # an object built here: `app = FastAPI(...)` (not an alias of another)
            owned.update(t.id for t in targets if isinstance(t, ast.Name))
    stores: dict[str, dict[str, int]] = {name: {} for name in owned}
    _Stores(owned, stores).visit(tree)
    return stores


class _Stores(ast.NodeVisitor):
    """`g.x = ...`, `g.x += ...`, `setattr(g, "x", ...)` where `g` is the module's global
    (not a local or a parameter of the same name)."""

    def __init__(self, owned: set[str], stores: dict[str, dict[str, int]]) -> None:
        self.owned, self.stores = owned, stores
        self.shadowed: list[set[str]] = [set()]

    def _function(self, node) -> None:
        local = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        local |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
        declared = {n for s in ast.walk(node) if isinstance(s, ast.Global) for n in s.names}
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                local.add(child.id)
        self.shadowed.append((local - declared) & self.owned)
        self.generic_visit(node)
        self.shadowed.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _global(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and node.id in self.owned:
            return None if node.id in self.shadowed[-1] else node.id
        return None

    def _add(self, owner: str | None, attribute: str, line: int) -> None:
        if owner is not None:
            self.stores[owner].setdefault(attribute, line)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(self._global(node.value), node.attr, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) >= 2:
            attribute = node.args[1]
            if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                self._add(self._global(node.args[0]), attribute.value, node.lineno)
        self.generic_visit(node)
