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

`retired` marks a variable that is already dead in the tree: every place its name occurs
in the non-test Python sources as code or a quoted name (not in a comment or in the words
of a longer string: "set SGLANG_X=1 to ...") is its own registry definition or a removal
notice, so setting it changes nothing. A removal notice is an `if` reading the
variable in its test whose body only logs, warns, prints or raises a message that says so
("has been removed", "deprecated", "no longer", "ignored", ...; 0.5.16's
`SGLANG_ENABLE_SPEC_V2`), or an entry without a replacement in the deprecation table of
an env module (0.5.23's `"SGLANG_X": _DeprecatedEnv(note=...)`). A registry entry whose
name occurs nowhere else is `retired` too (registered, never read). A mention of the other
spelling of the legacy prefix (`SGL_X` for `SGLANG_X`) counts as a use, and so does any
mention in the wheel's C++/CUDA sources or shell scripts (a JIT kernel's `std::getenv`).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.pysource import read_bytes
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
_NAME_NEEDLE = re.compile(rb"SGL(?:ANG)?_[A-Z0-9]")  # any mention, for `retired`
_NAME_RE = re.compile(r"SGL(?:ANG)?_[A-Z0-9_]+")
_REGISTRY_NEEDLE = re.compile(rb"= *Env[A-Z]\w*\(")
_LINE_NEEDLES = (_READ_NEEDLE, _REGISTRY_NEEDLE)
_FILE_NEEDLES = prefilter(*_LINE_NEEDLES, _NAME_NEEDLE)  # a file that names one at all
_WRITERS = {"setenv", "delenv", "putenv", "unsetenv"}
_ENVIRON_METHODS = {"get", "pop", "setdefault"}
_TYPE_WORDS = ("bool", "int", "float", "str", "list", "tuple", "json", "path")
_NOTICE_WORDS = re.compile(
    r"\b(?:removed|deprecated|no longer|no effect|ignored|retired|obsolete|unsupported|"
    r"not supported)\b",
    re.I,
)
_NATIVE = {"h", "hpp", "cuh", "cu", "cpp", "cc", "c", "hip", "sh"}  # sources besides Python
_LOG_CALLS = {"print", "warn", "info", "error", "debug", "critical", "exception", "fatal"}


@dataclass
class EnvVar:
    name: str
    kind: str  # "registry" | "read"
    type: str | None  # registry: the descriptor class; read: guessed from the reader
    default: str | None  # source text of the default, None when there is none
    file: str
    line: int
    deprecated: str | None = None  # the replacement or a note, when sglang deprecates it
    retired: str | None = None  # why setting it already changes nothing (see the module)

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
        if self.retired is not None:
            data["retired"] = self.retired
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
            data.get("retired"),
        )


def extract_env_vars(
    root: Path, names: Iterable[str] | None = None, index: EnvIndex | None = None
) -> dict[str, EnvVar]:
    """name -> EnvVar for every environment variable of the tree, sorted by name; with
    `names`, for those alone (and the other spelling of their legacy prefix), read from
    the files that spell one (`index`, the tree's `env_index`, lists them; else every
    file is looked at): all a name's entry comes from lies in those files (its reads and
    registry definition, the notices and mentions that retire it), so each is what the
    whole tree gives (a consumer audit asks for a handful of the tree's 600)."""
    scope = None if names is None else scope_of(names)
    registry: dict[str, EnvVar] = {}
    reads: dict[str, EnvVar] = {}
    mentions: dict[str, set[tuple[str, int]]] = {}  # name -> (file, line) of each mention
    explained: dict[str, list[tuple[str, int, int, str]]] = {}  # definitions and notices
    for rel, text in _env_sources(root, scope, index):
        _mentions(rel, text, mentions)
        lines = match_lines(text.encode(), _LINE_NEEDLES)
        for tree in parse_around(text, rel, lines):
            _FileEnvs(rel, tree, set(lines), registry, reads, explained).collect()
    merged = dict(reads)
    for name, entry in registry.items():
        read = reads.get(name)
        if read is not None and entry.deprecated is None:
            entry.deprecated = read.deprecated  # e.g. listed in _DEPRECATED_ENVS too
        merged[name] = entry
    for name, spans in explained.items():
        entry = merged.get(name)
        if entry is not None and all(
            any(rel == f and start <= line <= end for f, start, end, _ in spans)
            for rel, line in mentions.get(name, set()) | mentions.get(_twin(name), set())
        ):
            notices = [s for s in spans if s[3] == "notice"]
            entry.retired = (
                f"only a removal notice reads it, at {notices[0][0]}:{notices[0][1]}"
                if notices
                else "registered but never read"
            )
    if scope is not None:  # the other names of the files read: not from all their files
        merged = {name: entry for name, entry in merged.items() if name in scope}
    _read_natively(root, [e for e in merged.values() if e.retired])
    return dict(sorted(merged.items()))


@dataclass
class EnvIndex:
    """Which files of a tree spell each name (as `_mentions` reads names): what a query
    for a few names must read. `files` in the order the tree is read (`iter_sources`),
    `names` maps a name to the positions in `files` of those that spell it."""

    files: list[str]
    names: dict[str, list[int]]

    def to_json(self) -> dict:
        return {"files": self.files, "names": self.names}

    @classmethod
    def from_json(cls, data: dict) -> EnvIndex:
        return cls(data["files"], data["names"])

    def files_spelling(self, names: Iterable[str]) -> list[str]:
        """The files that spell one of `names`, in the order the tree is read."""
        return [self.files[i] for i in sorted({i for n in names for i in self.names.get(n, ())})]


def env_index(root: Path) -> EnvIndex:
    """The tree's `EnvIndex` (one read of the files that name a variable at all)."""
    files: list[str] = []
    names: dict[str, list[int]] = {}
    for rel, text in iter_sources(root, _FILE_NEEDLES):
        for name in dict.fromkeys(_NAME_RE.findall(text)):
            names.setdefault(name, []).append(len(files))
        files.append(rel)
    return EnvIndex(files, names)


def _env_sources(root: Path, scope: set[str] | None, index: EnvIndex | None):
    """(rel, text) of the files an extraction for `scope` reads (None: every one), in
    the order the tree is read."""
    if scope is None or index is None or not all(_NAME_RE.fullmatch(n) for n in scope):
        for rel, text in iter_sources(root, _FILE_NEEDLES):
            if scope is None or _spells_any(text, scope):
                yield rel, text
        return
    for rel in index.files_spelling(scope):
        try:
            data = read_bytes(Path(root) / rel)
        except OSError:
            continue
        yield rel, data.decode("utf-8", errors="replace")


def scope_of(names: Iterable[str]) -> set[str]:
    """`names` and the other spelling of their legacy prefix (SGL_X <-> SGLANG_X): an
    entry's `retired` reads the mentions of both."""
    return {spelling for name in names for spelling in (name, _twin(name))}


def _spells_any(text: str, names: set[str]) -> bool:
    """Does `text` spell one of `names` as a whole name (the mentions `_mentions` reads)?
    A name another pattern would not find is looked for as plain text."""
    if not names.isdisjoint(_NAME_RE.findall(text)):
        return True
    return any(name in text for name in names if not _NAME_RE.fullmatch(name))


def _read_natively(root: Path, retired: list[EnvVar]) -> None:
    """Un-retire the variables the wheel's C++/CUDA sources or scripts name
    (`std::getenv("SGLANG_JIT_LOG_LEVEL")` in a JIT kernel header)."""
    if not retired:
        return
    by_name = {e.name: e for e in retired}
    pattern = re.compile("|".join(sorted(map(re.escape, by_name), key=len, reverse=True)))
    for directory, dirs, files in os.walk(Path(root) / "sglang"):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in files:
            if name.rpartition(".")[2] not in _NATIVE:
                continue
            try:
                text = Path(directory, name).read_text(errors="replace")
            except OSError:
                continue
            for match in pattern.finditer(text):
                entry = by_name.get(match.group())
                if entry is not None:
                    entry.retired = None


def _twin(name: str) -> str:
    """The other spelling of the legacy prefix rewrite: SGL_X <-> SGLANG_X."""
    if name.startswith("SGLANG_"):
        return "SGL_" + name.removeprefix("SGLANG_")
    return "SGLANG_" + name.removeprefix("SGL_") if name.startswith("SGL_") else name


def _mentions(rel: str, text: str, into: dict[str, set[tuple[str, int]]]) -> None:
    line, previous = 1, 0
    for match in _NAME_RE.finditer(text):
        line += text.count("\n", previous, match.start())
        previous = match.start()
        if not _prose(text, match.start(), match.end()):
            into.setdefault(match.group(), set()).add((rel, line))


def _prose(text: str, start: int, end: int) -> bool:
    """Is the name at start..end words of a comment or of a longer string ("set
    SGLANG_X=1 to ..."), not code or a quoted name? Judged from its line alone (an odd
    number of quotes before it: inside a string), which is cheap and good enough here."""
    before = text[text.rfind("\n", 0, start) + 1 : start]
    quotes = 0
    for char in before:
        if char in "'\"":
            quotes += 1
        elif char == "#" and quotes % 2 == 0:
            return True  # a comment
    if quotes % 2 == 0:
        return False  # code: `envs.SGLANG_X`, `SGLANG_X = EnvBool(...)`
    return not (before[-1:] in ("'", '"') and text[end : end + 1] == before[-1])


class _FileEnvs:
    def __init__(self, rel, tree, lines, registry, reads, explained) -> None:
        self.rel = rel
        self.tree = tree
        self.lines = lines
        self.registry: dict[str, EnvVar] = registry
        self.reads: dict[str, EnvVar] = reads
        self.explained: dict[str, list[tuple[str, int, int, str]]] = explained
        self.env_module = rel.rsplit("/", 1)[-1] in ("environ.py", "envs.py")
        self.notice: tuple[int, int] | None = None  # the removal notice being read

    def _explain(self, name: str, start: int, end: int | None, kind: str) -> None:
        """Mentions of `name` on lines start..end are its definition or a notice."""
        self.explained.setdefault(name, []).append((self.rel, start, end or start, kind))

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
            if isinstance(stmt, ast.If) and self._spans_match(stmt.test) and _is_notice(stmt):
                self.notice = (stmt.lineno, stmt.end_lineno or stmt.lineno)
            for header in headers:
                for node in walk(header):
                    self._visit(node)
            self.notice = None

    def _spans_match(self, stmt: ast.stmt | ast.expr) -> bool:
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
            self._explain(name, stmt.lineno, stmt.end_lineno, "definition")
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
                        if _warns_only(value):
                            self._explain(name, key.lineno, value.end_lineno, "notice")
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
        if self.notice is not None:
            self._explain(name, *self.notice, "notice")
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


def _is_notice(stmt: ast.If) -> bool:
    """`if os.getenv("SGLANG_X"): logger.warning("SGLANG_X has been removed ...")`: the
    body only logs, warns, prints or raises, with a message that says the variable is gone
    or deprecated; no `else`."""
    if stmt.orelse:
        return False
    texts: list[str] = []
    for child in stmt.body:
        if isinstance(child, ast.Pass):
            continue
        if isinstance(child, ast.Raise) and child.exc is not None:
            node = child.exc
        elif isinstance(child, ast.Expr) and isinstance(child.value, ast.Call):
            callee = (_callee(child.value) or "").lower().removesuffix("_once")
            if not ("warn" in callee or "log" in callee or callee in _LOG_CALLS):
                return False
            node = child.value
        else:
            return False
        texts += [n.value for n in ast.walk(node) if const_str(n) is not None]
    return bool(_NOTICE_WORDS.search(" ".join(texts)))


def _warns_only(call: ast.Call) -> bool:
    """A deprecation-table entry that forwards nothing: `_DeprecatedEnv(note="...")`."""
    return not call.args and all(k.arg not in ("replacement", "transform") for k in call.keywords)


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
