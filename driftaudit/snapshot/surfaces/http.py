"""The HTTP routes an sglang tree exposes, read statically from every non-test module.

What is recognised (any receiver name: `app`, `router`, `health_router`, `self.app`):

- FastAPI/Starlette decorators: `@app.get("/x")`, `.post/.put/.delete/.patch/.head/
  .options/.trace`, `@app.api_route("/x", methods=[...])` (no `methods`: GET, FastAPI's
  default), `@app.route(...)`, `@app.websocket("/x")` (method `WEBSOCKET`);
- calls: `app.add_api_route(path, endpoint, methods=...)`, `add_api_websocket_route`,
  `add_websocket_route`, Starlette `add_route(path, endpoint, methods=...)`, aiohttp
  `app.router.add_route("*", path, handler)` / `add_get` / `add_post` / ..., aiohttp
  `web.get(path, handler)`, and the constructors `Route(path, endpoint, methods=...)`
  (any callee named `*Route`, so an import alias works), `WebSocketRoute(path, endpoint)`,
  `Mount(path, app)` (a mount answers any method: `*`);
- `APIRouter(prefix="/v1/images")` assigned at module level: the prefix is prepended to
  the paths of that router's decorators in the same file.

Paths are resolved from string literals, f-strings and `+` of resolvable parts,
module-level constants (`VERTEX_ROUTE = ...`, assigned at column 0), and
`os.environ.get("VAR", "/default")` / `os.getenv(...)` (the default: what the server
serves when the variable is unset).
A path that cannot be resolved (`@app.get(_ollama_root_route)` with no default) or
that does not start with `/` is not a route here.

`stub`: a decorated handler whose body (after its docstring and any log calls) only
raises, or returns a response built with an error status (`status_code=404`): a retired
route kept to say so (0.5.16's `/get_weight_version`: "is deprecated. Please use
'/model_info' instead."). A client of it already got an error.

Not modelled: a prefix given to `include_router(router, prefix=...)` (sglang passes
none) and conditions: a route registered under an `if` is reported as always present
(`/dumper/{method}`, guarded by an env var; both Ollama root alternatives, of which the
env-named one has no static path and is skipped). The tree holds several
servers (srt's http_server, the disaggregation bootstrap and encoder servers, the
diffusion server in multimodal_gen, health-check stubs); `file` tells them apart.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.snapshot.surfaces._files import (
    const_str,
    dotted,
    iter_sources,
    iter_statements,
    match_lines,
    parse_around,
    prefilter,
    unparse,
)

_VERBS = {"get", "post", "put", "delete", "patch", "head", "options", "trace"}
_DECORATOR_KINDS = _VERBS | {"api_route", "route", "websocket"}
_AIOHTTP_ADD = {f"add_{verb}": verb for verb in _VERBS}
_DECORATOR_NEEDLE = re.compile(
    rb"@[\w.]+\.(?:get|post|put|delete|patch|head|options|trace|api_route|route|websocket)\("
)
_CALL_NEEDLE = [
    re.compile(
        rb"\.add_(?:api_route|api_websocket_route|websocket_route|route|get|post|put|delete"
        rb"|patch|head)\("
    ),
    re.compile(rb"Route\("),
    re.compile(rb"Mount\("),
    re.compile(rb"web\.(?:get|post|put|delete|patch|head|route)\("),
]
_NEEDLE = prefilter(_DECORATOR_NEEDLE, *_CALL_NEEDLE)
_MODULE_ASSIGNMENT = re.compile(rb"^[A-Za-z_]\w*[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


@dataclass
class Route:
    path: str
    methods: list[str]  # upper case, sorted; "*" for any, "WEBSOCKET" for a websocket
    function: str  # the handler: function name, or the source of the endpoint expression
    file: str  # relative to the tree root: sglang/srt/entrypoints/http_server.py
    line: int
    stub: bool = False  # the handler only answers with an error (see the module)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "methods": self.methods,
            "function": self.function,
            "file": self.file,
            "line": self.line,
        } | ({"stub": True} if self.stub else {})

    @classmethod
    def from_json(cls, data: dict) -> Route:
        return cls(
            data["path"],
            list(data["methods"]),
            data["function"],
            data["file"],
            data["line"],
            data.get("stub", False),
        )


def extract_routes(root: Path) -> list[Route]:
    """Every route of every server module below `root/sglang`, sorted by file and line."""
    routes: list[Route] = []
    for rel, text in iter_sources(root, _NEEDLE):
        data = text.encode()
        call_lines = set(match_lines(data, _CALL_NEEDLE))
        # the decorated functions, the calls, and the module-level constants they may use
        lines = match_lines(data, [_DECORATOR_NEEDLE, *_CALL_NEEDLE, _MODULE_ASSIGNMENT])
        trees = parse_around(text, rel, lines)
        if trees:
            routes.extend(_FileRoutes(rel, trees).collect(call_lines))
    return routes


_PLACEHOLDER = re.compile(r"\{[^}]*\}")


def route_key(path: str) -> str:
    """A route's path as compared across releases: no trailing slash, its placeholders
    unnamed (`/x/{rid}` is `/x/{}`)."""
    return _PLACEHOLDER.sub("{}", path.rstrip("/") or "/")


def routes_by_path(routes: list[Route]) -> dict[str, list[Route]]:
    out: dict[str, list[Route]] = {}
    for route in routes:
        out.setdefault(route.path, []).append(route)
    return out


class _FileRoutes:
    """The routes of one module, given the trees of its regions (`parse_around`)."""

    def __init__(self, rel: str, trees: list[ast.Module]) -> None:
        self.rel = rel
        self.trees = trees
        self.constants: dict[str, ast.expr] = {}
        self.prefixes: dict[str, str] = {}
        for tree in trees:
            self._module_names(tree.body)

    def _module_names(self, body: list[ast.stmt]) -> None:
        """Module-level `NAME = expr` (also inside module-level if/try blocks)."""
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            elif isinstance(stmt, (ast.If, ast.Try)):
                self._module_names(stmt.body)
                self._module_names(stmt.orelse)
                for handler in getattr(stmt, "handlers", []):
                    self._module_names(handler.body)
                continue
            else:
                continue
            if not isinstance(target, ast.Name):
                continue
            self.constants.setdefault(target.id, value)
            if isinstance(value, ast.Call) and (dotted(value.func) or "").endswith("APIRouter"):
                prefix = _keyword(value, "prefix")
                resolved = self.resolve(prefix) if prefix is not None else ""
                self.prefixes[target.id] = resolved or ""

    def resolve(self, node: ast.AST | None, depth: int = 0) -> str | None:
        """The string value of a path expression, or None when it is not static."""
        if node is None or depth > 8:
            return None
        text = const_str(node)
        if text is not None:
            return text
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.resolve(self.constants[node.id], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.resolve(node.left, depth + 1)
            right = self.resolve(node.right, depth + 1)
            return left + right if left is not None and right is not None else None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    value = value.value
                part = self.resolve(value, depth + 1)
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        if isinstance(node, ast.Call):
            func = dotted(node.func) or ""
            if func.endswith(("environ.get", "getenv")) and len(node.args) >= 2:
                return self.resolve(node.args[1], depth + 1)
            default = _keyword(node, "default")
            if func.endswith(("environ.get", "getenv")) and default is not None:
                return self.resolve(default, depth + 1)
        return None

    def collect(self, call_lines: set[int] | None = None) -> list[Route]:
        """Decorated functions, and registration calls in the simple statements that
        span one of `call_lines` (where a call form matched; None: every statement)."""
        found: dict[tuple[str, str, str], Route] = {}
        statements = (stmt for tree in self.trees for stmt in iter_statements(tree.body))
        for stmt in statements:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in stmt.decorator_list:
                    route = self._from_decorator(decorator, stmt.name)
                    if route is not None:
                        route.stub = _answers_error(stmt.body)
                        _merge(found, route)
            if _is_compound(stmt) or (
                call_lines is not None
                and not any(
                    line in call_lines for line in range(stmt.lineno, (stmt.end_lineno or 0) + 1)
                )
            ):
                continue
            for node in walk(stmt):
                if isinstance(node, ast.Call):
                    route = self._from_call(node)
                    if route is not None:
                        _merge(found, route)
        routes = list(found.values())
        for route in routes:
            route.methods = sorted(set(route.methods))
        return sorted(routes, key=lambda r: (r.line, r.path))

    def _route(self, path_node, methods, function, line, receiver=None) -> Route | None:
        path = self.resolve(path_node)
        if path is None:
            return None
        if receiver is not None and receiver in self.prefixes:
            path = self.prefixes[receiver] + path
        if not path.startswith("/"):
            return None
        return Route(path, [m.upper() for m in methods], function, self.rel, line)

    def _from_decorator(self, decorator: ast.expr, function: str) -> Route | None:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
            return None
        kind = decorator.func.attr
        if kind not in _DECORATOR_KINDS:
            return None
        receiver = dotted(decorator.func.value)
        if receiver is None:
            return None
        path_node = decorator.args[0] if decorator.args else _keyword(decorator, "path")
        if kind in _VERBS:
            methods = [kind]
        elif kind == "websocket":
            methods = ["WEBSOCKET"]
        else:
            methods = _methods(_keyword(decorator, "methods")) or ["GET"]
        return self._route(path_node, methods, function, decorator.lineno, receiver)

    def _from_call(self, call: ast.Call) -> Route | None:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        args = call.args
        if name in ("add_api_route", "add_route") and args and self._is_path(args[0]):
            # FastAPI/Starlette: (path, endpoint, methods=...)
            endpoint = args[1] if len(args) > 1 else _keyword(call, "endpoint")
            methods = _methods(_keyword(call, "methods"))
            if methods is None and len(args) > 2:
                methods = _methods(args[2])
            return self._route(args[0], methods or ["GET"], _endpoint(endpoint), call.lineno)
        if name == "add_route" and len(args) >= 2:
            # aiohttp: (method, path, handler)
            method = const_str(args[0])
            if method is None:
                return None
            endpoint = args[2] if len(args) > 2 else None
            return self._route(args[1], [method], _endpoint(endpoint), call.lineno)
        if name in ("add_api_websocket_route", "add_websocket_route") and args:
            endpoint = args[1] if len(args) > 1 else _keyword(call, "endpoint")
            return self._route(args[0], ["WEBSOCKET"], _endpoint(endpoint), call.lineno)
        if name in _AIOHTTP_ADD and isinstance(func, ast.Attribute) and args:
            endpoint = args[1] if len(args) > 1 else _keyword(call, "handler")
            return self._route(args[0], [_AIOHTTP_ADD[name]], _endpoint(endpoint), call.lineno)
        if (
            isinstance(func, ast.Attribute)
            and dotted(func.value) == "web"
            and (func.attr in _VERBS or func.attr == "route")
            and args
        ):
            if func.attr == "route":  # web.route(method, path, handler)
                method = const_str(args[0])
                if method is None or len(args) < 2:
                    return None
                endpoint = args[2] if len(args) > 2 else None
                return self._route(args[1], [method], _endpoint(endpoint), call.lineno)
            endpoint = args[1] if len(args) > 1 else None
            return self._route(args[0], [func.attr], _endpoint(endpoint), call.lineno)
        if name and (name == "Mount" or name.endswith("Route")) and args:
            # Starlette's Route / WebSocketRoute / Mount (also imported under an alias)
            endpoint = (
                args[1] if len(args) > 1 else (_keyword(call, "endpoint") or _keyword(call, "app"))
            )
            if name == "Mount":
                methods = ["*"]
            elif "WebSocket" in name:
                methods = ["WEBSOCKET"]
            else:
                methods = _methods(_keyword(call, "methods")) or ["GET"]
            return self._route(args[0], methods, _endpoint(endpoint), call.lineno)
        return None

    def _is_path(self, node: ast.AST) -> bool:
        value = self.resolve(node)
        return value is not None and value.startswith("/")


_ERROR_STATUS = re.compile(r"(?:^|_)(?:[45]\d\d|NOT_FOUND|GONE|BAD_REQUEST|NOT_IMPLEMENTED)(?:_|$)")


def _answers_error(body: list[ast.stmt]) -> bool:
    """Does a handler only raise, or return an error response (after logging)?"""
    if body and isinstance(body[0], ast.Expr) and const_str(body[0].value) is not None:
        body = body[1:]  # the docstring
    if not body or not all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in body[:-1]
    ):
        return False
    last = body[-1]
    if isinstance(last, ast.Raise):
        return last.exc is not None
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Call):
        status = _keyword(last.value, "status_code") or _keyword(last.value, "status")
        if isinstance(status, ast.Constant) and isinstance(status.value, int):
            return status.value >= 400
        name = (dotted(status) or "").rpartition(".")[2] if status is not None else ""
        return bool(_ERROR_STATUS.search(name))
    return False


def _is_compound(stmt: ast.stmt) -> bool:
    return any(isinstance(getattr(stmt, name, None), list) for name in ("body", "cases"))


def _merge(found: dict, route: Route) -> None:
    """One route per (path, handler, file): stacked `@app.get` + `@app.head` join."""
    key = (route.path, route.function, route.file)
    if key in found:
        existing = found[key]
        existing.methods = existing.methods + route.methods
        existing.line = min(existing.line, route.line)
    else:
        found[key] = route


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _methods(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        methods = [const_str(e) for e in node.elts]
        return [m.upper() for m in methods if m] or None
    text = const_str(node)
    return [text.upper()] if text else None


def _endpoint(node: ast.AST | None) -> str:
    return unparse(node, 80) or "?"
