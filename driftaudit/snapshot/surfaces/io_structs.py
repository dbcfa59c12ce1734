"""Request structs (`sglang/srt/managers/io_struct.py`) and the `meta_info` keys of
responses.

Structs: the classes of io_struct that carry fields. Up to 0.5.14 they are
`@dataclass`es (`GenerateReqInput(BaseReq, APIServingTimingMixin)`); from 0.5.16 most
are `msgspec.Struct`s (`UpdateWeightsFromTensorReqInput(BaseReq, kw_only=True)` with
`BaseReq(msgspec.Struct, ...)`) and a few stay dataclasses (`GenerateReqInput`). A
class is a struct when it is decorated with `dataclass`, derives from `msgspec.Struct`
or pydantic's `BaseModel`, or derives from a struct of the same files. Fields are the
annotated class attributes (not `ClassVar`), inherited ones first, in the order Python
builds them (the last base first, the class's own last). A split io_struct
(`managers/io_struct*.py` or a `managers/io_struct/` package) is read as one.

meta_info keys: what the server writes into the `meta_info` dict of a response,
searched in `sglang/srt` (tokenizer_manager.py first, so its location wins):
- `meta_info = {"k": ...}` (also any `*_meta_info` variable, e.g. `beam_meta_info`),
- `meta_info["k"] = ...`, `meta_info.update({"k": ...})` / `.update(k=...)`,
  `meta_info.setdefault("k", ...)`,
- `{"meta_info": {"k": ...}}` literals,
- in a function whose name says it builds meta info (`convert_to_output_meta_info`,
  `add_weight_versions_to_meta_info`; not `extract_*`/`get_*`/`read_*`/`parse_*`):
  the same writes on the dict it returns, whatever its name (`meta_data`).
Not caught: keys copied from another dict (`meta_info.update(state.flat_fields)`), keys
computed at run time (`meta_info[f"{name}_ts"]`), and writes through an alias.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.snapshot.surfaces._files import (
    const_str,
    dotted,
    iter_sources,
    match_lines,
    parse,
    parse_around,
    prefilter,
    unparse,
    where,
)

_STRUCT_BASES = {"Struct", "msgspec.Struct", "BaseModel", "pydantic.BaseModel"}
_META_NAME_RE = re.compile(r"^(?:\w*_)?meta_info$")
_META_NEEDLE = prefilter(re.compile(rb"meta_info"))
_READER_PREFIXES = ("extract", "get", "read", "parse", "_extract", "_get", "_read", "_parse")


@dataclass
class StructField:
    name: str
    annotation: str | None
    default: str | None  # source text; None when the field is required
    line: int
    inherited_from: str | None = None  # the base class that declares it, when inherited

    @property
    def required(self) -> bool:
        return self.default is None

    def to_json(self) -> dict:
        data = {
            "name": self.name,
            "annotation": self.annotation,
            "default": self.default,
            "line": self.line,
        }
        if self.inherited_from is not None:
            data["inherited_from"] = self.inherited_from
        return data

    @classmethod
    def from_json(cls, data: dict) -> StructField:
        return cls(
            data["name"],
            data.get("annotation"),
            data.get("default"),
            data["line"],
            data.get("inherited_from"),
        )


@dataclass
class Struct:
    name: str
    file: str
    line: int
    fields: dict[str, StructField] = field(default_factory=dict)
    bases: list[str] = field(default_factory=list)  # as written
    kind: str = "dataclass"  # dataclass | msgspec | pydantic

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "kind": self.kind,
            "bases": list(self.bases),
            "fields": {k: v.to_json() for k, v in self.fields.items()},
        }

    @classmethod
    def from_json(cls, data: dict) -> Struct:
        return cls(
            data["name"],
            data["file"],
            data["line"],
            {k: StructField.from_json(v) for k, v in data.get("fields", {}).items()},
            list(data.get("bases") or []),
            data.get("kind", "dataclass"),
        )


def io_struct_files(root: Path) -> list[str]:
    """Relative paths of the io_struct module(s) of the tree."""
    managers = Path(root) / "sglang" / "srt" / "managers"
    found = sorted(managers.glob("io_struct*.py")) + sorted(managers.glob("io_struct/**/*.py"))
    return [p.relative_to(root).as_posix() for p in found if p.is_file()]


def extract_request_structs(root: Path) -> dict[str, Struct]:
    """class name -> Struct for every struct class of io_struct, in source order."""
    classes: dict[str, tuple[str, ast.ClassDef]] = {}
    for rel in io_struct_files(root):
        tree = parse((Path(root) / rel).read_text(errors="replace"), rel)
        if tree is None:
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                classes.setdefault(stmt.name, (rel, stmt))
    kinds: dict[str, str | None] = {}

    def kind_of(name: str, seen: frozenset = frozenset()) -> str | None:
        if name in kinds:
            return kinds[name]
        rel, cls = classes[name]
        kind = None
        if any(_is_dataclass_decorator(d) for d in cls.decorator_list):
            kind = "dataclass"
        for base in cls.bases:
            text = dotted(base) or ""
            if text in _STRUCT_BASES:
                kind = kind or ("pydantic" if text.endswith("BaseModel") else "msgspec")
            elif text in classes and text not in seen and text != name:
                kind = kind or kind_of(text, seen | {name})
        kinds[name] = kind
        return kind

    structs: dict[str, Struct] = {}
    for name, (rel, cls) in classes.items():
        kind = kind_of(name)
        if kind is None:
            continue
        structs[name] = Struct(
            name,
            rel,
            cls.lineno,
            {},
            [unparse(b) or "" for b in cls.bases],
            kind,
        )
    for name in structs:
        structs[name].fields = _fields(name, classes, structs, set())
    return structs


def _is_dataclass_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (dotted(target) or "").rsplit(".", 1)[-1] == "dataclass"


def _own_fields(cls: ast.ClassDef) -> dict[str, StructField]:
    fields: dict[str, StructField] = {}
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        annotation = unparse(stmt.annotation) or ""
        if annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        name = stmt.target.id
        fields[name] = StructField(name, annotation, unparse(stmt.value), stmt.lineno)
    return fields


def _fields(name, classes, structs, seen) -> dict[str, StructField]:
    if name in seen or name not in classes:
        return {}
    seen = seen | {name}
    _, cls = classes[name]
    merged: dict[str, StructField] = {}
    for base in reversed(cls.bases):
        base_name = dotted(base) or ""
        if base_name in structs:
            for key, value in _fields(base_name, classes, structs, seen).items():
                merged[key] = StructField(
                    value.name,
                    value.annotation,
                    value.default,
                    value.line,
                    value.inherited_from or base_name,
                )
    for key, value in _own_fields(cls).items():
        merged.pop(key, None)  # an override moves the field to the subclass
        merged[key] = value
    return merged


def extract_meta_info_keys(root: Path) -> dict[str, str]:
    """key -> "file:line" of the first write (tokenizer_manager.py first), sorted by key."""
    sources = sorted(iter_sources(root, _META_NEEDLE, under="sglang/srt"), key=_meta_order)
    keys: dict[str, str] = {}
    for rel, text in sources:
        for tree in parse_around(text, rel, match_lines(text.encode(), _META_NEEDLE)):
            for key, line in _MetaWrites().collect(tree):
                keys.setdefault(key, where(rel, line))
    return dict(sorted(keys.items()))


def _meta_order(item: tuple[str, str]) -> tuple[int, str]:
    rel = item[0]
    if rel.endswith("managers/tokenizer_manager.py"):
        return 0, rel
    if "/managers/" in rel:
        return 1, rel
    return 2, rel


class _MetaWrites:
    def __init__(self) -> None:
        self.found: list[tuple[str, int]] = []

    def collect(self, tree: ast.AST) -> list[tuple[str, int]]:
        for node in walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if "meta_info" in node.name and not node.name.startswith(_READER_PREFIXES):
                    returned = {
                        n.value.id
                        for n in walk(node)
                        if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)
                    }
                    returned.discard("meta_info")  # caught below anyway
                    if returned:
                        self._writes(node, returned.__contains__, literals=False)
        self._writes(tree, lambda name: bool(_META_NAME_RE.match(name)), literals=True)
        self.found.sort(key=lambda item: item[1])
        return self.found

    def _add(self, key_node: ast.AST | None) -> None:
        key = const_str(key_node)
        if key is not None and key_node is not None:
            self.found.append((key, key_node.lineno))

    def _writes(self, tree: ast.AST, is_target, literals: bool) -> None:
        """Writes to the dicts whose variable name `is_target`; with `literals`, also
        `{"meta_info": {...}}`."""
        for node in walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and is_target(t.id) for t in targets):
                    for key in node.value.keys:
                        self._add(key)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and is_target(node.value.id):
                    self._add(node.slice)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                receiver = node.func.value
                if not (isinstance(receiver, ast.Name) and is_target(receiver.id)):
                    continue
                if node.func.attr == "update":
                    if node.args and isinstance(node.args[0], ast.Dict):
                        for key in node.args[0].keys:
                            self._add(key)
                    for keyword in node.keywords:
                        if keyword.arg is not None:
                            self.found.append((keyword.arg, keyword.value.lineno))
                elif node.func.attr == "setdefault" and node.args:
                    self._add(node.args[0])
            elif isinstance(node, ast.Dict) and literals:
                for key, value in zip(node.keys, node.values, strict=True):
                    if const_str(key) == "meta_info" and isinstance(value, ast.Dict):
                        for inner in value.keys:
                            self._add(inner)
