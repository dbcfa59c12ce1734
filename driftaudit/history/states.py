"""What one release says of one name: its state (presence, signature or type and
default, where it is defined, whether it warns that it is deprecated), kept in the
snapshot's store per tree and name, so a warm run reads it back without a parse.

A name is spelled as the user writes it (one spelling per kind):

- `sglang.srt.x.Class.method`: a module, class, function, method or attribute (what
  `Snapshot.resolve` names, re-exports followed); a ServerArgs field
  (`sglang.srt.server_args.ServerArgs.tp_size`) is read from the ServerArgs model;
- `sglang.srt.x.func(param)`: one parameter of a function or method (a class: of its
  constructor);
- `--flag`: a server flag (ServerArgs' command line);
- `SGLANG_X` (capitals, digits, underscores): an environment variable;
- any other word: a distribution sglang requires (`transformers`, Requires-Dist).

A state's `aspects` are what a change is measured on (a parameter's kind, position,
default and type each its own aspect; a deprecation is one): two releases differ where
an aspect differs;
`text` and `location` are what a person reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftaudit.snapshot.api_model import (
    EXTRACTOR_VERSION,
    KEYWORD_ONLY,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Attribute,
    Class,
    Function,
    Module,
    Param,
)
from driftaudit.store import Entry, Json, key
from driftaudit.store.keys import question

if TYPE_CHECKING:
    from driftaudit.snapshot import Snapshot
    from driftaudit.snapshot.resolution import Resolved

STATES_VERSION = "2"  # bump when what a state holds changes
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PARAMETER = re.compile(r"^(sglang(?:\.\w+)+)\((\w+)\)$")
_API = re.compile(r"^sglang(?:\.\w+)*$")
_FLAG = re.compile(r"^--[\w][\w-]*$")
_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass
class State:
    kind: str = ""  # "" (absent), module, class, function, attribute, field, parameter,
    # flag, env, requirement, external (defined outside sglang)
    text: str = ""
    location: str | None = None  # file:line in the release's tree
    aspects: dict[str, str] = field(default_factory=dict)
    deprecated: str | None = None  # how the release says it is deprecated

    @property
    def present(self) -> bool:
        return self.kind != ""

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "text": self.text,
            "location": self.location,
            "aspects": dict(self.aspects),
            "deprecated": self.deprecated,
        }

    @classmethod
    def from_json(cls, data: Any) -> State:
        kind, text, location = data["kind"], data["text"], data["location"]
        aspects, deprecated = data["aspects"], data["deprecated"]
        if not (isinstance(kind, str) and isinstance(text, str) and isinstance(aspects, dict)):
            raise ValueError("not a state")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in aspects.items()):
            raise ValueError("not a state")
        for value in (location, deprecated):
            if value is not None and not isinstance(value, str):
                raise ValueError("not a state")
        return cls(kind, text, location, aspects, deprecated)


def spelling_kind(name: str) -> str | None:
    """Which kind of name `name` is spelled as (see the module), None: none."""
    if _FLAG.match(name):
        return "flag"
    if _ENV_NAME.match(name):
        return "env"
    if _PARAMETER.match(name):
        return "parameter"
    if _API.match(name):
        return "api"
    if _REQUIREMENT.match(name):
        return "requirement"
    return None


def state_entry(tree_key: str, name: str, snapshot: Callable[[], Snapshot]) -> Entry[State]:
    """The store entry of `name`'s state in a tree; `tree_key` stands for the tree (a
    release's identity, else its snapshot's digest); `snapshot()` opens it, only when
    the state is computed."""
    from driftaudit.snapshot.surfaces.registry import SURFACES_VERSION
    from driftaudit.snapshot.surfaces.serverargs import EXTRACTOR_VERSION as ARGS_VERSION

    version = f"{STATES_VERSION}.{EXTRACTOR_VERSION}.{ARGS_VERSION}.{SURFACES_VERSION}"
    return Entry(
        key("symstate", version, tree_key, question(name)),
        lambda: _compute(snapshot(), name),
        Json(State.from_json, State.to_json),
    )


def _compute(snapshot: Snapshot, name: str) -> State:
    state = _read(snapshot, name)
    if state.deprecated:  # a deprecation is a change of its own
        state.aspects["deprecated"] = state.deprecated
    return state


def _read(snapshot: Snapshot, name: str) -> State:
    kind = spelling_kind(name)
    if kind == "flag":
        return _flag(snapshot, name)
    if kind == "env":
        return _env(snapshot, name)
    if kind == "parameter":
        match = _PARAMETER.match(name)
        assert match is not None
        return _parameter(snapshot, match.group(1), match.group(2))
    if kind == "api":
        return _api(snapshot, name)
    if kind == "requirement":
        return _requirement(snapshot, name)
    return State()


# ---- sglang's Python API ----------------------------------------------------------------


def param_text(param: Param) -> str:
    text = param.name
    if param.kind == VAR_POSITIONAL:
        text = "*" + text
    elif param.kind == VAR_KEYWORD:
        text = "**" + text
    if param.annotation:
        text += f": {param.annotation}"
    if param.default is not None:
        text += f" = {param.default}" if param.annotation else f"={param.default}"
    return text


def signature_text(fn: Function) -> str:
    """`(a, b: int = 1, *, c=None) -> T`, as Python spells it."""
    parts, starred = [], False
    for param in fn.params:
        if param.kind == VAR_POSITIONAL:
            starred = True
        elif param.kind == KEYWORD_ONLY and not starred:
            parts.append("*")
            starred = True
        parts.append(param_text(param))
        if param.kind == "positional-only" and not any(
            p.kind == "positional-only" for p in fn.params[fn.params.index(param) + 1 :]
        ):
            parts.append("/")
    returns = f" -> {fn.returns}" if fn.returns else ""
    return f"({', '.join(parts)}){returns}"


def _param_aspects(fn: Function) -> dict[str, str]:
    """One aspect per parameter: its kind, its position (when passed by position), its
    default and its type."""
    aspects = {}
    for index, param in enumerate(fn.params):
        where = f"#{index}" if param.positional else ""
        aspects[f"param:{param.name}"] = (
            f"{param.kind}{where} = {param.default} : {param.annotation}"
        )
    return aspects


def _api(snapshot: Snapshot, name: str) -> State:
    from driftaudit.drift.deprecations import deprecation_note
    from driftaudit.drift.differ import callable_signature, function_location
    from driftaudit.drift.serverarg_changes import SERVER_ARGS

    found = snapshot.resolve(name)
    if found is None:
        return State()
    if found.opaque:
        return State("external", found.canonical, None, {"present": found.canonical})
    obj = found.obj
    owner, _, short = found.canonical.rpartition(".")
    if owner == SERVER_ARGS:
        server_args = snapshot.server_args()
        arg = server_args.fields.get(short) if server_args else None
        if arg is not None:
            return _field(arg)
    aspects = {"present": found.canonical}
    location = found.location
    if isinstance(obj, Module):
        return State("module", f"module {found.canonical}", obj.file, aspects)
    if isinstance(obj, Function):
        location = function_location(found, obj)
        aspects.update(_param_aspects(obj), returns=obj.returns or "")
        note = deprecation_note(snapshot.tree.root, location)
        text = f"def {short}{signature_text(obj)}"
        return State("function", text, location, aspects, note)
    if isinstance(obj, Class):
        bases = ", ".join(obj.bases)
        aspects["bases"] = bases
        text = f"class {short}({bases})"
        init = callable_signature(obj, snapshot)
        if init is not None:
            aspects.update(_param_aspects(init))
            text += f"  constructor {signature_text(init)}"
        note = deprecation_note(snapshot.tree.root, location)
        return State("class", text, location, aspects, note)
    if isinstance(obj, Attribute):
        aspects.update(annotation=obj.annotation or "", value=obj.value or "")
        text = short + (f": {obj.annotation}" if obj.annotation else "")
        text += f" = {obj.value}" if obj.value is not None else ""
        return State("attribute", text, location, aspects)
    return State(obj.kind, short, location, aspects)


def _callable(snapshot: Snapshot, name: str) -> tuple[Resolved, Function] | None:
    from driftaudit.drift.differ import callable_signature

    found = snapshot.resolve(name)
    if found is None or found.opaque:
        return None
    fn = callable_signature(found.obj, snapshot)
    return (found, fn) if fn is not None else None


def _parameter(snapshot: Snapshot, function: str, name: str) -> State:
    from driftaudit.drift.deprecations import deprecated_params
    from driftaudit.drift.differ import function_location

    found = _callable(snapshot, function)
    param = found[1].param(name) if found else None
    if found is None or param is None:
        return State()
    location = function_location(*found)
    aspects = {k: v for k, v in _param_aspects(found[1]).items() if k == f"param:{name}"}
    text = f"{param_text(param)}  ({param.kind}, of {found[0].canonical})"
    deprecated = name in deprecated_params(snapshot.tree.root, location)
    note = "its function marks it deprecated" if deprecated else None
    return State("parameter", text, location, aspects, note)


# ---- ServerArgs and its command line ----------------------------------------------------


def _field(arg) -> State:
    aspects = {
        "present": arg.name,
        "type": arg.annotation or "",
        "default": arg.default or "",
        "flag": arg.flag or "",
    }
    text = f"{arg.name}: {arg.annotation} = {arg.default}"
    if arg.flag:
        text += f"  (flag {arg.flag})"
    note = "every flag of the field is deprecated" if arg.deprecated else None
    return State("field", text, f"{arg.file}:{arg.line}", aspects, note)


def _flag(snapshot: Snapshot, flag: str) -> State:
    model = snapshot.server_args()
    if model is None:
        return State()
    dest = model.flags.get(flag)
    note = model.deprecated_flags.get(flag)
    if dest is None and note is None:
        return State()
    arg = model.fields.get(dest) if dest else None
    aspects = {"present": dest or "", "rejected": str(flag in model.rejected_flags)}
    text = f"{flag} -> ServerArgs.{dest}" if dest else f"{flag} (no field)"
    location = None
    if arg is not None:
        aspects.update(type=arg.annotation or "", default=arg.default or "")
        text += f": {arg.annotation} = {arg.default}"
        location = f"{arg.file}:{arg.line}"
    if flag in model.rejected_flags:
        text += "  (refused when passed)"
    return State("flag", text, location, aspects, note or None)


# ---- environment variables and requirements ---------------------------------------------


def _env(snapshot: Snapshot, name: str) -> State:
    var = snapshot.env_vars([name]).get(name)
    if var is None:
        return State()
    aspects = {
        "present": var.kind,
        "type": var.type or "",
        "default": var.default or "",
        "retired": var.retired or "",
    }
    text = f"{name}: {var.type} = {var.default}"
    if var.retired:
        text += f"  (retired: {var.retired})"
    return State("env", text, var.location, aspects, var.deprecated)


def _requirement(snapshot: Snapshot, name: str) -> State:
    from packaging.utils import canonicalize_name

    wanted = canonicalize_name(name)
    found = [r for r in snapshot.surface("requirements") if canonicalize_name(r.name) == wanted]
    if not found:
        return State()
    raws = sorted(r.raw for r in found)
    return State(
        "requirement", "; ".join(raws), "METADATA: Requires-Dist", {"present": " | ".join(raws)}
    )
