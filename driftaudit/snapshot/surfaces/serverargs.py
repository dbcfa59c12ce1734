"""The `ServerArgs` field model of an sglang tree: fields, types, defaults, CLI flags.

Read statically with `ast` (nothing of sglang is imported). Two layouts exist:

- "dataclass" (up to 0.5.2x): `@dataclasses.dataclass class ServerArgs` in
  `sglang/srt/server_args.py`. Older releases register every flag by hand in
  `ServerArgs.add_cli_args` (`parser.add_argument("--tp-size", ...)`); from 0.5.14
  fields carry `Annotated[T, Arg(...)]` (or `A[T, "help"]`) metadata from which
  `add_cli_args_from_dataclass` derives the flags, and only a few flags (dynamic
  choices, deprecated spellings, `--config`) are still registered by hand.
- "namespaces" (0.5.22 and newer): the fields live in `msgspec.Struct` namespace
  classes under `sglang/srt/arg_groups/fields/`, gathered by
  `collect_input_fields(_INPUT_NAMESPACES)` in server_args.py and assembled with
  `msgspec.defstruct`; `arg_groups/field_order.py` keeps the positional order.

Flags are derived the way sglang derives them: an `Arg` field's flag is its
`cli_name` or `--` + the name with `_` -> `-`, plus its `aliases` (and the `--no-`
spellings of `argparse.BooleanOptionalAction`); `no_cli=True` and fields without
metadata get no flag. A hand-registered `add_argument` maps to the field named by
its `dest=`, else argparse's own dest (first long option), renamed by
`from_cli_args` (`args.tp_size = args.tensor_parallel_size`), else the field its
`default=ServerArgs.x` reads.

Each flag also keeps its argparse dest, the attribute `parse_args` stores it under (before
`from_cli_args` renames it): the registration's `dest=`, else its first long option
(`--tensor-parallel-size` -> `tensor_parallel_size`); a derived flag's dest is its field
(`add_cli_args_from_dataclass` anchors it there). A consumer that re-registers every flag
under a prefix reads these dests (`args.sglang_tensor_parallel_size`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.snapshot.surfaces._files import parse_text, tail_name

EXTRACTOR_VERSION = "4"  # bump when the model or extraction changes

SERVER_ARGS_FILE = "sglang/srt/server_args.py"
FIELD_ORDER_FILE = "sglang/srt/arg_groups/field_order.py"

_ANNOTATED = {"A", "Annotated"}
_COLLECTOR = "collect_input_fields"
_NAMESPACE_LIST = "_INPUT_NAMESPACES"
_MAX_NOTE = 160
# "(Deprecated) ...", "[Deprecated] ...", "Deprecated alias for ...", "Note: --x is deprecated"
_DEPRECATED_HELP = re.compile(r"^\W*deprecated\b|--[\w-]+ is deprecated", re.IGNORECASE)


@dataclass
class ServerArgField:
    name: str  # python field name, e.g. "tp_size"
    annotation: str | None  # source text, e.g. "int", "Optional[bool]" (Annotated unwrapped)
    default: str | None  # source text of the default, None when required/unknown
    flag: str | None  # primary CLI flag, e.g. "--tp-size"; None when not CLI-visible
    aliases: list[str]  # other flags mapped to this field, e.g. ["--tensor-parallel-size"]
    cli: bool  # visible on the command line
    deprecated: bool  # every flag of the field is registered as deprecated
    file: str  # path relative to the tree root, e.g. "sglang/srt/server_args.py"
    line: int
    help: str | None = None  # the help text of its Arg metadata or registration

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ServerArgField:
        return cls(**{**data, "aliases": list(data.get("aliases") or [])})


@dataclass
class ServerArgsModel:
    fields: dict[str, ServerArgField]  # by field name, in constructor order
    flags: dict[str, str]  # every CLI flag (primary and alias) -> field name
    # flag -> one-line note, for every flag registered as deprecated (by hand with a
    # Deprecated*Action or a "(Deprecated)" help, or through Arg metadata); a hand
    # registered one may map to no field.
    deprecated_flags: dict[str, str]
    layout: str  # "dataclass" (old) or "namespaces" (new)
    # every CLI flag -> its argparse dest (`--tensor-parallel-size` -> `tensor_parallel_size`
    # when registered by hand, `tp_size` when derived from the field)
    dests: dict[str, str] = field(default_factory=dict)
    # flags whose argparse action refuses them when passed (its `__call__` raises or calls
    # `parser.error`): registered, their dest still parsed, but passing one stops startup
    rejected_flags: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "layout": self.layout,
            "dests": dict(self.dests),
            "rejected_flags": list(self.rejected_flags),
            "fields": [f.to_json() for f in self.fields.values()],
            "flags": dict(self.flags),
            "deprecated_flags": dict(self.deprecated_flags),
        }

    @classmethod
    def from_json(cls, data: dict) -> ServerArgsModel:
        fields = [ServerArgField.from_json(item) for item in data.get("fields", [])]
        return cls(
            fields={f.name: f for f in fields},
            flags=dict(data.get("flags", {})),
            deprecated_flags=dict(data.get("deprecated_flags", {})),
            layout=data.get("layout", "dataclass"),
            dests=dict(data.get("dests", {})),
            rejected_flags=list(data.get("rejected_flags", [])),
        )


# ---------------------------------------------------------------------------
# Internal records
# ---------------------------------------------------------------------------


@dataclass
class _ArgMeta:
    """What `Annotated[T, Arg(...)]` or `Annotated[T, "help"]` declares."""

    help: str | None = None
    cli_name: str | None = None
    aliases: list[str] = field(default_factory=list)
    no_cli: bool = False
    action: str | None = None


@dataclass
class _Decl:
    name: str
    annotation: str | None
    default: str | None
    meta: _ArgMeta | None
    file: str
    line: int


@dataclass
class _Registration:
    """One `add_argument` (by hand or derived from Arg metadata)."""

    options: list[str]
    field: str | None
    deprecated: bool
    note: str
    help: str | None = None
    dest: str | None = None  # argparse's dest; None when computed at run time
    rejects: bool = False  # its action refuses the flag when passed


class _Tree:
    """Parsed modules of one tree, by dotted name (parsed once, on demand)."""

    def __init__(self, root: Path, scan: Path | None = None) -> None:
        self.root = root
        self.scan = scan or root  # a TreeScan shares its parses with the other surfaces
        self._modules: dict[str, tuple[ast.Module, str] | None] = {}

    def module(self, dotted: str) -> tuple[ast.Module, str] | None:
        if dotted not in self._modules:
            self._modules[dotted] = None
            base = self.root.joinpath(*dotted.split("."))
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.is_file():
                    parsed = _parse(self.scan, path)
                    if parsed is not None:
                        self._modules[dotted] = (parsed, path.relative_to(self.root).as_posix())
                    break
        return self._modules[dotted]


def _parse(scan: Path, path: Path) -> ast.Module | None:
    try:
        return parse_text(scan, path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, RecursionError):
        return None


# ---------------------------------------------------------------------------
# Public entry point
# ---------------------------------------------------------------------------


def extract_server_args(root: Path) -> ServerArgsModel | None:
    """root is the folder that contains the `sglang/` package (e.g. an unpacked wheel).

    None when the tree has no `sglang/srt/server_args.py` or no `ServerArgs` in it."""
    tree = _Tree(Path(root), root)
    found = tree.module("sglang.srt.server_args")
    if found is None:
        return None
    module, relpath = found
    cls = _module_class(module, "ServerArgs")
    if cls is None:
        return None

    sources = _namespace_sources(module)
    if sources is not None:
        layout = "namespaces"
        decls: dict[str, _Decl] = {}
        for expr in sources:
            located = _resolve_class(tree, "sglang.srt.server_args", expr)
            if located is not None:
                decls.update(_class_decls(tree, *located))
        decls.update(_own_decls(cls, relpath))
        decls = _ordered(decls, _positional_order(tree, module))
    else:
        layout = "dataclass"
        decls = _class_decls(tree, "sglang.srt.server_args", cls, relpath)

    add_cli = _method(cls, "add_cli_args")
    registrations: list[_Registration] = []
    if _calls(module, "add_cli_args_from_dataclass"):
        registrations.extend(_derived_registrations(decls))
    if add_cli is not None:
        renames = _cli_renames(_method(cls, "from_cli_args"))
        rejects = _Rejects(tree, "sglang.srt.server_args")
        registrations.extend(_hand_registrations(add_cli, decls, renames, rejects))
    return _build(decls, registrations, layout)


# ---------------------------------------------------------------------------
# Fields
# ---------------------------------------------------------------------------


def _module_class(module: ast.Module, name: str) -> ast.ClassDef | None:
    found = None
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            found = node
    return found


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def _own_decls(cls: ast.ClassDef, relpath: str) -> dict[str, _Decl]:
    decls: dict[str, _Decl] = {}
    for node in cls.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        if _is_classvar(node.annotation):
            continue
        inner, meta = _unwrap(node.annotation)
        decls[node.target.id] = _Decl(
            node.target.id,
            _annotation_text(inner),
            _default_text(node.value),
            meta,
            relpath,
            node.lineno,
        )
    return decls


def _class_decls(
    tree: _Tree, module_name: str, cls: ast.ClassDef, relpath: str, depth: int = 0
) -> dict[str, _Decl]:
    """The fields of a dataclass or Struct: those of its bases (in the tree) first."""
    decls: dict[str, _Decl] = {}
    if depth < 5:
        for base in cls.bases:
            located = _resolve_class(tree, module_name, base)
            if located is not None:
                decls.update(_class_decls(tree, *located, depth=depth + 1))
    decls.update(_own_decls(cls, relpath))
    return decls


def _resolve_class(
    tree: _Tree, module_name: str, expr: ast.expr, depth: int = 0
) -> tuple[str, ast.ClassDef, str] | None:
    """A class named by `expr` in `module_name`: defined there or imported from the tree."""
    if not isinstance(expr, ast.Name) or depth > 4:
        return None
    found = tree.module(module_name)
    if found is None:
        return None
    module, relpath = found
    cls = _module_class(module, expr.id)
    if cls is not None:
        return module_name, cls, relpath
    for node in module.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) != expr.id:
                continue
            source = _absolute(module_name, node, tree)
            if source is None:
                return None
            return _resolve_class(tree, source, ast.Name(alias.name), depth + 1)
    return None


def _absolute(module_name: str, node: ast.ImportFrom, tree: _Tree) -> str | None:
    if not node.level:
        return node.module
    parts = module_name.split(".")
    found = tree.module(module_name)
    is_package = found is not None and found[1].endswith("__init__.py")
    keep = len(parts) - node.level + (1 if is_package else 0)
    if keep <= 0:
        return None
    base = parts[:keep]
    return ".".join(base + ([node.module] if node.module else []))


def _namespace_sources(module: ast.Module) -> list[ast.expr] | None:
    """The namespace classes `collect_input_fields(...)` gathers, None if it is not called."""
    lists: dict[str, ast.expr] = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and isinstance(node.value, (ast.List, ast.Tuple)):
                lists[target.id] = node.value
    for call in _calls(module, _COLLECTOR):
        if call.args:
            arg = call.args[0]
            if isinstance(arg, ast.Name):
                arg = lists.get(arg.id)
            if isinstance(arg, (ast.List, ast.Tuple)):
                return list(arg.elts)
    if _NAMESPACE_LIST in lists:
        return list(lists[_NAMESPACE_LIST].elts)
    return None


def _positional_order(tree: _Tree, module: ast.Module) -> list[str]:
    """`POSITIONAL_FIELD_ORDER` (arg_groups/field_order.py, or server_args.py itself)."""
    candidates = [module]
    found = tree.module(FIELD_ORDER_FILE.removesuffix(".py").replace("/", "."))
    if found is not None:
        candidates.insert(0, found[0])
    for candidate in candidates:
        for node in candidate.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "POSITIONAL_FIELD_ORDER" for t in node.targets
            ):
                value = node.value
                if isinstance(value, (ast.List, ast.Tuple)):
                    return [e.value for e in value.elts if _is_str(e)]
    return []


def _ordered(decls: dict[str, _Decl], order: list[str]) -> dict[str, _Decl]:
    """The order `collect_input_fields` gives: listed names first, then the rest."""
    listed = set(order)
    names = [n for n in order if n in decls] + [n for n in decls if n not in listed]
    return {n: decls[n] for n in names}


def _is_classvar(annotation: ast.expr) -> bool:
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return tail_name(node) == "ClassVar"


def _unwrap(annotation: ast.expr) -> tuple[ast.expr, _ArgMeta | None]:
    """`Annotated[T, Arg(...)]` -> (T, the Arg), as sglang's `_unwrap_annotated` reads it."""
    if not (isinstance(annotation, ast.Subscript) and tail_name(annotation.value) in _ANNOTATED):
        return annotation, None
    parts = annotation.slice
    elts = list(parts.elts) if isinstance(parts, ast.Tuple) else [parts]
    if not elts:
        return annotation, None
    for meta in elts[1:]:
        if isinstance(meta, ast.Call) and tail_name(meta.func) == "Arg":
            return elts[0], _arg_meta(meta)
        text = _str_value(meta)
        if text is not None:
            return elts[0], _ArgMeta(help=text)
    return elts[0], None


def _arg_meta(call: ast.Call) -> _ArgMeta:
    meta = _ArgMeta()
    if call.args:  # Arg's first field is help
        meta.help = _str_value(call.args[0])
    for kw in call.keywords:
        if kw.arg == "help":
            meta.help = _str_value(kw.value)
        elif kw.arg == "cli_name" and _is_str(kw.value):
            meta.cli_name = kw.value.value
        elif kw.arg == "aliases" and isinstance(kw.value, (ast.List, ast.Tuple)):
            meta.aliases = [e.value for e in kw.value.elts if _is_str(e)]
        elif kw.arg == "no_cli":
            meta.no_cli = isinstance(kw.value, ast.Constant) and bool(kw.value.value)
        elif kw.arg == "action":
            meta.action = ast.unparse(kw.value)
    return meta


def _annotation_text(node: ast.expr) -> str | None:
    if _is_str(node):  # a string annotation: its text is the type
        return node.value
    return ast.unparse(node)


def _default_text(value: ast.expr | None) -> str | None:
    """Source text of a default; `field(default_factory=list)` reads as `list()`."""
    if value is None:
        return None
    if isinstance(value, ast.Call) and tail_name(value.func) == "field":
        for kw in value.keywords:
            if kw.arg == "default":
                return ast.unparse(kw.value)
            if kw.arg == "default_factory":
                factory = ast.unparse(kw.value)
                if isinstance(kw.value, ast.Lambda):
                    factory = f"({factory})"
                return f"{factory}()"
        return None  # field() without a default: required
    return ast.unparse(value)


# ---------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------


def _derived_registrations(decls: dict[str, _Decl]) -> list[_Registration]:
    """The flags `add_cli_args_from_dataclass` registers from Arg metadata."""
    out = []
    for decl in decls.values():
        meta = decl.meta
        if meta is None or meta.no_cli:
            continue
        options = [meta.cli_name or "--" + decl.name.replace("_", "-"), *meta.aliases]
        options = _with_negations(options, meta.action)
        deprecated = _deprecated(meta.help, meta.action)
        note = _note(meta.help, None)
        out.append(_Registration(options, decl.name, deprecated, note, meta.help, decl.name))
    return out


def _hand_registrations(
    add_cli: ast.FunctionDef, decls: dict[str, _Decl], renames: dict[str, str], rejects
) -> list[_Registration]:
    out = []
    for call in _calls(add_cli, "add_argument"):
        if not isinstance(call.func, ast.Attribute):
            continue
        options = [a.value for a in call.args if _is_str(a) and a.value.startswith("-")]
        if not options:
            continue  # a positional argument, or flags computed at run time
        kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        action = ast.unparse(kwargs["action"]) if "action" in kwargs else None
        help_text = _str_value(kwargs["help"]) if "help" in kwargs else None
        new_flag = kwargs.get("new_flag")
        new_flag = new_flag.value if new_flag is not None and _is_str(new_flag) else None
        target = _target_field(options, kwargs, decls, renames)
        out.append(
            _Registration(
                _with_negations(options, action),
                target,
                _deprecated(help_text, action),
                _note(help_text, new_flag),
                help_text,
                _argparse_dest(options, kwargs),
                "action" in kwargs and rejects(kwargs["action"], set(kwargs)),
            )
        )
    return out


class _Rejects:
    """Does a registration's action class refuse the flag when passed? Its `__call__`
    raises or calls `parser.error` unconditionally, or under `if self.<x>` where `x` is a
    keyword the registration passes (0.5.23's `DeprecatedAction(error_message=...)`)."""

    def __init__(self, tree: _Tree, module_name: str) -> None:
        self.tree, self.module_name = tree, module_name
        self._known: dict[str, tuple[bool, frozenset[str]]] = {}

    def __call__(self, action: ast.expr, keywords: set[str]) -> bool:
        if not isinstance(action, ast.Name):
            return False
        if action.id not in self._known:
            located = _resolve_class(self.tree, self.module_name, action)
            call = _method(located[1], "__call__") if located else None
            self._known[action.id] = _refusals(call.body) if call else (False, frozenset())
        always, when = self._known[action.id]
        return always or bool(when & keywords)


def _refusals(body: list[ast.stmt]) -> tuple[bool, frozenset[str]]:
    """(refuses always, the `self.<x>` attributes whose truth makes it refuse)."""
    when: set[str] = set()
    for statement in body:
        if _refuses(statement):
            return True, frozenset()
        if isinstance(statement, ast.If) and any(_refuses(s) for s in statement.body):
            test = statement.test
            if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.IsNot):
                test = test.left
            if isinstance(test, ast.Attribute) and tail_name(test.value) == "self":
                when.add(test.attr)
    return False, frozenset(when)


def _refuses(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Raise):
        return True
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and (call.func.attr == "error")
    )


def _argparse_dest(options: list[str], kwargs: dict[str, ast.expr]) -> str | None:
    """The dest argparse gives: `dest=`, else the first long option, else the first."""
    if "dest" in kwargs:
        dest = kwargs["dest"]
        return dest.value if _is_str(dest) else None
    longs = [o for o in options if o.startswith("--")]
    return (longs or options)[0].lstrip("-").replace("-", "_")


def _target_field(
    options: list[str], kwargs: dict[str, ast.expr], decls: dict[str, _Decl], renames
) -> str | None:
    dest = kwargs.get("dest")
    if dest is not None and _is_str(dest):
        name = dest.value
    else:
        longs = [o for o in options if o.startswith("--")]
        name = (longs or options)[0].lstrip("-").replace("-", "_")
    name = renames.get(name, name)
    if name in decls:
        return name
    default = kwargs.get("default")
    if isinstance(default, ast.Attribute) and tail_name(default.value) == "ServerArgs":
        if default.attr in decls:
            return default.attr
    if isinstance(default, ast.Call) and default.args and _is_str(default.args[0]):
        if default.args[0].value in decls:  # `_declared_default("sampling_backend")`
            return default.args[0].value
    return None


def _cli_renames(from_cli: ast.FunctionDef | None) -> dict[str, str]:
    """`args.tp_size = args.tensor_parallel_size` in from_cli_args: dest -> field."""
    renames: dict[str, str] = {}
    if from_cli is None:
        return renames
    for node in walk(from_cli):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute):
                renames[value.attr] = target.attr
    return renames


def _with_negations(options: list[str], action: str | None) -> list[str]:
    """argparse.BooleanOptionalAction also registers `--no-x` for every `--x`."""
    if not action or not action.endswith("BooleanOptionalAction"):
        return list(options)
    return list(options) + ["--no-" + o[2:] for o in options if o.startswith("--")]


def _deprecated(help_text: str | None, action: str | None) -> bool:
    if action and "deprecated" in action.lower():
        return True
    return bool(help_text and _DEPRECATED_HELP.search(help_text))


def _note(help_text: str | None, new_flag: str | None) -> str:
    text = " ".join((help_text or "").split())
    if not text and new_flag:
        text = f"Deprecated: use {new_flag} instead."
    if not text:
        text = "Deprecated."
    return text if len(text) <= _MAX_NOTE else text[: _MAX_NOTE - 3] + "..."


def _build(
    decls: dict[str, _Decl], registrations: list[_Registration], layout: str
) -> ServerArgsModel:
    per_field: dict[str, list[_Registration]] = {}
    flags: dict[str, str] = {}
    deprecated_flags: dict[str, str] = {}
    dests: dict[str, str] = {}
    rejected: list[str] = []
    for reg in registrations:
        if reg.rejects:
            rejected.extend(o for o in reg.options if o not in rejected)
        if reg.dest is not None:
            for option in reg.options:
                dests.setdefault(option, reg.dest)
        if reg.field is not None:
            per_field.setdefault(reg.field, []).append(reg)
            for option in reg.options:
                flags.setdefault(option, reg.field)
        if reg.deprecated:
            for option in reg.options:
                deprecated_flags.setdefault(option, reg.note)

    fields: dict[str, ServerArgField] = {}
    for decl in decls.values():
        regs = per_field.get(decl.name, [])
        options = list(dict.fromkeys(o for r in regs for o in r.options))
        primary = _primary(decl.name, regs)
        fields[decl.name] = ServerArgField(
            name=decl.name,
            annotation=decl.annotation,
            default=decl.default,
            flag=primary,
            aliases=[o for o in options if o != primary],
            cli=bool(options),
            deprecated=bool(regs) and all(r.deprecated for r in regs),
            file=decl.file,
            line=decl.line,
            help=(decl.meta.help if decl.meta else None)
            or next((r.help for r in regs if r.help and not r.deprecated), None),
        )
    return ServerArgsModel(fields, flags, deprecated_flags, layout, dests, rejected)


def _primary(name: str, regs: list[_Registration]) -> str | None:
    """The field's own spelling (`--tp-size`) if registered, else the first flag of its
    first registration, preferring ones not marked deprecated."""
    canonical = "--" + name.replace("_", "-")
    for group in ([r for r in regs if not r.deprecated], regs):
        options = [o for r in group for o in r.options]
        if canonical in options:
            return canonical
        if options:
            return options[0]
    return None


# ---------------------------------------------------------------------------
# ast helpers
# ---------------------------------------------------------------------------


def _calls(node: ast.AST, name: str) -> list[ast.Call]:
    """Every call in `node` of a function or method named `name`, in source order."""
    found = [n for n in walk(node) if isinstance(n, ast.Call) and tail_name(n.func) == name]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _str_value(node: ast.expr) -> str | None:
    """The text of a string expression (f-strings with `{...}` kept as source)."""
    if _is_str(node):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if _is_str(value):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _str_value(node.left), _str_value(node.right)
        if left is not None and right is not None:
            return left + right
    return None
