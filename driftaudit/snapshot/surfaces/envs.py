"""The `SGLANG_*` / `SGL_*` environment variables an sglang tree reads.

Two kinds:

- `registry`: a class attribute built by an `Env*` descriptor, as in the `Envs` class of
  `sglang/srt/environ.py` (0.5.9 on): `SGLANG_FOO = EnvBool(False)`. The attribute name
  is the variable name (the descriptor's `__set_name__`), whatever its prefix, so the
  registry's `IS_H200`, `MOONCAKE_MASTER`, ... are included. `type` is the descriptor
  (`EnvBool`, `EnvIntWithAlias`, ...), `default` the source of its first argument.
  A `deprecated_name="SGLANG_OLD"` keyword (the `*WithAlias` descriptors) adds the old
  name as a `read` whose `deprecated` names the registry field.
- `read`: a direct read anywhere else (0.5.2 has no registry at all):
  `os.environ.get("X", d)`, `os.getenv`, `os.environ["X"]` (loaded, not stored),
  `"X" in os.environ`, `os.environ.setdefault/pop("X")`, and any call whose callee's
  name contains `env` (`get_bool_env_var`, `get_int_env_var`, `_env_int`,
  `_print_deprecated_env`, but not `setenv`/`delenv`/`putenv`/`unsetenv`) or starts with
  `_lazy_` / contains `Gated` (multimodal_gen's `_lazy_bool("X")`, the LoRA `_GatedBool`).
  Every string argument of such a call that is a variable name counts. `type` is guessed
  from the callee (`bool`/`int`/`float`/`str`/`list`/`json`; `str` for `os.environ`),
  `default` is the source of the second positional or `default=` argument. A reader
  whose name says `deprecat` marks its first name deprecated, naming the second as the
  replacement when there is one (`_print_deprecated_env("SGLANG_OLD", "SGLANG_NEW")`).
  In a module named `environ.py`/`envs.py`, string keys of dict literals that are
  variable names count too (0.5.23's `_DEPRECATED_ENVS` table: `deprecated` is set),
  and anywhere, so do names assigned to a constant whose name says so
  (`PREFILL_ENV = "SGLANG_X"`, `_DIAG_ENVS = ("SGLANG_A", "SGLANG_B")`).

One entry per name; a registry entry wins over a read (keeping the read's `deprecated`),
otherwise the first read in path order gives the location. `envs.SGLANG_X.get()` is a
use of the registry, not a new name. Only quoted names are found: a name built at run
time (`f"SGLANG_{x}"`, the `SGL_` -> `SGLANG_` rewrite of every variable) is not.
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

ENV_NAME_RE = re.compile(r"^SGL(?:ANG)?_[A-Z0-9_]+$")
_READ_NEEDLE = re.compile(rb"SGL(?:ANG)?_[A-Z0-9_]+[\"']")
_REGISTRY_NEEDLE = re.compile(rb"= *Env[A-Z]\w*\(")
_LINE_NEEDLES = prefilter(_READ_NEEDLE, _REGISTRY_NEEDLE)
_WRITERS = {"setenv", "delenv", "putenv", "unsetenv"}
_ENVIRON_METHODS = {"get", "pop", "setdefault"}
_TYPE_WORDS = ("bool", "int", "float", "str", "list", "tuple", "json", "path")


@dataclass
class EnvVar:
    name: str
    kind: str  # "registry" | "read"
    type: str | None  # registry: the descriptor class; read: guessed from the reader
    default: str | None  # source text of the default, None when there is none
    file: str
    line: int
    deprecated: str | None = None  # the replacement or a note, when sglang deprecates it

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict:
        data = {
            "name": self.name,
            "kind": self.kind,
            "type": self.type,
            "default": self.default,
            "file": self.file,
            "line": self.line,
        }
        if self.deprecated is not None:
            data["deprecated"] = self.deprecated
        return data

    @classmethod
    def from_json(cls, data: dict) -> EnvVar:
        return cls(
            data["name"],
            data["kind"],
            data.get("type"),
            data.get("default"),
            data["file"],
            data["line"],
            data.get("deprecated"),
        )


def extract_env_vars(root: Path) -> dict[str, EnvVar]:
    """name -> EnvVar for every environment variable of the tree, sorted by name."""
    registry: dict[str, EnvVar] = {}
    reads: dict[str, EnvVar] = {}
    for rel, text in iter_sources(root, _LINE_NEEDLES):
        lines = match_lines(text.encode(), _LINE_NEEDLES)
        for tree in parse_around(text, rel, lines):
            _FileEnvs(rel, tree, set(lines), registry, reads).collect()
    merged = dict(reads)
    for name, entry in registry.items():
        read = reads.get(name)
        if read is not None and entry.deprecated is None:
            entry.deprecated = read.deprecated  # e.g. listed in _DEPRECATED_ENVS too
        merged[name] = entry
    return dict(sorted(merged.items()))


class _FileEnvs:
    def __init__(self, rel, tree, lines, registry, reads) -> None:
        self.rel = rel
        self.tree = tree
        self.lines = lines
        self.registry: dict[str, EnvVar] = registry
        self.reads: dict[str, EnvVar] = reads
        self.env_module = rel.rsplit("/", 1)[-1] in ("environ.py", "envs.py")

    def collect(self) -> None:
        for stmt in iter_statements(self.tree.body):
            if isinstance(stmt, ast.ClassDef):
                self._registry_class(stmt)
            if any(isinstance(getattr(stmt, n, None), list) for n in ("body", "cases")):
                headers = _header_expressions(stmt)
            elif self._spans_match(stmt):
                headers = [stmt]
            else:
                continue
            for header in headers:
                for node in walk(header):
                    self._visit(node)

    def _spans_match(self, stmt: ast.stmt) -> bool:
        end = stmt.end_lineno or stmt.lineno
        return any(line in self.lines for line in range(stmt.lineno, end + 1))

    def _registry_class(self, cls: ast.ClassDef) -> None:
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            if not (isinstance(target, ast.Name) and isinstance(value, ast.Call)):
                continue
            kind = _callee(value)
            if not (kind and kind.startswith("Env") and kind[3:4].isupper()):
                continue
            default = value.args[0] if value.args else _keyword(value, "default")
            name = target.id
            if name not in self.registry:
                self.registry[name] = EnvVar(
                    name, "registry", kind, unparse(default), self.rel, stmt.lineno
                )
            alias = const_str(_keyword(value, "deprecated_name"))
            if alias and ENV_NAME_RE.match(alias):
                self._read(alias, kind, unparse(default), value.lineno, f"alias of {name}")

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            self._named_constant(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            name = const_str(node.slice)
            if name and ENV_NAME_RE.match(name) and _is_environ(node.value):
                self._read(name, "str", None, node.lineno)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            name = const_str(node.left)
            if (
                name
                and ENV_NAME_RE.match(name)
                and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and _is_environ(node.comparators[0])
            ):
                self._read(name, None, None, node.lineno)
        elif isinstance(node, ast.Dict) and self.env_module:
            for key, value in zip(node.keys, node.values, strict=True):
                name = const_str(key)
                if name and ENV_NAME_RE.match(name):
                    note = None
                    if isinstance(value, ast.Call) and "Deprecat" in (_callee(value) or ""):
                        replacement = const_str(
                            value.args[0] if value.args else _keyword(value, "replacement")
                        )
                        if len(value.args) > 1 or _keyword(value, "transform") is not None:
                            replacement = None  # the value is transformed: no plain rename
                        note = replacement or "deprecated"
                    self._read(name, None, None, key.lineno, note)

    def _named_constant(self, node: ast.Assign | ast.AnnAssign) -> None:
        """`FOO_ENV = "SGLANG_FOO"` / `_FOO_ENVS = ("SGLANG_A", "SGLANG_B")`: a name that
        says it holds env var names (read through it later)."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(t, ast.Name) and "ENV" in t.id.upper() for t in targets):
            return
        value = node.value
        items = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
        for item in items:
            name = const_str(item)
            if name and ENV_NAME_RE.match(name):
                self._read(name, None, None, item.lineno)

    def _call(self, call: ast.Call) -> None:
        callee = _callee(call) or ""
        func = call.func
        environ_method = (
            isinstance(func, ast.Attribute)
            and func.attr in _ENVIRON_METHODS
            and _is_environ(func.value)
        )
        lowered = callee.lower()
        reader = environ_method or (
            callee not in _WRITERS
            and ("env" in lowered or lowered.startswith("_lazy_") or "gated" in lowered)
        )
        if not reader:
            return
        names = [(i, const_str(a)) for i, a in enumerate(call.args)]
        names = [(i, n) for i, n in names if n and ENV_NAME_RE.match(n)]
        if not names:
            return
        type_ = "str" if environ_method or callee == "getenv" else _type_of(lowered)
        for index, name in names:
            default = None
            if index == 0:
                default_node = call.args[1] if len(call.args) > 1 else _keyword(call, "default")
                if const_str(default_node) is None or not ENV_NAME_RE.match(
                    const_str(default_node) or ""
                ):
                    default = unparse(default_node)
            note = None
            if "deprecat" in lowered and index == 0:
                # `_print_deprecated_env("SGLANG_OLD", "SGLANG_NEW")` forwards old to new
                following = names[1][1] if len(names) > 1 and names[1][0] == 1 else None
                note = following or "deprecated"
            self._read(name, type_, default, call.lineno, note)

    def _read(self, name, type_, default, line, deprecated=None) -> None:
        existing = self.reads.get(name)
        if existing is None:
            self.reads[name] = EnvVar(name, "read", type_, default, self.rel, line, deprecated)
            return
        # keep the first location, fill in what it lacked
        if existing.type is None:
            existing.type = type_
        if existing.default is None:
            existing.default = default
        if existing.deprecated is None:
            existing.deprecated = deprecated


def _header_expressions(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of a compound statement outside its blocks (if-test, with-items,
    for-iter, decorators, default values)."""
    out: list[ast.AST] = []
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def _callee(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _is_environ(node: ast.AST) -> bool:
    name = dotted(node)
    return name is not None and (name == "environ" or name.endswith(".environ"))


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _type_of(callee: str) -> str | None:
    """`get_bool_env_var` -> bool, `_env_int` -> int, `_GatedBool` -> bool (lower-cased)."""
    for token in callee.split("_"):
        token = token.removeprefix("gated")
        if token in _TYPE_WORDS:
            return "list" if token == "tuple" else token
    return None
