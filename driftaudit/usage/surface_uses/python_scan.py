"""One parsed Python tree (a whole file or a unit of it, see `python_files`) ->
flags, env vars and URLs.

Flags: an argv list or command string holding an sglang launcher, what is later appended to
such a variable, `other_args=` of `popen_launch_server`; `args.sglang_<field>`,
`getattr(args, "sglang_<field>")`, `parser.set_defaults(sglang_<field>=...)` and class fields
named so give `--<field>` (context "python-attr": a dest, as a wrapping parser stores it).

Env vars: `os.environ[...]`, `.get`, `.setdefault`, `getenv`, `in os.environ`,
`monkeypatch.setenv`, env dict literals and subscripts, keyword arguments,
`envs.SGLANG_X.get()`/`.set()`; any other string naming one exactly counts as a read.

URLs: string literals, f-strings and `+` concatenations that look like routes, with the method of
the call using them (`requests.post`, `httpx`, `session.get`, a consumer `post(...)` helper), the
keys of the `json=`/`data=` payload (a dict literal, or a dict variable assigned earlier in the
function plus its `payload["k"] = ...` additions), the routes given to a consumer's request helper
(`def _make_request(self, endpoint, payload): requests.post(f"{base}/{endpoint}", ...)` called as
`self._make_request("flush_cache", {})`, in any file), and the alternatives of a fallback loop
(`routes.is_fallback`). Not routes: route definitions, strings bound to `*_dir` or passed to
`Path`/`open`. Not handled: flags in variables built in another function or file, request helpers
whose route parameter is not the last part of the path."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from driftaudit.astwalk import children
from driftaudit.pysource import Located, any_within, dotted, end_of
from driftaudit.usage.surface_uses.argv import FlagHit, argv_flags, has_launcher
from driftaudit.usage.surface_uses.dests import named_dests, owned_dests
from driftaudit.usage.surface_uses.prose import is_message_call, message_strings, reads_as_prose
from driftaudit.usage.surface_uses.python_exprs import (
    PATH_FUNCS,
    PATHISH,
    is_pathish,
    is_str,
    string_template,
)
from driftaudit.usage.surface_uses.records import SurfaceUsages, UrlUsage
from driftaudit.usage.surface_uses.routes import SCHEME_HOST, is_fallback, route_of
from driftaudit.usage.surface_uses.shell import shell_segments
from driftaudit.usage.surface_uses.sink import (
    ENV_ASSIGN_IN_TEXT,
    ENV_NAME,
    LAUNCH_MODULES,
    LAUNCHER_TEXT,
    PLACEHOLDER,
    Sink,
)

if TYPE_CHECKING:
    from driftaudit.usage.surface_uses.python_exprs import Str

_HTTP_VERBS = {"get", "post", "put", "delete", "patch", "head", "options"}
_HTTP_RECEIVERS = ("requests", "httpx", "session", "client", "http", "aiohttp", "sess")
_ROUTE_DEFINERS = {
    "add_api_route", "add_route", "route", "api_route", "mount", "websocket", "add_url_rule",
    "add_websocket_route",
}  # fmt: skip
_APP_NAMES = {"app", "router", "api", "bp", "blueprint", "api_router", "server"}
_ENV_SETTERS = {"setdefault", "putenv", "setenv", "delenv", "unsetenv"}
_ENV_RECEIVER = re.compile(r"(?:^|_)(?:envs?|environ|environment)$", re.I)
_DOC_KEYWORDS = {"help", "description", "epilog", "usage", "msg", "message", "doc"}
_BASE_WORDS = {
    "url", "urls", "base", "host", "hostname", "addr", "address", "endpoint", "server", "api",
    "uri", "router", "ip", "port", "origin",
}  # fmt: skip
_URL_KEYWORDS = {"url", "endpoint", "uri"}
_PAYLOAD_KEYWORDS = {"json", "data", "payload", "body", "json_data", "content"}
_HELPER_ARG = re.compile(r"/?[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z0-9_]+)*")
_VERB_IN_NAME = re.compile(r"(?:^|_)(post|put|patch|delete)(?:_|$)|(?:^|_)(?:a?sync|http)_get$")
HTTP_CALL_LINE = re.compile(r"(?:post|get|put|delete|patch|request|urlopen)\w*\(")


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _callee(call: ast.Call) -> tuple[str | None, str]:
    """(the called name, the last name of its receiver, lowercased)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id, ""
    if isinstance(func, ast.Attribute):
        receiver = func.value
        while isinstance(receiver, ast.Call):
            receiver = receiver.func
        if isinstance(receiver, ast.Attribute):
            return func.attr, receiver.attr.lower()
        if isinstance(receiver, ast.Name):
            return func.attr, receiver.id.lower()
        return func.attr, ""
    return None, ""


def _looks_like_base(expr: ast.expr) -> bool:
    """Does the expression in front of a path name a base URL (`base_url`, `self.host`)?"""
    while isinstance(expr, (ast.Call, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    name = (dotted(expr) or "").rpartition(".")[2]
    if not name:
        return False
    words = set(name.lower().strip("_").split("_"))
    return bool(words & _BASE_WORDS) or name.lower().endswith("url")


class _Scope:
    """What one function (or the module body) holds, for lookups within it."""

    def __init__(self, node: ast.AST):
        self.node = node
        self.assigns: dict[str, list[tuple[int, ast.expr]]] = {}
        self.sub_keys: dict[str, list[tuple[int, str]]] = {}
        self.loops: dict[str, list[Str]] = {}
        self.fallbacks: dict[str, bool] = {}  # loops over alternatives (`is_fallback`)
        self.calls: list[ast.Call] = []
        self.strings: list[Str | ast.JoinedStr] = []
        self.binops: list[ast.BinOp] = []
        self.seqs: list[ast.List | ast.Tuple] = []
        self.attrs: list[ast.Attribute] = []
        self.dicts: list[ast.Dict] = []
        self.subscripts: list[ast.Subscript] = []
        self.compares: list[ast.Compare] = []
        self.aug: list[ast.AugAssign] = []
        self.class_fields: list[ast.Name] = []

    def latest(self, name: str, line: int) -> ast.expr | None:
        best = None
        for lineno, value in self.assigns.get(name, ()):
            if lineno <= line:
                best = value
        return best


@dataclass
class Helper:
    """A consumer function requesting `<base>/<param>`: `_make_request(self, endpoint, ...)`."""

    route_index: int  # parameter index, self counted
    method: str | None
    payload_index: int | None
    method_like: bool  # its first parameter is self/cls


@dataclass
class PendingCall:
    """A call passing a route-like string; it names a route if its callee is a helper."""

    rel: str
    name: str
    attr_call: bool
    args: list[tuple[str, int, int] | None]  # constant string arguments: value, line, column
    payloads: list[list[str] | None]  # payload keys of each argument, when evident


class PythonScan:
    """One parsed tree (a whole file or one unit of it, see `PyFile`) -> usages."""

    def __init__(self, sink: Sink, lines: list[str], imported: Callable[[], set[str]],
                 helpers: dict[str, Helper], pending: list[PendingCall]):  # fmt: skip
        self.sink = sink
        self.lines = lines
        self.imported = imported  # () -> root names the file imports (`miles.x.sglang_y`)
        self.full = True
        self.helpers = helpers
        self.pending = pending
        self.skip: set[int] = set()  # string nodes that are prose
        self.messages: set[int] = set()  # strings of log/print/raise/assert messages
        self.env_done: set[int] = set()
        self.url_done: set[int] = set()  # string nodes read already, or route definitions
        self.pathish: set[int] = set()  # strings bound to a path-like name: not routes

    # -- positions --

    def _col0(self, line: int, col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return col
        return len(text.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def _start(self, node: Located) -> int:
        return self.sink.text.offset(node.lineno, self._col0(node.lineno, node.col_offset))

    def _end(self, node: Located) -> int:
        line, column = end_of(node)
        return self.sink.text.offset(line, self._col0(line, column))

    def _find(self, node: Located, needle: str, after: int = -1) -> int:
        """Offset of needle in the node's source (the node's start when absent)."""
        start = self._start(node)
        at = self.sink.text.text.find(needle, max(start, after), self._end(node))
        return at if at >= 0 else start

    def _attr_offset(self, attr: ast.Attribute) -> int:
        line, column = end_of(attr)
        return self.sink.text.offset(line, self._col0(line, column) - len(attr.attr))

    # -- walk --

    def run(self, tree: ast.Module, hot: list[int] | None = None) -> None:
        """Read a tree. Expressions are visited only in statements that touch a `hot`
        line (sorted, 1-based; None: all); elsewhere only assignments are recorded."""
        self.skip, self.env_done, self.url_done, self.pathish = set(), set(), set(), set()
        self.messages = set()
        self.full = hot is None
        scopes: list[ast.AST] = [tree]
        while scopes:
            scope, nested = self._collect(scopes.pop(), hot)
            scopes.extend(nested)
            self._envs(scope)
            self._flags(scope)
            self._urls(scope)

    @staticmethod
    def _touches(hot: list[int] | None, node: ast.AST) -> bool:
        return hot is None or any_within(hot, node.lineno, node.end_lineno)

    def _collect(self, root: ast.AST, hot: list[int] | None) -> tuple[_Scope, list[ast.AST]]:
        scope = _Scope(root)
        nested: list[ast.AST] = []
        statements: list[ast.stmt] = list(root.body)
        expressions: list[ast.AST] = []
        while statements:
            stmt = statements.pop()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for decorator in stmt.decorator_list:
                    self.url_done.update(id(sub) for sub in ast.walk(decorator))
                if isinstance(stmt, ast.ClassDef):
                    statements.extend(stmt.body)
                    for item in stmt.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            scope.class_fields.append(item.target)
                    continue
                nested.append(stmt)
                args = stmt.args
                for default in [*args.defaults, *args.kw_defaults, *stmt.decorator_list]:
                    if default is not None and self._touches(hot, default):
                        expressions.append(default)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Constant, ast.JoinedStr)):
                self.skip.add(id(stmt.value))  # docstrings and other bare strings
                continue
            if hasattr(stmt, "body") or isinstance(stmt, ast.Match):
                if isinstance(stmt, (ast.For, ast.AsyncFor)):
                    self._loop(scope, stmt)
                for name, value in ast.iter_fields(stmt):
                    if name in ("body", "orelse", "finalbody"):
                        statements.extend(value)
                    elif name in ("handlers", "cases"):
                        for part in value:
                            statements.extend(part.body)
                    elif isinstance(value, ast.AST) and self._touches(hot, value):
                        expressions.append(value)
                    elif isinstance(value, list):
                        expressions.extend(
                            v
                            for v in value
                            if isinstance(v, ast.AST) and self._touches_item(hot, v)
                        )
                continue
            self._record_assignment(scope, stmt)
            if self._touches(hot, stmt):
                expressions.append(stmt)
        while expressions:
            node = expressions.pop()
            self._classify(scope, node)
            expressions.extend(children(node))
        return scope, nested

    def _touches_item(self, hot: list[int] | None, node: ast.AST) -> bool:
        if hasattr(node, "lineno"):
            return self._touches(hot, node)
        return any(self._touches_item(hot, child) for child in ast.iter_child_nodes(node))

    def _record_assignment(self, scope: _Scope, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.AugAssign):
            scope.aug.append(stmt)
            return
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if is_pathish(target):
                self.pathish.add(id(stmt.value))
            if isinstance(target, ast.Name):
                scope.assigns.setdefault(target.id, []).append((stmt.lineno, stmt.value))
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and is_str(target.slice)
            ):
                key = (stmt.lineno, target.slice.value)
                scope.sub_keys.setdefault(target.value.id, []).append(key)

    @staticmethod
    def _loop(scope: _Scope, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        if isinstance(node.target, ast.Name) and isinstance(node.iter, (ast.Tuple, ast.List)):
            constants = [e for e in node.iter.elts if is_str(e)]
            if constants:
                scope.loops[node.target.id] = constants
                scope.fallbacks[node.target.id] = is_fallback(node)

    def _classify(self, scope: _Scope, node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            if is_str(node):
                scope.strings.append(node)
        elif isinstance(node, ast.JoinedStr):
            scope.strings.append(node)
            for value in node.values:
                self.skip.add(id(value))
                if isinstance(value, ast.FormattedValue) and value.format_spec is not None:
                    self.skip.add(id(value.format_spec))
        elif isinstance(node, ast.Call):
            scope.calls.append(node)
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in PATH_FUNCS:
                self.pathish.update(id(arg) for arg in node.args)
            if is_message_call(node):
                self.messages.update(id(sub) for sub in message_strings(node))
        elif isinstance(node, ast.Assert) and node.msg is not None:
            self.messages.update(id(sub) for sub in message_strings(node.msg))
        elif isinstance(node, ast.Attribute):
            scope.attrs.append(node)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                scope.binops.append(node)
        elif isinstance(node, (ast.List, ast.Tuple)):
            scope.seqs.append(node)
        elif isinstance(node, ast.Dict):
            scope.dicts.append(node)
            for key, value in zip(node.keys, node.values, strict=True):
                if key is not None and is_pathish(key):
                    self.pathish.add(id(value))
        elif isinstance(node, ast.Subscript):
            scope.subscripts.append(node)
        elif isinstance(node, ast.Compare):
            scope.compares.append(node)
            operands = [node.left, *node.comparators]
            if any(is_pathish(operand) for operand in operands):
                self.pathish.update(id(operand) for operand in operands)
        elif isinstance(node, ast.keyword):
            if node.arg in _DOC_KEYWORDS:
                self.skip.add(id(node.value))
            elif node.arg and PATHISH.search(node.arg):
                self.pathish.add(id(node.value))
        elif isinstance(node, ast.comprehension):
            self._loop(scope, node)

    # -- env vars --

    def _env(self, node: Located, name: str, kind: str) -> None:
        self.env_done.add(id(node))
        self.sink.env(self._find(node, name), name, kind, "python")

    def _envs(self, scope: _Scope) -> None:
        def env_of(node: ast.AST | None) -> str | None:
            if is_str(node) and ENV_NAME.fullmatch(node.value):
                return node.value
            return None

        for call in scope.calls:
            name, receiver = _callee(call)
            env = env_of(call.args[0]) if call.args else None
            if env and name:
                lowered = name.lower()
                setter = lowered in _ENV_SETTERS or ("env" in lowered and "set" in lowered)
                if lowered == "pop" and "environ" in receiver:
                    setter = True
                self._env(call.args[0], env, "set" if setter else "read")
            for keyword in call.keywords:
                if keyword.arg and ENV_NAME.fullmatch(keyword.arg):
                    self.sink.env(self._start(keyword), keyword.arg, "set", "python")
        for sub in scope.subscripts:
            env = env_of(sub.slice)
            if env:
                store = isinstance(sub.ctx, (ast.Store, ast.Del))
                self._env(sub.slice, env, "set" if store else "read")
        for compare in scope.compares:
            env = env_of(compare.left)
            if env and any(isinstance(op, (ast.In, ast.NotIn)) for op in compare.ops):
                self._env(compare.left, env, "read")
        for mapping in scope.dicts:
            for key in mapping.keys:
                env = env_of(key)
                if env and key is not None:
                    self._env(key, env, "set")
        setters = {
            id(call.func.value)
            for call in scope.calls
            if isinstance(call.func, ast.Attribute)
            and call.func.attr in ("set", "override", "clear", "unset", "reset", "setdefault")
        }
        for attr in scope.attrs:
            if ENV_NAME.fullmatch(attr.attr):
                receiver = (dotted(attr.value) or "").rpartition(".")[2]
                if receiver and _ENV_RECEIVER.search(receiver):
                    store = isinstance(attr.ctx, (ast.Store, ast.Del)) or id(attr) in setters
                    kind = "set" if store else "read"
                    self.sink.env(self._attr_offset(attr), attr.attr, kind, "python")
        for node in scope.strings:
            if id(node) in self.env_done or id(node) in self.skip:
                continue
            if isinstance(node, ast.Constant):
                if ENV_NAME.fullmatch(node.value):
                    self._env(node, node.value, "read")
                    continue
                text = node.value
            else:
                text = string_template(node)[0]
            if "SGL" in text and "=" in text:
                cursor = -1
                for m in ENV_ASSIGN_IN_TEXT.finditer(text):
                    at = self._find(node, m.group(1), cursor)
                    cursor = at + 1
                    self.sink.env(at, m.group(1), "set", "python")

    # -- flags --

    def _launching(self, node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if is_str(sub) and (sub.value in LAUNCH_MODULES or LAUNCHER_TEXT.search(sub.value)):
                return True
        return False

    def _flags(self, scope: _Scope) -> None:
        launch_vars = {  # only a tree read in full names a launcher
            name
            for name, values in scope.assigns.items()
            if self.full and any(self._launching(value) for _, value in values)
        }
        launched: set[int] = set()
        for call in scope.calls:
            name, _ = _callee(call)
            if name and "launch_server" in name:
                for keyword in call.keywords:
                    if keyword.arg in ("other_args", "args", "extra_args", "server_args"):
                        if isinstance(keyword.value, ast.Name):
                            launch_vars.add(keyword.value.id)
                        launched.add(id(keyword.value))
        for name in launch_vars:
            launched.update(id(value) for _, value in scope.assigns.get(name, ()))
        for call in scope.calls:
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("append", "extend", "insert")
                and isinstance(func.value, ast.Name)
                and func.value.id in launch_vars
            ):
                launched.update(id(arg) for arg in call.args)
        for aug in scope.aug:
            if isinstance(aug.target, ast.Name) and aug.target.id in launch_vars:
                launched.add(id(aug.value))
        for binop in scope.binops:  # cmd = base + ["--x", "1"]
            if id(binop) in launched:
                launched.update((id(binop.left), id(binop.right)))
        for seq in scope.seqs:
            self._seq_flags(seq, id(seq) in launched)
        for node in scope.strings:
            if id(node) not in self.skip and id(node) not in self.messages:
                self._string_flags(node, id(node) in launched)
        if self.sink.prefixes.py:
            self._attr_flags(scope)

    def _seq_flags(self, seq: ast.List | ast.Tuple, launched: bool) -> None:
        tokens: list[str] = []
        for element in seq.elts:
            if isinstance(element, ast.Constant) and element.value is not None:
                tokens.append(str(element.value))
            else:
                tokens.append(PLACEHOLDER)
        if not any(t.startswith("--") for t in tokens):
            return
        launched = launched and not has_launcher(tokens)
        for hit in argv_flags(tokens, self.sink.prefixes, launched):
            node = seq.elts[hit.index]
            self.sink.flag(self._find(node, hit.written), hit, "python-argv")

    def _string_flags(self, node: Str | ast.JoinedStr, launched: bool) -> None:
        if isinstance(node, ast.Constant):
            text = node.value
        else:
            text = string_template(node)[0].replace("{}", PLACEHOLDER)
        if "--" not in text:
            return
        has_launcher = LAUNCHER_TEXT.search(text) is not None
        if not (launched or has_launcher or any(p in text for p in self.sink.prefixes.dash)):
            return
        if not (launched or has_launcher) and reads_as_prose(text):
            return  # "Use --sglang-x to override.": named, not passed
        launched = launched and not has_launcher
        cursor = -1
        for words in shell_segments(text):
            for hit in argv_flags([w.text for w in words], self.sink.prefixes, launched):
                at = self._find(node, hit.written, cursor)
                cursor = at + 1
                self.sink.flag(at, hit, "python-argv")

    def _attr_flags(self, scope: _Scope) -> None:
        prefixes, owned = self.sink.prefixes, owned_dests(scope.calls)
        for attr in scope.attrs:
            ours = "_" not in attr.attr or attr.attr in owned
            split = None if ours else prefixes.split_name(attr.attr)
            if split and _root_name(attr.value) not in self.imported():
                hit = FlagHit(0, split[0], attr.attr, split[1], None)
                self.sink.flag(self._attr_offset(attr), hit, "python-attr")
        for call in scope.calls:
            for node, name in named_dests(call):
                split = prefixes.split_name(name) if name not in owned else None
                if split:
                    hit = FlagHit(0, split[0], name, split[1], None)
                    self.sink.flag(self._find(node, name), hit, "python-attr")
        for target in scope.class_fields:
            split = prefixes.split_name(target.id)
            if split:
                hit = FlagHit(0, split[0], target.id, split[1], None)
                self.sink.flag(self._start(target), hit, "python-attr")

    # -- URLs --

    def _urls(self, scope: _Scope) -> None:
        self._route_definitions(scope)
        uses: dict[int, list[tuple[str | None, list[str]]]] = {}
        for call in scope.calls:
            request = self._http_call(call)
            if request is None:
                continue
            url, method, payload = request
            keys = self._payload_keys(scope, payload, call.lineno)
            target = self._resolve(scope, url, call.lineno)
            if target is None:
                continue
            uses.setdefault(id(target), []).append((method, keys))
            self._helper(scope, target, method, payload)
            self._loop_routes(scope, target, method, keys)
        # concatenations first, outermost first: their parts are not read again
        for binop in sorted(
            scope.binops, key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset)
        ):
            if id(binop) in self.url_done:
                continue
            for sub in ast.walk(binop):
                self.url_done.add(id(sub))
            self._url_node(binop, uses.get(id(binop)))
        for node in scope.strings:
            if id(node) not in self.url_done and id(node) not in self.skip:
                self.url_done.add(id(node))
                self._url_node(node, uses.get(id(node)))
        self._pending_calls(scope)

    def _http_call(self, call: ast.Call) -> tuple[ast.expr, str | None, ast.expr | None] | None:
        name, receiver = _callee(call)
        if name is None:
            return None
        lowered = name.lower()
        httpish = any(word in receiver for word in _HTTP_RECEIVERS)
        url_index = 0
        if lowered in _HTTP_VERBS:
            if receiver in _APP_NAMES and self._bare_route(call):
                return None  # a route definition: app.get("/health")(handler)
            if not httpish and (lowered == "get" or lowered in ("head", "options")):
                return None  # dict.get, getattr-like helpers
            method: str | None = lowered.upper()
        elif lowered == "request" and httpish:
            method = call.args[0].value.upper() if call.args and is_str(call.args[0]) else None
            url_index = 1
        elif lowered == "urlopen":
            method = None
        else:
            m = _VERB_IN_NAME.search(lowered)
            if not m:
                return None
            method = (m.group(1) or "get").upper()
        url = next((k.value for k in call.keywords if k.arg in _URL_KEYWORDS), None)
        if url is None and len(call.args) > url_index:
            url = call.args[url_index]
        if url is None:
            return None
        payload = next((k.value for k in call.keywords if k.arg in _PAYLOAD_KEYWORDS), None)
        if (
            payload is None
            and method in ("POST", "PUT", "PATCH")
            and len(call.args) > url_index + 1
        ):
            payload = call.args[url_index + 1]
        return url, method, payload

    @staticmethod
    def _bare_route(call: ast.Call) -> bool:
        return bool(call.args) and is_str(call.args[0]) and call.args[0].value.startswith("/")

    def _route_definitions(self, scope: _Scope) -> None:
        for call in scope.calls:
            func = call.func
            if isinstance(func, ast.Call) and isinstance(func.func, ast.Attribute):
                self.url_done.update(id(arg) for arg in func.args[:1])  # app.get("/x")(fn)
            if isinstance(func, ast.Attribute):
                if func.attr in _ROUTE_DEFINERS:
                    self.url_done.update(id(arg) for arg in call.args[:1])
                elif func.attr in _HTTP_VERBS and self._bare_route(call):
                    receiver = (dotted(func.value) or "").rpartition(".")[2]
                    if receiver.lower() in _APP_NAMES:
                        self.url_done.add(id(call.args[0]))

    def _resolve(self, scope: _Scope, node: ast.expr, line: int, depth: int = 0):
        """The string expression a URL argument holds (through local names), or None."""
        if isinstance(node, ast.BoolOp):
            node = node.values[0]
        if isinstance(node, ast.Name) and depth < 3:
            if node.id in scope.loops:
                return node
            value = scope.latest(node.id, line)
            return None if value is None else self._resolve(scope, value, line, depth + 1)
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            return node
        return None

    def _payload_keys(self, scope: _Scope, payload: ast.expr | None, line: int) -> list[str]:
        if isinstance(payload, ast.BoolOp):
            payload = payload.values[0]
        name = payload.id if isinstance(payload, ast.Name) else None
        if name:
            payload = scope.latest(name, line)
        keys: list[str] = []
        if isinstance(payload, ast.Dict):
            keys = [k.value for k in payload.keys if is_str(k)]
        elif isinstance(payload, ast.Call) and isinstance(payload.func, ast.Name):
            if payload.func.id == "dict":
                keys = [k.arg for k in payload.keywords if k.arg]
        if name:
            since = max((n for n, _ in scope.assigns.get(name, ()) if n <= line), default=0)
            for lineno, key in scope.sub_keys.get(name, ()):
                if since <= lineno <= line and key not in keys:
                    keys.append(key)
        return keys

    def _url_node(self, node: ast.expr, uses: list[tuple[str | None, list[str]]] | None) -> None:
        template = string_template(node)
        if template is None:
            return
        text, fields = template
        if "/" not in text:
            return
        if not uses:
            if id(node) in self.pathish:
                return
            if text.startswith("{}"):
                if not fields or not _looks_like_base(fields[0]):
                    return
            elif not (text.startswith("/") or "://" in text):
                return
        route = route_of(text)
        if route is None:
            return
        offset = self._route_offset(node, route)
        for method, keys in uses or [(None, [])]:
            self.sink.url(offset, route, method, keys)

    def _route_offset(self, node: ast.expr, route: str) -> int:
        head = route.split("{}")[0]
        return self._find(node, head) if head else self._start(node)

    def _loop_routes(self, scope: _Scope, target: ast.expr, method: str | None,
                     keys: list[str]) -> None:  # fmt: skip
        """`for endpoint in ("/a", "/b"): get(f"{base}{endpoint}")`."""
        template = ("{}", [target]) if isinstance(target, ast.Name) else string_template(target)
        if template is None or not template[1] or not template[0].endswith("{}"):
            return
        last = template[1][-1]
        if not isinstance(last, ast.Name) or last.id not in scope.loops:
            return
        before = template[0][:-2]
        if before.replace("{}", "") not in ("", "/") and not SCHEME_HOST.fullmatch(before):
            return
        routes = [(c, route_of("/" + c.value.lstrip("/"))) for c in scope.loops[last.id]]
        tried = [r for _, r in routes if r] if scope.fallbacks.get(last.id) else []
        for constant, route in routes:
            if route:
                self.url_done.add(id(constant))
                self.sink.url(self._route_offset(constant, route), route, method, keys, tried)

    def _helper(self, scope: _Scope, target: ast.expr, method: str | None,
                payload: ast.expr | None) -> None:  # fmt: skip
        func = scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        template = string_template(target)
        if template is None or not template[1] or not template[0].endswith("/{}"):
            return
        last = template[1][-1]
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        if not isinstance(last, ast.Name) or last.id not in params:
            return
        if isinstance(payload, ast.BoolOp):
            payload = payload.values[0]
        payload_index = None
        if isinstance(payload, ast.Name) and payload.id in params:
            payload_index = params.index(payload.id)
        method_like = bool(params) and params[0] in ("self", "cls")
        self.helpers[func.name] = Helper(params.index(last.id), method, payload_index, method_like)

    def _pending_calls(self, scope: _Scope) -> None:
        for call in scope.calls:
            name, _ = _callee(call)
            if name is None or not call.args:
                continue
            args: list[tuple[str, int, int] | None] = []
            for arg in call.args[:3]:
                if is_str(arg) and _HELPER_ARG.fullmatch(arg.value):
                    line, column = self.sink.text.pos(self._find(arg, arg.value))
                    args.append((arg.value, line, column))
                else:
                    args.append(None)
            if not any(args):
                continue
            payloads = [
                self._payload_keys(scope, arg, call.lineno)
                if isinstance(arg, (ast.Dict, ast.Name, ast.Call, ast.BoolOp))
                else None
                for arg in call.args[:4]
            ]
            attr_call = isinstance(call.func, ast.Attribute)
            self.pending.append(PendingCall(self.sink.rel, name, attr_call, args, payloads))


def resolve_helpers(pending: list[PendingCall], helpers: dict[str, Helper],
                     out: SurfaceUsages) -> None:  # fmt: skip
    for call in pending:
        helper = helpers.get(call.name)
        if helper is None:
            continue
        shift = 1 if helper.method_like and call.attr_call else 0
        index = helper.route_index - shift
        if not 0 <= index < len(call.args):
            continue
        arg = call.args[index]
        if arg is None:
            continue
        value, line, column = arg
        route = route_of("/" + value.lstrip("/"))
        if route is None:
            continue
        keys: list[str] = []
        if helper.payload_index is not None:
            p = helper.payload_index - shift
            if 0 <= p < len(call.payloads) and call.payloads[p]:
                keys = list(call.payloads[p])
        out.urls.append(UrlUsage(call.rel, line, column, route, helper.method, keys))
