"""A static call graph of a snapshot, built lazily from per-module call data.

Per module (read with `ast`, cached in the snapshot store by the file's content digest,
like the API model) it records the imports, the classes (bases; attribute types from
`self.x = Cls(...)`, `self.x: Cls` or a typed parameter stored as `self.x = param`), and
for every function the calls it makes, unresolved: `self.meth()`, `super().meth()`,
`self.x.meth()`, `name(...)` / `name.attr(...)` and `var.meth()` where
`var = Cls(...)`. Resolution to canonical nodes (`sglang.mod.Cls.meth`) happens here,
through the imports and the sglang base classes, and only for the functions a walk
reaches: a consumer audit expands a few hundred nodes, never the whole tree.

What stays unknown (a receiver of unknown type, a call through a container or
`getattr`) is left out: the graph under-approximates. An edge found in the old tree
but not in the new one is lost only when the new caller has no unresolved call of that
name left (`calls_unknown`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from driftaudit.astwalk import block_children, children, walk_statements
from driftaudit.pysource import PARSE_ERRORS, dotted, parse_region, read_bytes
from driftaudit.snapshot.branch_conditions import branch_facts, exit_facts
from driftaudit.store import Entry, Json, key
from driftaudit.store.codecs import strings
from driftaudit.store.store import collector_paused

CALLGRAPH_VERSION = "8"
_MAX_ALIAS_HOPS = 12
_OPTIONAL = re.compile(r"^(?:Optional\[(.+)\]|(.+?)\s*\|\s*None)$")


# ---- per-module call data -----------------------------------------------------------


def _annotation_name(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip()
        match = _OPTIONAL.match(text)
        text = (match.group(1) or match.group(2)) if match else text
        return text if re.fullmatch(r"[\w.]+", text) else None
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("Optional", "typing.Optional"):
        return _annotation_name(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if isinstance(node.right, ast.Constant) and node.right.value is None:
            return _annotation_name(node.left)
    return dotted(node)


def _constructed(value: ast.expr | None) -> str | None:
    """`Cls(...)` or `mod.Cls(...)`: the dotted class name (capitalised last segment)."""
    if isinstance(value, ast.Call):
        name = dotted(value.func)
        if name and name.rpartition(".")[2][:1].isupper():
            return name
    return None


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NESTED_CLASSES = frozenset(_NESTED)
_STATEMENTS = frozenset(ast.stmt.__subclasses__())
# the statement lists of a node whose `if <cond>: return` guards the rest (exit_facts)
_BLOCKS = {
    cls: tuple(f for f in ("body", "orelse", "finalbody") if f in cls._fields)
    for cls in (*_STATEMENTS, ast.ExceptHandler, ast.match_case)
}
_LEAVES = frozenset((ast.Name, ast.Constant))


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str | None, dict, set]:
    """The name of the function's own object (its first parameter), its typed parameters
    (name -> annotated class) and every parameter name."""
    args = fn.args
    every = args.posonlyargs + args.args + args.kwonlyargs
    params = {a.arg: name for a in every if (name := _annotation_name(a.annotation))}
    self_name = (args.posonlyargs + args.args)[0].arg if args.args else None
    return self_name, params, {a.arg for a in every}


def function_facts(fn: ast.FunctionDef | ast.AsyncFunctionDef, attrs: dict[str, str]) -> dict:
    """What one function body (nested functions and classes excluded) says without its
    expressions: the attributes it sets on its object, its statements, its branch guards;
    the class's attribute types are filled from its stores (`attrs`). A walk of the
    statements alone: the calls, which need every expression, are read only for the
    functions a walk reaches (`function_calls`)."""
    self_name, params, names = _signature(fn)
    sets: set[str] = set()
    statements = 0
    guards: list[list] = exit_facts(fn.body, self_name, names)  # see branch_conditions.py
    # the order of `function_calls`'s walk, less its expressions (they hold no statement):
    # the first store of an attribute types it
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls in _NESTED_CLASSES:
            continue  # its own node
        for name in _BLOCKS.get(cls, ()):
            block = getattr(node, name)
            if len(block) > 1:
                guards += exit_facts(block, self_name, names)
        if cls in _STATEMENTS:
            statements += 1
            if cls is ast.If:
                guards += branch_facts(node, self_name, names)
            elif cls is ast.Assign:
                for target in node.targets:
                    _store(target, node.value, None, self_name, params, sets, attrs)
            elif cls is ast.AnnAssign:
                _store(node.target, node.value, node.annotation, self_name, params, sets, attrs)
        stack.extend(block_children(node))
    return {
        "line": fn.lineno,
        "end": fn.end_lineno or fn.lineno,
        "indent": fn.col_offset,
        "sets": sorted(sets),
        "statements": statements,  # nested functions and classes not counted
        "guards": guards,
    }


def _store(target, value, annotation, self_name, params, sets: set, attrs: dict) -> None:
    if isinstance(target, ast.Attribute) and _is_name(target.value, self_name):
        sets.add(target.attr)
        kind = _annotation_name(annotation) or _constructed(value)
        if kind is None and isinstance(value, ast.Name):
            kind = params.get(value.id)
        if kind is not None:
            attrs.setdefault(target.attr, kind)


def function_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list]:
    """The calls of one function body (nested functions and classes excluded), unresolved:
    `self.meth()`, `super().meth()`, `self.x.meth()`, `name(...)`/`name.attr(...)` and
    `var.meth()` typed by `var = Cls(...)` or a typed parameter. One iterative walk (an
    ast.NodeVisitor is twice as slow on sglang's large modules)."""
    self_name, params, _ = _signature(fn)
    calls: list[list] = []
    local_types: dict[str, str] = {}
    on_locals: list[tuple[str, str, int]] = []  # var.meth(...): typed after the walk
    stack: list[ast.AST] = list(fn.body)
    # dispatch on the exact class (the hot loop of a cold run): the same tests as
    # isinstance, as ast's node classes are not subclassed
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls in _LEAVES:
            continue  # a name or a constant: no call, no statement below
        if cls in _NESTED_CLASSES:
            continue  # its own node
        if cls is ast.Call:
            _call(node, self_name, calls, on_locals)
        elif cls is ast.Assign:
            for target in node.targets:
                if isinstance(target, ast.Name) and (kind := _constructed(node.value)):
                    local_types[target.id] = kind
        elif cls is ast.AnnAssign:
            if isinstance(node.target, ast.Name) and (kind := _constructed(node.value)):
                local_types[node.target.id] = kind
        stack.extend(children(node))
    for var, meth, line in on_locals:
        kind = local_types.get(var) or params.get(var)
        calls.append(["name", f"{kind}.{meth}" if kind else f"{var}.{meth}", line])
    return calls


def _call(node: ast.Call, self_name: str | None, calls: list, on_locals: list) -> None:
    func = node.func
    if isinstance(func, ast.Attribute):
        receiver = func.value
        if _is_name(receiver, self_name) or (
            isinstance(receiver, ast.Call) and dotted(receiver.func) == "type"
        ):
            calls.append(["self", func.attr, node.lineno])
        elif isinstance(receiver, ast.Call) and dotted(receiver.func) == "super":
            calls.append(["super", func.attr, node.lineno])
        elif isinstance(receiver, ast.Attribute) and _is_name(receiver.value, self_name):
            calls.append(["attr", receiver.attr, func.attr, node.lineno])
        elif isinstance(receiver, ast.Name):
            on_locals.append((receiver.id, func.attr, node.lineno))
        elif (name := dotted(func)) is not None:
            calls.append(["name", name, node.lineno])
    elif isinstance(func, ast.Name):
        calls.append(["name", func.id, node.lineno])


class SourceText:
    """A module's text and where each of its lines starts (lines as `ast` numbers them:
    `Snapshot.source` reads with universal newlines, so "\n" alone ends one)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = list(accumulate((len(line) + 1 for line in text.split("\n")), initial=0))

    def _end(self, last: int) -> int:
        return self.starts[min(last, len(self.starts) - 1)]

    def lines(self, first: int, last: int) -> str:
        """Lines `first` to `last` (1-based, inclusive), each ended by a newline."""
        region = self.text[self.starts[first - 1] : self._end(last)]
        return region if region.endswith("\n") else region + "\n"

    def spells(self, word: re.Pattern[str], first: int, last: int) -> bool:
        """Does `word` match in lines `first` to `last`?"""
        return word.search(self.text, self.starts[first - 1], self._end(last)) is not None


def function_calls_at(source: SourceText, info: dict) -> list[list]:
    """`function_calls` of the function `info` (its facts) describes, in a module of this
    source."""
    fn = _function_at(source, info)
    return function_calls(fn) if fn is not None else []


def _function_at(source: SourceText, info: dict) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The node of the function `info` describes: only its own lines are parsed
    (`pysource.parse_region`), or the whole module when they do not parse alone."""
    first, last, indent = info["line"], info["end"], info["indent"]
    region = parse_region(source.lines(first, last), first, indent > 0)
    fn = region.body[0] if region is not None and region.body else None
    if not _is_def_at(fn, first, indent):
        try:
            module = ast.parse(source.text)
        except PARSE_ERRORS:
            return None
        fn = next((n for n in walk_statements(module) if _is_def_at(n, first, indent)), None)
    return fn  # type: ignore[return-value]


@dataclass(frozen=True)
class CallShape:
    """What one call passes: its positional count (None behind a `*args`), its keyword
    names, whether a `**mapping` passes more, and whether the callee is spelled as an
    attribute of a class's name (`Cls.meth(obj, ...)`: the instance passed positionally)."""

    line: int
    positional: int | None
    keywords: tuple[str, ...]
    more_keywords: bool
    through: str  # the dotted text before the callee's name ("" for a bare name)


def call_shapes(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, lines: set[int]):
    """The calls of `name` on `lines` of one function body (nested functions excluded)."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if node.__class__ in _NESTED_CLASSES:
            continue
        if isinstance(node, ast.Call) and node.lineno in lines:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else dotted(func)
            if called == name:
                starred = any(isinstance(a, ast.Starred) for a in node.args)
                through = (dotted(func.value) or "?") if isinstance(func, ast.Attribute) else ""
                yield CallShape(
                    node.lineno,
                    None if starred else len(node.args),
                    tuple(k.arg for k in node.keywords if k.arg is not None),
                    any(k.arg is None for k in node.keywords),
                    through,
                )
        stack.extend(children(node))


def _is_def_at(node, line: int, column: int) -> bool:
    return (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.lineno == line
        and node.col_offset == column
    )


def _last(call: list) -> str:
    """The called name of a call record (its last dotted segment)."""
    return call[-2].rpartition(".")[2]


def _is_name(node: ast.expr, name: str | None) -> bool:
    return name is not None and isinstance(node, ast.Name) and node.id in (name, "cls")


def _import_target(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def _module_data(data):
    if not _is_module_data(data):
        raise TypeError("not a module's call data")
    return data


CALLS_CODEC = Json(_module_data)


def extract_calls(module: str, code: str, is_package: bool = False) -> dict:
    """The call data of one module (JSON-ready): its imports, definitions and classes,
    and each function's facts (`function_facts`: its `calls` are added when a walk first
    needs them, `CallGraph.calls`)."""
    try:
        tree = ast.parse(code)
    except PARSE_ERRORS:
        tree = None
    return calls_of_tree(module, tree, is_package)


def calls_of_tree(module: str, tree: ast.Module | None, is_package: bool = False) -> dict:
    """`extract_calls` of a module already parsed (None: it does not parse)."""
    if tree is None:
        return {"imports": {}, "defs": [], "classes": {}, "functions": {}}
    imports: dict[str, str] = {}
    defs: list[str] = []
    classes: dict[str, dict] = {}
    functions: dict[str, dict] = {}

    def scan_function(node, qualname: str, attrs: dict[str, str]) -> None:
        functions[qualname] = function_facts(node, attrs)
        visit_body(node.body, qualname + ".", {})

    def visit_body(body: list[ast.stmt], prefix: str, attrs: dict[str, str]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scan_function(node, prefix + node.name, attrs)
                returns = _annotation_name(node.returns)
                if returns and any(dotted(d) == "property" for d in node.decorator_list):
                    attrs.setdefault(node.name, returns)  # a typed property reads like one
            elif isinstance(node, ast.ClassDef):
                info = {"bases": [b for b in map(dotted, node.bases) if b], "attrs": {}}
                classes[prefix + node.name] = info
                visit_body(node.body, prefix + node.name + ".", info["attrs"])
            elif isinstance(node, (ast.If, ast.Try, ast.With)) and not prefix:
                for block in _blocks(node):
                    visit_body(block, prefix, attrs)

    for node in _imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    imports.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom):
            source = _import_target(module, is_package, node)
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{source}.{alias.name}"
    for node in tree.body:
        for block in [[node]] + (_blocks(node) if isinstance(node, (ast.If, ast.Try)) else []):
            for item in block:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defs.append(item.name)
    visit_body(tree.body, "", {})
    return {"imports": imports, "defs": defs, "classes": classes, "functions": functions}


def _imports(tree: ast.Module):
    """Import statements anywhere (lazy ones in functions included), without visiting
    expressions: only statement bodies are walked."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, name, ()))


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(node, "body", []), getattr(node, "orelse", [])]
    blocks += [h.body for h in getattr(node, "handlers", [])]
    blocks.append(getattr(node, "finalbody", []))
    return [b for b in blocks if b]


# ---- the graph --------------------------------------------------------------------


@dataclass
class Reached:
    depth: int
    parent: str | None  # the caller it was first reached from (None: the entry)


@dataclass
class CallGraph:
    """The call graph of one snapshot, expanded on demand from the entries asked about."""

    snapshot: object  # driftaudit.snapshot.Snapshot
    # caller -> callee -> {"line": first call line, "lines": every call line}, in the order
    # the edges were found. A dict, not a networkx.DiGraph: the graph is only walked
    # forward from entries, and importing networkx cost 0.23-0.27 s a cold run.
    _edges: dict[str, dict[str, dict]] = field(default_factory=dict)
    _data: dict[str, dict] = field(default_factory=dict)
    _expanded: set[str] = field(default_factory=set)
    _resolved: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _unsaved: dict[str, dict] = field(default_factory=dict)  # key -> data built or grown
    _keys: dict[str, str] = field(default_factory=dict)  # module -> its data's store key
    _sources: dict[str, SourceText] = field(default_factory=dict)  # read so far

    def save(self) -> None:
        """Write the module call data built or grown in this run to the store (one
        transaction)."""
        self.snapshot.store.put_many(
            [(Entry(k, dict, CALLS_CODEC), d) for k, d in self._unsaved.items()]
        )
        self._unsaved = {}

    # ---- module data (cached by content) ------------------------------------------------

    def module_data(self, module: str) -> dict | None:
        if module in self._data:
            return self._data[module]
        snapshot = self.snapshot
        digest = snapshot.file_digest(module)
        if digest is None:
            self._data[module] = None
            return None
        from driftaudit.snapshot.entries import calls_key

        key = calls_key(module, digest)
        is_package = snapshot.files[module].endswith("__init__.py")

        def compute() -> dict:
            return extract_calls(module, self._source(module).text, is_package)

        # the store remembers it for the run: a file both trees share is read once, and
        # both graphs grow the same data (written at `save`)
        entry = Entry(key, compute, CALLS_CODEC)
        data = snapshot.store.found_many([entry]).get(key)
        if data is None:
            with collector_paused():
                data = compute()
            snapshot.store.keep(entry, data)
            self._unsaved[key] = data
        self._data[module] = data
        self._keys[module] = key
        return data

    def _source(self, module: str) -> SourceText:
        if module not in self._sources:
            self._sources[module] = SourceText(self.snapshot.source(module) or "")
        return self._sources[module]

    def calls(self, node: str) -> list[list]:
        """The call records of a function node ([] when it is not a function): read from
        its body when first asked (a region of its module parsed), then kept with the
        module's data."""
        where = self.split(node)
        info = self.function(node)
        if where is None or info is None:
            return []
        calls = info.get("calls")
        if calls is None:
            with collector_paused():
                calls = info["calls"] = function_calls_at(self._source(where[0]), info)
            self._unsaved[self._keys[where[0]]] = self._data[where[0]]
        return calls

    # ---- names -> nodes ---------------------------------------------------------------

    def split(self, node: str) -> tuple[str, str] | None:
        """`sglang.mod.Cls.meth` -> (`sglang.mod`, `Cls.meth`), the longest module prefix."""
        parts = node.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.snapshot.files:
                return module, ".".join(parts[cut:])
        return None

    def function(self, node: str) -> dict | None:
        """The call data of a function node, or None when it is not a function of the tree."""
        where = self.split(node)
        if where is None:
            return None
        data = self.module_data(where[0])
        return data["functions"].get(where[1]) if data else None

    def is_class(self, node: str) -> bool:
        where = self.split(node)
        data = self.module_data(where[0]) if where else None
        return bool(data) and where[1] in data["classes"]

    def resolve(self, dotted: str, hops: int = 0) -> str | None:
        """An absolute dotted path -> the canonical function or class it names."""
        if not dotted.startswith("sglang.") or hops > _MAX_ALIAS_HOPS:
            return None
        where = self.split(dotted)
        if where is None:
            return None
        module, rest = where
        data = self.module_data(module)
        if data is None:
            return None
        head, _, tail = rest.partition(".")
        if head in data["defs"] or head in data["classes"]:
            if not tail:
                return dotted
            if head in data["classes"]:
                return self.method(f"{module}.{head}", tail)
            return None
        if head in data["imports"]:
            target = data["imports"][head] + (f".{tail}" if tail else "")
            return self.resolve(target, hops + 1)
        return None

    def resolve_in(self, module: str, name: str) -> str | None:
        """A name as written in `module` (`f`, `mod.f`, `Cls.meth`) -> canonical node."""
        key = (module, name)
        if key in self._resolved:
            return self._resolved[key]
        self._resolved[key] = None
        data = self.module_data(module)
        found = None
        if data is not None:
            head, _, tail = name.partition(".")
            if head in data["imports"]:
                found = self.resolve(data["imports"][head] + (f".{tail}" if tail else ""))
            elif head in data["defs"] or head in data["classes"]:
                found = self.resolve(f"{module}.{name}")
        self._resolved[key] = found
        return found

    def _class(self, cls: str) -> tuple[str, str, dict] | None:
        """(module, qualified name, call data) of class node `cls`, if it is one."""
        where = self.split(cls)
        data = self.module_data(where[0]) if where else None
        if not data or where[1] not in data["classes"]:
            return None
        return where[0], where[1], data

    def _bases(self, module: str, info: dict) -> Iterator[str]:
        """The class nodes of a class's sglang bases (`info`: its call data), in order,
        each resolved when the caller gets to it."""
        for base in info["bases"]:
            if (node := self.resolve_in(module, base)) is not None:
                yield node

    def method(self, cls: str, name: str, seen: frozenset = frozenset()) -> str | None:
        """`name` looked up on class `cls` and its sglang bases (first hit, MRO-like)."""
        if cls in seen or len(seen) > _MAX_ALIAS_HOPS or (found := self._class(cls)) is None:
            return None
        module, qualname, data = found
        if f"{qualname}.{name}" in data["functions"]:
            return f"{cls}.{name}"
        for base in self._bases(module, data["classes"][qualname]):
            if (hit := self.method(base, name, seen | {cls})) is not None:
                return hit
        return None

    def inherits(self, cls: str, base: str, seen: frozenset = frozenset()) -> bool:
        """Is `cls` the class `base`, or a subclass of it through sglang bases?"""
        if cls == base:
            return True
        if cls in seen or len(seen) > _MAX_ALIAS_HOPS or (found := self._class(cls)) is None:
            return False
        module, qualname, data = found
        bases = self._bases(module, data["classes"][qualname])
        return any(self.inherits(node, base, seen | {cls}) for node in bases)

    def attribute_type(self, cls: str, attr: str, seen: frozenset = frozenset()) -> str | None:
        """The class of `self.<attr>` on `cls` (or its sglang bases), when typed."""
        if cls in seen or len(seen) > _MAX_ALIAS_HOPS or (found := self._class(cls)) is None:
            return None
        module, qualname, data = found
        info = data["classes"][qualname]
        if attr in info["attrs"]:
            typed = self.resolve_in(module, info["attrs"][attr])
            return typed if typed and self.is_class(typed) else None
        for base in self._bases(module, info):
            if (hit := self.attribute_type(base, attr, seen | {cls})) is not None:
                return hit
        return None

    def callable_node(self, node: str | None) -> str | None:
        """A class stands for its constructor (`Cls.__init__`, inherited or not)."""
        if node is not None and self.is_class(node):
            return self.method(node, "__init__")
        return node

    def owner_class(self, node: str) -> str | None:
        module, qualname = self.split(node) or ("", "")
        data = self.module_data(module) if module else None
        owner = qualname.rpartition(".")[0]
        return f"{module}.{owner}" if data and owner in data["classes"] else None

    def callees(self, node: str) -> list[str]:
        """The functions `node` calls (resolved; expands the graph)."""
        if node not in self._expanded:
            self._expanded.add(node)
            for call in self.calls(node):
                self._resolve_call(node, call)
        return list(self._edges.get(node, ()))

    def _resolve_call(self, node: str, call: list) -> str | None:
        """The function a call record of `node` runs, added to the graph as an edge."""
        module = self.split(node)[0]
        owner = self.owner_class(node) if call[0] != "name" else None
        target = None
        if call[0] == "self" and owner:
            target = self.method(owner, call[1])
        elif call[0] == "super" and owner:
            target = self._super_method(owner, call[1])
        elif call[0] == "attr" and owner:
            cls = self.attribute_type(owner, call[1])
            target = self.method(cls, call[2]) if cls else None
        elif call[0] == "name":
            target = self.callable_node(self.resolve_in(module, call[1]))
        if target is None or target == node or self.function(target) is None:
            return None
        edges = self._edges.setdefault(node, {})
        if target not in edges:
            edges[target] = {"line": call[-1], "lines": [call[-1]]}
        elif call[-1] not in edges[target]["lines"]:
            edges[target]["lines"].append(call[-1])
        return target

    def _super_method(self, cls: str, name: str) -> str | None:
        if (found := self._class(cls)) is None:
            return None
        module, qualname, data = found
        for base in self._bases(module, data["classes"][qualname]):
            if (hit := self.method(base, name)) is not None:
                return hit
        return None

    def location(self, node: str, line: int | None = None) -> str | None:
        """`file:line` of a function node (or of a line in its file)."""
        where = self.split(node)
        info = self.function(node)
        if where is None or info is None:
            return None
        return f"{self.snapshot.files[where[0]]}:{line or info['line']}"

    def _edge(self, caller: str, callee: str) -> dict | None:
        return self._edges.get(caller, {}).get(callee)

    def call_line(self, caller: str, callee: str) -> int | None:
        edge = self._edge(caller, callee)
        return edge["line"] if edge is not None else None

    def guards(self, caller: str, callee: str) -> list[list]:
        """The branch conditions every call of `callee` in `caller` sits under (those of
        its first call, when all its calls share them; else none)."""
        info, edge = self.function(caller), self._edge(caller, callee)
        if info is None or edge is None:
            return []
        lines = edge["lines"]
        per_line = [[g for g in info.get("guards", ()) if g[0] <= line <= g[1]] for line in lines]
        return [g for g in per_line[0] if all(g in others for others in per_line[1:])]

    def reach(self, entry: str, depth: int) -> dict[str, Reached]:
        """Every function `entry` reaches within `depth` calls (breadth first)."""
        reached = {entry: Reached(0, None)}
        frontier = [entry]
        for level in range(1, depth + 1):
            following = []
            for node in frontier:
                for callee in self.callees(node):
                    if callee not in reached:
                        reached[callee] = Reached(level, node)
                        following.append(callee)
            frontier = following
        return reached

    def shapes(self, caller: str, callee: str) -> list[CallShape]:
        """What each call of `callee` in `caller` passes (an edge the graph found)."""
        edge, where, info = self._edge(caller, callee), self.split(caller), self.function(caller)
        if edge is None or where is None or info is None:
            return []
        fn = _function_at(self._source(where[0]), info)
        if fn is None:
            return []
        shapes = call_shapes(fn, callee.rpartition(".")[2], set(edge["lines"]))
        return sorted(shapes, key=lambda shape: shape.line)

    def instance_calls(
        self, node: str, modules: list[str], within: str
    ) -> list[tuple[str, CallShape]]:
        """The calls `self.<attr>(...)` in `modules` whose attribute holds an instance of
        `within` (or a subclass) that `node` (its `__call__`, or its `forward`: torch's
        `Module.__call__` runs it, and no sglang class defines that one) answers; each
        with its shape."""
        cls, name = self.owner_class(node), node.rpartition(".")[2]
        if cls is None or name not in ("__call__", "forward"):
            return []
        found = []
        for module in modules:
            data = self.module_data(module)
            for qualname in data["functions"] if data else ():
                caller = f"{module}.{qualname}"
                owner = self.owner_class(caller)
                if owner is None:
                    continue
                lines: dict[str, set[int]] = {}
                for call in self.calls(caller):
                    if call[0] != "self" or self.method(owner, call[1]) is not None:
                        continue  # not an attribute called: a method of its own
                    held = self.attribute_type(owner, call[1])
                    if (
                        held is not None
                        and self.inherits(held, within)
                        and self._runs(held, name) == node
                    ):
                        lines.setdefault(call[1], set()).add(call[-1])
                if not lines:
                    continue
                fn = _function_at(self._source(module), data["functions"][qualname])
                for attr, at in lines.items() if fn is not None else ():
                    found += [(caller, shape) for shape in call_shapes(fn, attr, at)]
        return found

    def _runs(self, cls: str, name: str) -> str | None:
        """What calling an instance of `cls` runs, when it is `name` (`__call__`, or
        `forward` under torch's `Module.__call__`)."""
        own = self.method(cls, "__call__")
        if name == "__call__" or own is not None:
            return own
        return self.method(cls, "forward")

    def calls_unknown(self, node: str, name: str) -> bool:
        """Does `node` call a function named `name` that the graph cannot resolve (a
        receiver of unknown type: `self.runner.execute()` with `self.runner = x.runner`)?"""
        return any(
            _last(call) == name and self._resolve_call(node, call) is None
            for call in self.calls(node)
        )

    def callers(self, node: str, modules: list[str]) -> list[str]:
        """The functions of `modules` that call `node` (only their calls of that name are
        resolved: finding callers does not expand the graph around them)."""
        found = []
        name = node.rpartition(".")[2]
        word = re.compile(rf"\b{re.escape(name)}\b")
        for module in modules:
            data = self.module_data(module)
            if not data:
                continue
            source = self._source(module)
            for qualname, info in data["functions"].items():
                caller = f"{module}.{qualname}"
                # a call of `name` spells it: only the functions whose lines do are read
                if caller == node or not source.spells(word, info["line"], info["end"]):
                    continue
                for call in self.calls(caller):
                    if _last(call) == name and self._resolve_call(caller, call) == node:
                        found.append(caller)
                        break
        return found

    def modules_calling(self, names: set[str]) -> dict[str, list[str]]:
        """name -> the modules whose text has a call `name(` (a fast scan of the tree,
        kept per tree digest and name); narrows down where `callers` has to look."""
        snapshot = self.snapshot
        wanted = {n: Entry(self._calling_key(n), list, Json(strings)) for n in names}
        stored = snapshot.store.found_many(list(wanted.values()))
        found = {n: stored[e.key] for n, e in wanted.items() if e.key in stored}
        missing = set(names) - set(found)
        if missing:
            # a substring test first (fast, in C), the regex only where the name occurs
            patterns = {
                n: (n.encode(), re.compile(rb"\b" + n.encode() + rb"\s*\(")) for n in missing
            }
            hits: dict[str, list[str]] = {name: [] for name in missing}
            for module, relpath in snapshot.files.items():
                try:
                    text = read_bytes(snapshot.tree.root / relpath)
                except OSError:
                    continue  # an unreadable module (warned about by the snapshot)
                for name, (raw, pattern) in patterns.items():
                    if raw in text and pattern.search(text):
                        hits[name].append(module)
            snapshot.store.put_many([(wanted[n], m) for n, m in hits.items()])
            found.update(hits)
        return found

    def _calling_key(self, name: str) -> str:
        return key("calling", CALLGRAPH_VERSION, self.snapshot.digest, name)


def _is_module_data(data) -> bool:
    """Has a cached entry the shape `extract_calls` gives?"""
    return (
        isinstance(data, dict)
        and isinstance(data.get("defs"), list)
        and all(isinstance(data.get(key), dict) for key in ("functions", "classes", "imports"))
    )
