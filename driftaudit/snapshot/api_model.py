"""The API model of one sglang tree: modules, classes, functions, attributes, aliases.

Plain data, serialisable to JSON for the snapshot cache. Built from griffe by
`extract.py`; read by `drift/` through `Snapshot`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# bump when the model or its extraction (extract.py) changes: invalidates the cached models.
# Here, not in extract.py, so that reading cached models never imports griffe.
EXTRACTOR_VERSION = "9"
# label of a class sglang builds at import time (`msgspec.defstruct`): it takes keywords like
# a dataclass and carries the `dataclass` label for that, but is none (`dataclasses.fields`)
ASSEMBLED = "assembled"

POSITIONAL_ONLY = "positional-only"
POSITIONAL_OR_KEYWORD = "positional or keyword"
VAR_POSITIONAL = "variadic positional"
KEYWORD_ONLY = "keyword-only"
VAR_KEYWORD = "variadic keyword"
_KINDS = (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD)


class ModelError(ValueError):
    """A cached entry that does not decode to the model (the caller recomputes it)."""


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise ModelError(f"not {what}")


def _optional_str(value) -> bool:
    return value is None or type(value) is str


def _strings(value) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


@dataclass
class Param:
    name: str
    kind: str  # one of the five kinds above (griffe's ParameterKind values)
    default: str | None = None  # source text of the default, None when required
    annotation: str | None = None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind not in (VAR_POSITIONAL, VAR_KEYWORD)

    @property
    def positional(self) -> bool:
        return self.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)

    @property
    def keyword(self) -> bool:
        return self.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)

    def to_json(self) -> list:
        return [self.name, self.kind, self.default, self.annotation]

    @classmethod
    def from_json(cls, data: list) -> Param:
        if type(data) is not list or len(data) != 4 or data[1] not in _KINDS:
            raise ModelError("not a parameter")
        name, kind, default, annotation = data
        if type(name) is not str or not _optional_str(default) or not _optional_str(annotation):
            raise ModelError("not a parameter")
        return cls(name, kind, default, annotation)


@dataclass
class Obj:
    """Base of every model object."""

    name: str
    lineno: int | None

    kind = "object"

    def to_json(self) -> dict:
        return {"k": self.kind, "n": self.name, "l": self.lineno}


@dataclass
class Function(Obj):
    params: list[Param] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # staticmethod, classmethod, property ...
    # Lengths of the tuple literals the body returns; `returns_other` when some
    # return gives another expression (a call, a name), so the arity is not known.
    return_tuples: list[int] = field(default_factory=list)
    returns_other: bool = False
    return_elements: list[str] = field(default_factory=list)  # of the last tuple returned
    returns: str | None = None  # return annotation with names made canonical
    # callees whose result a return gives as it is (`helper`, `self.meth`; "?": other)
    return_calls: list[str] = field(default_factory=list)

    kind = "function"

    def to_json(self) -> dict:
        data = super().to_json()
        data.update(
            p=[p.to_json() for p in self.params],
            lb=self.labels,
            rt=self.return_tuples,
            ro=self.returns_other,
            re=self.return_elements,
            r=self.returns,
            rc=self.return_calls,
        )
        return data

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def accepts_var_keyword(self) -> bool:
        return any(p.kind == VAR_KEYWORD for p in self.params)

    @property
    def bound_params(self) -> list[Param]:
        """Parameters a caller passes: without `self`/`cls` of a method."""
        if (
            self.params
            and self.params[0].name in ("self", "cls")
            and "staticmethod" not in (self.labels)
        ):
            return self.params[1:]
        return self.params

    @property
    def return_arity(self) -> int | None:
        """The tuple length every return statement gives, or None if not one fixed length."""
        if self.returns_other or len(set(self.return_tuples)) != 1:
            return None
        return self.return_tuples[0]


@dataclass
class Attribute(Obj):
    annotation: str | None = None
    value: str | None = None
    labels: list[str] = field(default_factory=list)  # module-/class-/instance-attribute
    # its type with canonical names: the annotation, else the class a value is built
    # from (`self.x = Foo(...)` -> sglang...Foo); a property's return annotation
    type: str | None = None
    file: str | None = None  # where it is declared, when not in its class's module

    kind = "attribute"

    def to_json(self) -> dict:
        data = super().to_json()
        data.update(a=self.annotation, v=self.value, lb=self.labels, ty=self.type, f=self.file)
        return data


@dataclass
class Alias(Obj):
    """A name bound by an import inside sglang: `from x import y` in module m."""

    target: str = ""

    kind = "alias"

    def to_json(self) -> dict:
        data = super().to_json()
        data["t"] = self.target
        return data


@dataclass
class Class(Obj):
    bases: list[str] = field(default_factory=list)  # canonical paths where known
    members: dict[str, Obj] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)  # dataclass ...

    kind = "class"

    def to_json(self) -> dict:
        data = super().to_json()
        data.update(
            b=self.bases, lb=self.labels, m={k: v.to_json() for k, v in self.members.items()}
        )
        return data

    @property
    def is_enum(self) -> bool:
        return any(b.rsplit(".", 1)[-1].endswith("Enum") or b.endswith("Flag") for b in self.bases)


@dataclass
class Module:
    name: str  # dotted: sglang.srt.layers.dp_attention
    file: str  # relative to the tree root: sglang/srt/layers/dp_attention.py
    members: dict[str, Obj] = field(default_factory=dict)
    wildcards: list[str] = field(default_factory=list)  # modules star-imported
    exports: list[str] | None = None  # __all__, when a literal list
    parse_error: str | None = None

    kind = "module"

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "file": self.file,
            "members": {k: v.to_json() for k, v in self.members.items()},
            "wildcards": self.wildcards,
            "exports": self.exports,
            "parse_error": self.parse_error,
        }

    @classmethod
    def from_json(cls, data: dict) -> Module:
        """The module a cache entry holds; ModelError if it is not of the model's shape."""
        _expect(isinstance(data, dict), "a module")
        _expect(isinstance(data.get("name"), str), "a module")
        _expect(isinstance(data.get("file"), str), "a module")
        _expect(isinstance(data.get("members"), dict), "a module")
        _expect(_strings(data.get("wildcards")), "a module")
        _expect(data.get("exports") is None or _strings(data["exports"]), "a module")
        _expect(_optional_str(data.get("parse_error")), "a module")
        return cls(
            data["name"],
            data["file"],
            {k: obj_from_json(v) for k, v in data["members"].items()},
            data["wildcards"],
            data["exports"],
            data["parse_error"],
        )


def obj_from_json(data: dict) -> Obj:
    """One object of a cache entry; ModelError if it is not of the model's shape.

    Checked inline, field by field (this runs for every object of a warm run): the
    types a reader relies on, not every element of every list.
    """
    if type(data) is not dict:
        raise ModelError("not a model object")
    kind, name, lineno = data.get("k"), data.get("n"), data.get("l")
    if type(name) is not str or (lineno is not None and type(lineno) is not int):
        raise ModelError("not a model object")
    if kind == "function":
        params, labels, tuples, elements = data["p"], data["lb"], data["rt"], data["re"]
        if (
            type(params) is not list
            or type(labels) is not list
            or type(tuples) is not list
            or type(elements) is not list
            or type(data["ro"]) is not bool
            or not _optional_str(data["r"])
            or not _strings(data["rc"])
        ):
            raise ModelError("not a function")
        return Function(
            name,
            lineno,
            [Param.from_json(p) for p in params],
            labels,
            tuples,
            data["ro"],
            elements,
            data["r"],
            data["rc"],
        )
    if kind == "class":
        bases, labels, members = data["b"], data["lb"], data["m"]
        if type(members) is not dict or type(labels) is not list or not _strings(bases):
            raise ModelError("not a class")
        members = {k: obj_from_json(v) for k, v in members.items()}
        return Class(name, lineno, bases, members, labels)
    if kind == "alias":
        if type(data["t"]) is not str:
            raise ModelError("not an alias")
        return Alias(name, lineno, data["t"])
    annotation, value, labels, type_, file = (data[k] for k in ("a", "v", "lb", "ty", "f"))
    if (
        kind != "attribute"
        or type(labels) is not list
        or not _optional_str(annotation)
        or not _optional_str(value)
        or not _optional_str(type_)
        or not _optional_str(file)
    ):
        raise ModelError("not an attribute")
    return Attribute(name, lineno, annotation, value, labels, type_, file)
