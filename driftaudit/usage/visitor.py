"""The visitor that records what one consumer file touches of sglang.

It walks Python's `ast` (positions included, ~6x faster than libcst with its
position metadata: 0.5 s against 9 s on SpecForge); libcst is kept for the fixer,
which needs concrete syntax.

Names live in a small scope stack (module, then each function). A binding is one of:
an sglang path (`str`: the name *is* that module, class or function), a `TypeRef`
(the name holds an *instance*, see types.py), a local function (`LocalFunction`), or
EXTERNAL / None (something else, or shadowed). Function bodies are visited after the
code around them, as Python runs them, so module-level imports and monkeypatches
(`Cls.meth = fn`) are known inside every function.
"""

from __future__ import annotations

import ast

from driftaudit.astwalk import NodeVisitor
from driftaudit.pysource import Columns, Located, dotted
from driftaudit.usage.branches import BranchesMixin
from driftaudit.usage.classes import ClassesMixin
from driftaudit.usage.consumer_guards import LASTING, caught, imported_in
from driftaudit.usage.exports import (
    SGLANG,
    ConsumerExports,
    absolute_module,
)
from driftaudit.usage.fallbacks import Fallbacks, never_none_arguments
from driftaudit.usage.inference import SUPER, InferenceMixin
from driftaudit.usage.monkeypatch import PATCHERS, MonkeypatchMixin
from driftaudit.usage.scopes import (
    CONSUMER,
    ClassContext,
    ConsumerClass,
    ConsumerInstance,
    Deferred,
    LocalFunction,
    OwnClass,
    PartialOf,
    Recorder,
)
from driftaudit.usage.spelled_calls import (
    SpelledCallsMixin,
    call_root,
    literal_getattr,
    literal_string,
    string_import,
)
from driftaudit.usage.star_imports import bound_names, from_star
from driftaudit.usage.usages import (
    AttributeNameUsage,
    CallShape,
    CallUsage,
    DataclassCallUsage,
    EnumLookupUsage,
    ImportUsage,
    IndexUsage,
    KeywordDictUsage,
    MemberUsage,
    MetaInfoUsage,
    ReferenceUsage,
    UnpackUsage,
    Usage,
)
from driftaudit.usage.valuetypes import arguments, literal_arguments, value_type

EXTERNAL = "external:"  # a name bound to something outside sglang
# the `dataclasses` functions that need a dataclass (`is_dataclass` answers False instead)
DATACLASS_FUNCTIONS = frozenset(
    f"dataclasses.{name}" for name in ("fields", "replace", "asdict", "astuple", "is_dataclass")
)
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
_STRING_IMPORTERS = {"import_module", "__import__"}
_VALUE = "\0value:"  # scope key: the expression a local name was last assigned
_WROTE = "\0wrote:"  # scope key: `obj.x` the consumer assigned itself
_FROM = "\0from:"  # scope key: (consumer module, name) a name was imported from


class UsageVisitor(
    BranchesMixin,
    ClassesMixin,
    InferenceMixin,
    MonkeypatchMixin,
    SpelledCallsMixin,
    NodeVisitor,
):
    def __init__(
        self,
        relpath: str,
        module: str,
        is_package: bool,
        exports: ConsumerExports,
        columns: Columns | None = None,
    ):
        self.relpath = relpath
        self.columns = columns or Columns(None)  # ast byte offsets -> character columns
        self.module = module
        self.is_package = is_package
        self.exports = exports
        self.scopes: list[dict] = [{}]
        self.usages = Recorder()
        self.defined_names: set[str] = set()
        self._guarded: set[int] = set()  # import statements inside try/except ImportError
        self._in_handler = 0  # inside `except ...:` (fallback assignments keep bindings)
        self._class: ClassContext | None = None
        # the file's rows of the consumer's attribute table: class key -> attr -> TypeRef
        self.fields: dict[str, dict[str, tuple]] = {}
        self._queue: list[Deferred] = []
        # module-level functions whose first parameter is `self`: method replacements,
        # read last so that the code installing or calling them has typed their `self`
        self._late: list[Deferred] = []
        self._visited: dict[int, Deferred] = {}  # function bodies already visited
        self._patched: dict[int, tuple] = {}  # function node id -> TypeRef of its `self`
        self._stored: dict[int, ast.expr] = {}  # attribute target node id -> value assigned
        self._fallbacks: dict[int, Fallbacks] = {}  # scope node id -> its None fallbacks
        self._scope_node: ast.AST | None = None  # the body visited: a function's, the module's
        self._stars: list[str] = []  # sglang modules star-imported, in order
        self._bound: frozenset[str] = frozenset()  # every name the file binds (star_imports)
        self._tree: ast.AST | None = None
        self._partials: dict[int, tuple] = {}  # partial(...) node -> PartialOf's fields

    # ---- entry -----------------------------------------------------------------

    def run(self, tree: ast.Module) -> list[Usage]:
        self._scope_node = self._tree = tree
        self.visit(tree)
        while self._queue or self._late:
            queue = self._queue if self._queue else self._late
            self._visit_body(queue.pop(0))
        return list(self.usages)

    # ---- names -----------------------------------------------------------------

    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def value_of(self, name: str) -> ast.expr | None:
        """The expression `name` was last assigned, in the nearest scope that binds it."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope.get(_VALUE + name)
        return None

    def guard_value(self, name: str) -> ast.expr | tuple | None:
        """`value_of` for the guards: also, for a name imported from a consumer module
        (`from .compat import NEW`) or read off one (`compat.NEW`), what it stands for
        in a test there (`ConsumerExports.condition`)."""
        head, _, rest = name.partition(".")
        for scope in reversed(self.scopes):
            if head not in scope:
                continue
            if not rest:
                value = scope.get(_VALUE + head)
                if value is not None:
                    return value
                source = scope.get(_FROM + head)
                return self.exports.condition(*source) if source else None
            bound = scope[head]
            if not (isinstance(bound, str) and bound.startswith(CONSUMER)):
                return None
            module, parts = bound[len(CONSUMER) :], rest.split(".")
            while len(parts) > 1 and f"{module}.{parts[0]}" in self.exports.modules:
                module = f"{module}.{parts.pop(0)}"
            return self.exports.condition(module, parts[0]) if len(parts) == 1 else None
        return None

    def _local_value(self, name: str) -> ast.expr | None:
        """The expression `name` was last assigned in the current scope, if any."""
        return self.scopes[-1].get(_VALUE + name)

    def bind(self, name: str, target) -> None:
        self.scopes[-1][name] = target
        self.scopes[-1].pop(_VALUE + name, None)
        self.scopes[-1].pop(_FROM + name, None)

    def resolve_expr(self, node: ast.expr) -> str | None:
        """The sglang path an expression names (`dp_attention.x` -> sglang...x)."""
        name = dotted(node)
        if not name:
            return self._resolve_call_root(node)
        parts = name.split(".")
        base = self.lookup(parts[0])
        if base is None and (stars := self._star_of(parts[0])):
            return ".".join([stars[0], *parts])
        if not isinstance(base, str) or base.startswith(EXTERNAL):
            return None
        if base.startswith(CONSUMER):
            return self._through_consumer(base[len(CONSUMER) :], parts[1:])
        return ".".join([base, *parts[1:]])

    def _resolve_call_root(self, node: ast.expr) -> str | None:
        """`importlib.import_module("sglang.x").f`, `getattr(mod, "f").g`: the path."""
        found = call_root(node)
        if found is None:
            return None
        call, attrs = found
        base = string_import(call)
        if base is None and self.lookup("getattr") is None:
            attribute = literal_getattr(call)
            base = self.resolve_expr(attribute) if attribute is not None else None
        return ".".join([base, *attrs]) if base else None

    def _star_of(self, name: str) -> tuple[str, ...]:
        """The star-imported modules an unbound `name` may come from (star_imports)."""
        if not self._stars:
            return ()
        return from_star(name, self._stars, self._bound)

    def _star_root(self, node: ast.expr) -> tuple[str, ...]:
        name = dotted(node)
        root = name.split(".")[0] if name else ""
        return self._star_of(root) if root and self.lookup(root) is None else ()

    def visit_Name(self, node: ast.Name) -> None:
        """A name only a star import binds: a reference to the sglang name."""
        if not self._stars or not isinstance(node.ctx, ast.Load) or self.lookup(node.id):
            return
        stars = self._star_of(node.id)
        if stars:
            symbol = f"{stars[0]}.{node.id}"
            self.usages.append(ReferenceUsage(*self._at(node), symbol, star=stars))

    def _through_consumer(self, module: str, rest: list[str]) -> str | None:
        for index, part in enumerate(rest):
            if f"{module}.{part}" in self.exports.modules:
                module = f"{module}.{part}"
                continue
            found = self.exports.lookup(module, part)
            if not found and (stars := self.exports.star_lookup(module, part)):
                found = f"{stars[0]}.{part}"  # through its star import
            return ".".join([found, *rest[index + 1 :]]) if found else None
        return None

    def _never_none(self, call: ast.Call) -> list[str]:
        scope = self._scope_node
        if scope is None:
            return []
        if id(scope) not in self._fallbacks:
            self._fallbacks[id(scope)] = Fallbacks(scope)
        return never_none_arguments(call, self._fallbacks[id(scope)])

    def _at(self, node: Located) -> tuple[str, int, int]:
        return self.relpath, *self.columns.start(node)

    # ---- functions and classes -----------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
            self.bind(node.name, LocalFunction(node, self._annotation(node.returns)))
            if self._class is not None:
                self.defined_names.add(node.name)
                self._override(node)
        lasting = tuple(g for g in self.usages.guards if g[0] in LASTING)
        job = Deferred(node, list(self.scopes), self._class, guards=lasting)
        first = [*node.args.posonlyargs, *node.args.args][:1]
        if self._class is None and first and first[0].arg == "self":
            self._late.append(job)
        else:
            self._queue.append(job)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _visit_body(self, job: Deferred) -> None:
        node = job.node
        self._visited[id(node)] = job
        saved_scopes, saved_class = self.scopes, self._class
        saved_scope_line, saved_node = self.usages.scope, self._scope_node
        saved_guards, self.usages.guards = self.usages.guards, job.guards
        self.scopes, self._class = [*job.scopes, self._parameters(job)], None
        self._scope_node = node
        self.usages.scope = node.lineno
        self.visit_block(node.body if isinstance(node.body, list) else [node.body])
        self.scopes, self._class = saved_scopes, saved_class
        self.usages.guards = saved_guards
        self.usages.scope, self._scope_node = saved_scope_line, saved_node

    def _parameters(self, job: Deferred) -> dict:
        node, args = job.node, job.node.args
        ordered = [*args.posonlyargs, *args.args]
        scope: dict = {}
        for arg in [*ordered, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                scope[arg.arg] = self._annotation(getattr(arg, "annotation", None))
        decorators = {
            (dotted(d) or "").rpartition(".")[2] for d in getattr(node, "decorator_list", [])
        }
        if ordered and "staticmethod" not in decorators:
            first = ordered[0].arg
            if job.patched:
                scope[first] = job.patched
            elif job.owner is not None:
                owner = job.owner
                # `self.req.x = ...` in any method: `self.req.x` is the class's own value
                scope.update((f"{_WROTE}{first}.{chain}", True) for chain in owner.writes)
                if owner.first_base:
                    scope[SUPER] = (("self", (owner.first_base,), frozenset()), owner.name)
                if owner.bases:
                    scope[first] = ("self", owner.bases, owner.own, owner.key)
                else:
                    scope[first] = ConsumerInstance(owner)
        return scope

    # ---- imports ---------------------------------------------------------------

    def visit_Try(self, node: ast.Try) -> None:
        guarded = False
        for handler in node.handlers:
            if handler.type is None:
                guarded = True
                continue
            types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            if any((dotted(t) or "").rpartition(".")[2] in _IMPORT_ERRORS for t in types):
                guarded = True
        if guarded:
            for statement in node.body:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    self._guarded.add(id(statement))
        names = caught(node.handlers)
        self._guarded_visit(node.body, ("except", names, node.lineno) if names else None)
        fallback = None
        if guarded:
            imported = imported_in(node.body, self._sglang_import)
            fallback = ("fallback", imported, node.lineno) if imported else None
        self._guarded_visit(node.handlers, fallback)
        self.visit_block(node.orelse)
        self.visit_block(node.finalbody)

    def _sglang_import(self, module: str, name: str) -> str | None:
        from_sglang = module == SGLANG or module.startswith(SGLANG + ".")
        return f"{module}.{name}" if from_sglang else None

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._in_handler += 1
        self.generic_visit(node)
        self._in_handler -= 1

    def _import_usage(self, node: Located, statement: ast.AST | None, symbol: str) -> None:
        lazy = len(self.scopes) > 1
        guarded = statement is not None and id(statement) in self._guarded
        bound = None
        if isinstance(node, ast.alias) and isinstance(statement, ast.ImportFrom):
            bound = node.asname or node.name
        self.usages.append(
            ImportUsage(
                *self._at(node),
                symbol,
                lazy=lazy,
                guarded=guarded,
                focus=self.columns.token(node),
                bound=bound,
            )
        )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            bound = alias.asname or top
            if top == SGLANG:
                self._import_usage(alias, node, alias.name)
                self.bind(bound, alias.name if alias.asname else SGLANG)
            elif alias.name in self.exports.modules or top in self.exports.modules:
                self.bind(bound, CONSUMER + (alias.name if alias.asname else top))
            else:
                self.bind(bound, EXTERNAL + alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = absolute_module(self.module, self.is_package, node.level, node.module)
        from_sglang = node.level == 0 and (source == SGLANG or source.startswith(SGLANG + "."))
        for alias in node.names:
            if alias.name == "*":
                if from_sglang:
                    self._import_usage(node, node, source)
                    if not self._stars and self._tree is not None:
                        self._bound = bound_names(self._tree)
                    self._stars.append(source)
                continue
            bound = alias.asname or alias.name
            if from_sglang:
                self._import_usage(alias, node, f"{source}.{alias.name}")
                self.bind(bound, f"{source}.{alias.name}")
            elif f"{source}.{alias.name}" in self.exports.modules:
                self.bind(bound, f"{CONSUMER}{source}.{alias.name}")
            elif source in self.exports.modules:
                subclass = self.exports.subclass(source, alias.name)
                found = self.exports.lookup(source, alias.name)
                stars = () if found else self.exports.star_lookup(source, alias.name)
                key = self.exports.defining(source, alias.name)
                if subclass is not None:
                    self.bind(bound, ConsumerClass(alias.name, *subclass))
                elif stars:  # re-exported by a star import: it fails here when gone
                    symbol = f"{stars[0]}.{alias.name}"
                    self.usages.append(
                        ImportUsage(
                            *self._at(alias),
                            symbol,
                            lazy=len(self.scopes) > 1,
                            guarded=id(node) in self._guarded,
                            focus=self.columns.token(alias),
                            bound=bound,
                            star=stars,
                        )
                    )
                    self.bind(bound, symbol)
                else:
                    self.bind(bound, found or (OwnClass(key) if key else EXTERNAL + bound))
                    if not found:
                        self.scopes[-1][_FROM + bound] = (source, alias.name)
            else:
                self.bind(bound, EXTERNAL + f"{source}.{alias.name}")

    # ---- assignments and narrowing ---------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        self._stored.update((id(t), node.value) for t in node.targets)
        self.generic_visit(node)
        value = node.value
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                self._maybe_install(target, value)
                self._record_attribute_type(target, value)
        if len(node.targets) != 1:
            return
        target = node.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call):
            symbol = self.resolve_expr(value.func)
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            if symbol is not None:
                starred = any(isinstance(e, ast.Starred) for e in target.elts)
                # at the statement (the fix pads it), shown at the target: the node that
                # breaks, where Python raises "too many values to unpack" (not the call)
                self.usages.append(
                    UnpackUsage(
                        *self._at(node),
                        symbol,
                        len(target.elts),
                        starred,
                        focus=self.columns.span(target),
                    )
                )
            elif isinstance(value.func, ast.Attribute):
                receiver = self.infer(value.func.value)
                if receiver is not None:
                    self.usages.append(
                        UnpackUsage(
                            *self._at(node),
                            "",
                            len(target.elts),
                            starred,
                            receiver,
                            value.func.attr,
                            focus=self.columns.span(target),
                        )
                    )
        elif isinstance(target, ast.Name):
            self._assign_name(target.id, value)

    def _assign_name(self, name: str, value: ast.expr | None, annotation=None) -> None:
        # `GC = parallel_state.GroupCoordinator` aliases (and of consumer subclasses),
        # `b = ScheduleBatch(...)` types;
        # anything else shadows, except a fallback in `except ImportError: X = None`
        bound = annotation
        if bound is None and value is not None and id(value) in self._partials:
            bound = PartialOf(*self._partials[id(value)])
        if bound is None and value is not None:
            bound = self.resolve_expr(value) or self.infer(value) or self._consumer_class(value)
            if bound is None and isinstance(value, ast.Name):
                local = self.lookup(value.id)
                bound = local if isinstance(local, LocalFunction) else None
        if bound is not None or not self._in_handler:
            self.bind(name, bound)
            self.scopes[-1][_VALUE + name] = value

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._stored[id(node.target)] = node.value
        self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            self._assign_name(node.target.id, node.value, self._annotation(node.annotation))
        elif isinstance(node.target, ast.Attribute):
            if node.value is not None:
                self._maybe_install(node.target, node.value)
            self._record_attribute_type(node.target, node.value, node.annotation)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Attribute):  # `x.n += 1` reads `x.n` first: a load
            target = ast.copy_location(ast.Attribute(target.value, target.attr, ast.Load()), target)
        self.visit(target)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._bind_loop(node.target, node.iter)
        self.visit(node.target)
        self.visit_block(node.body)
        self.visit_block(node.orelse)

    visit_AsyncFor = visit_For

    def _bind_loop(self, target: ast.expr, iterable: ast.expr) -> None:
        if isinstance(target, ast.Name):
            container = self.infer(iterable)
            self.bind(target.id, ("iter", container) if container else None)
            return
        if not isinstance(target, (ast.Tuple, ast.List)):
            return
        for element in target.elts:
            if isinstance(element, ast.Name):
                self.bind(element.id, None)
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            if iterable.func.id == "enumerate" and iterable.args and len(target.elts) == 2:
                self._bind_loop(target.elts[1], iterable.args[0])
            elif iterable.func.id == "zip":
                for element, source in zip(target.elts, iterable.args, strict=False):
                    self._bind_loop(element, source)

    def _comprehension(self, node) -> None:
        self.scopes.append({})
        for generator in node.generators:
            self.visit(generator.iter)
            self._bind_loop(generator.target, generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        for part in ("elt", "key", "value"):
            if getattr(node, part, None) is not None:
                self.visit(getattr(node, part))
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    # ---- references and calls --------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        saved = self.usages.guards
        if self._own_write(node, store):  # `obj.x` read after the consumer set it itself
            self.usages.guards = (*saved, ("own", node.attr, node.lineno))
        self._attribute(node, store)
        self.usages.guards = saved

    def _attribute(self, node: ast.Attribute, store: bool) -> None:
        symbol = self.resolve_expr(node)
        if symbol is not None:
            self.usages.append(
                ReferenceUsage(
                    *self._at(node),
                    symbol,
                    store=store,
                    focus=self.columns.token(node),
                    star=self._star_root(node),
                )
            )
            return
        if not self._member(node, store, None):
            base = node.value
            if isinstance(base, ast.Name) and self.lookup(base.id) is None:
                self.usages.append(
                    AttributeNameUsage(
                        *self._at(node),
                        "",
                        member=node.attr,
                        store=store,
                        focus=self.columns.token(node),
                    )
                )
        self.visit(node.value)  # the chain may hold a call: `mod.f().x`

    def _own_write(self, node: ast.Attribute, store: bool) -> bool:
        """Remember `obj.x = ...` in this scope; True for a later read of `obj.x`."""
        receiver = dotted(node.value)
        if not receiver or receiver in ("self", "cls"):
            return False  # self: the class's own names (class_names) cover it
        key = f"{_WROTE}{receiver}.{node.attr}"
        if store:
            self.scopes[-1][key] = True
            return False
        return any(key in scope for scope in self.scopes)

    def _member(self, node: ast.Attribute, store: bool, call: CallShape | None) -> bool:
        receiver = self.infer(node.value)
        if receiver is None:
            return False
        if receiver[0] == "obj" or (receiver[0] == "self" and node.attr in receiver[2]):
            return True  # a consumer object's member, or the subclass's own
        stored = self._value_type(self._stored.get(id(node))) if store else None
        self.usages.append(
            MemberUsage(
                *self._at(node),
                "",
                receiver=receiver,
                member=node.attr,
                store=store,
                call=call,
                value_type=stored,
                focus=self.columns.token(node),
            )
        )
        return True

    # ---- value types (for argument and attribute type changes) --------------------

    def _value_type(self, node: ast.expr | None, depth: int = 0) -> str | None:
        if isinstance(node, ast.Name):  # a local assigned in this scope: its value's type
            value = self.scopes[-1].get(_VALUE + node.id)
            return self._value_type(value, depth + 1) if depth < 3 else None
        return value_type(node, self.resolve_expr, self._external)

    def _dataclass_call(self, node: ast.Call, function: str) -> None:
        """`dataclasses.fields(ServerArgs)`, `dataclasses.replace(server_args, ...)`."""
        arg = node.args[0]
        if isinstance(arg, ast.Starred):
            return
        path = self.resolve_expr(arg)
        receiver = None if path else self.infer(arg)
        if not path and receiver is None:
            return
        self.usages.append(
            DataclassCallUsage(
                *self._at(node),
                path or "",
                function=function.rpartition(".")[2],
                receiver=receiver,
                focus=self.columns.span(arg),
            )
        )

    def _external(self, node: ast.expr) -> str | None:
        """`torch.tensor` as the file imports it; a builtin's name when not rebound."""
        name = dotted(node)
        if not name:
            return None
        parts = name.split(".")
        base = self.lookup(parts[0])
        if base is None:
            return name
        if isinstance(base, str) and base.startswith(EXTERNAL):
            return ".".join([base[len(EXTERNAL) :], *parts[1:]])
        return None

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.generic_visit(node)
        if isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
            self._index(node, node.slice.value)
        key = literal_string(node.slice)
        owner = self.resolve_expr(node.value) if key is not None else None
        if (
            owner is not None and key is not None and key.isidentifier()
        ):  # `Enum["NAME"]`: a member by name
            self.usages.append(ReferenceUsage(*self._at(node), f"{owner}.{key}"))
        elif key is None and not isinstance(node.slice, (ast.Constant, ast.Tuple, ast.Slice)):
            owner = self.resolve_expr(node.value)  # `Enum[name]`: by a run-time string
            if owner is not None and isinstance(node.ctx, ast.Load):
                focus = self.columns.span(node.slice)
                self.usages.append(EnumLookupUsage(*self._at(node), owner, focus=focus))
        if key is not None and _is_meta_info(node.value):
            focus = self.columns.span(node.slice)
            self.usages.append(MetaInfoUsage(*self._at(node), "", key=key, focus=focus))

    def _index(self, node: ast.Subscript, index: int) -> None:
        """`out[1]` where `out` holds a call's result (or `f(...)[1]`): its return shape."""
        ref = self.infer(node.value) if isinstance(node.value, (ast.Name, ast.Call)) else None
        if not ref or ref[0] not in ("call", "ret"):
            return
        symbol, receiver, member = (ref[1], (), "") if ref[0] == "call" else ("", *ref[1:])
        at, focus = self._at(node), self.columns.span(node)
        self.usages.append(IndexUsage(*at, symbol, 0, False, receiver, member, index, focus=focus))

    def visit_Dict(self, node: ast.Dict) -> None:
        self.generic_visit(node)
        keys = [
            (k.value, self.columns.span(k))
            for k in node.keys
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
        if len(keys) >= 3:
            self.usages.append(KeywordDictUsage(*self._at(node), "", keys=keys))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        shape = CallShape(
            positional=sum(1 for a in node.args if not isinstance(a, ast.Starred)),
            keywords=[k.arg for k in node.keywords if k.arg is not None],
            star_args=any(isinstance(a, ast.Starred) for a in node.args),
            star_kwargs=any(k.arg is None for k in node.keywords),
            places=self.columns.arguments(node),
        )
        if shape.star_kwargs:
            self._spread(node, shape)
        symbol = self.resolve_expr(func)
        if node.args and symbol is None and self._external(func) in DATACLASS_FUNCTIONS:
            self._dataclass_call(node, str(self._external(func)))
        # `getattr(obj, "meth")(...)`: the member call `obj.meth(...)`
        callee = (literal_getattr(func) if self.lookup("getattr") is None else None) or func
        saved = self.usages.guards
        if isinstance(callee, ast.Attribute) and self._own_write(callee, False):
            self.usages.guards = (*saved, ("own", callee.attr, node.lineno))
        member = (
            symbol is None
            and isinstance(callee, ast.Attribute)
            and self._member(callee, False, shape)
        )
        self.usages.guards = saved
        if member and isinstance(callee, ast.Attribute):
            shape.arg_types = arguments(node, self._value_type)  # only for sglang calls
            shape.never_none = self._never_none(node)
            shape.literals = literal_arguments(node)
            self.visit(callee.value)
        else:
            self.visit(func)
        for part in [*node.args, *node.keywords]:
            self.visit(part)
        name = (dotted(func) or "").rpartition(".")[2]
        self._special_call(node, name)
        if name == "partial" and self._external(func) == "functools.partial":
            self._partial(node)
        if isinstance(func, ast.Attribute) and func.attr == "get" and _is_meta_info(func.value):
            key = literal_string(node.args[0]) if node.args else None
            if key is not None:
                focus = self.columns.span(node.args[0])
                self.usages.append(MetaInfoUsage(*self._at(node), "", key=key, focus=focus))
        if name in _STRING_IMPORTERS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value == SGLANG or first.value.startswith(SGLANG + "."):
                    self._import_usage(first, None, first.value)
        if name in ("setattr", "object") or name in PATCHERS:
            self._patch_call(node, name)
        if symbol is not None:
            shape.arg_types = arguments(node, self._value_type)
            shape.never_none = self._never_none(node)
            shape.literals = literal_arguments(node)
            self.usages.append(
                CallUsage(
                    *self._at(node),
                    symbol,
                    **shape.__dict__,
                    focus=self.columns.token(node),
                    star=self._star_root(func),
                )
            )
            if len(node.args) == 1 and not node.keywords and shape.positional == 1:
                # `Enum(value)`: a member by value (the matcher keeps enums only)
                literal = literal_string(node.args[0])
                focus = self.columns.span(node.args[0])
                lookup = EnumLookupUsage(*self._at(node), symbol, by_value=True, literal=literal)
                lookup.focus = focus
                self.usages.append(lookup)
        elif (subclass := self._consumer_class(func)) is not None:
            self.usages.append(
                CallUsage(
                    *self._at(node),
                    subclass.bases[0],
                    **shape.__dict__,
                    via=subclass.key,
                    via_init=subclass.inherits_init,
                    focus=self.columns.token(node),
                )
            )
        elif isinstance(func, ast.Name) and isinstance(self.lookup(func.id), PartialOf):
            self._partial_call(node, self.lookup(func.id), shape)
        elif isinstance(func, ast.Name) and node.args:
            self._replacement_call(func, node.args[0])


def _is_meta_info(node: ast.expr) -> bool:
    """`x["meta_info"]` or `x.meta_info`."""
    if isinstance(node, ast.Subscript):
        return literal_string(node.slice) == "meta_info"
    return isinstance(node, ast.Attribute) and node.attr == "meta_info"
