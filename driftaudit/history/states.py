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
- `/path`: an HTTP route of the server (present when a handler answers it, not only an
  error stub; its methods an aspect);
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

from driftaudit.store import Entry, Json, key
from driftaudit.store.keys import question

if TYPE_CHECKING:
    from driftaudit.snapshot import Snapshot
    from driftaudit.snapshot.api_model import Function, Param
    from driftaudit.snapshot.resolution import Resolved

STATES_VERSION = "5"  # bump when what a state holds changes
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PARAMETER = re.compile(r"^(sglang(?:\.\w+)+)\((\w+)\)$")
_API = re.compile(r"^sglang(?:\.\w+)*$")
_FLAG = re.compile(r"^--[\w][\w-]*$")
_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ROUTE = re.compile(r"^/[^\s`]*$")


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
    if _ROUTE.match(name):
        return "route"
    return None


def state_entry(
    tree_key: str,
    name: str,
    snapshot: Callable[[], Snapshot],
    references: Callable[[], list[Snapshot]] = list,
) -> Entry[State]:
    """The store entry of `name`'s state in a tree; `tree_key` stands for the tree (a
    release's identity, else its snapshot's digest); `snapshot()` opens it, only when
    the state is computed; `references()`: other releases' snapshots whose identical
    files need not be read again (see `_env_files`)."""
    from driftaudit.findings_cache import tool_digest

    # keyed by driftaudit's own code (the extractors a state is read with): the stages
    # are not imported to read a kept state
    return Entry(
        key("symstate", STATES_VERSION, tool_digest(), tree_key, question(name)),
        lambda: _compute(snapshot(), name, references),
        Json(State.from_json, State.to_json),
    )


def _compute(
    snapshot: Snapshot, name: str, references: Callable[[], list[Snapshot]] = list
) -> State:
    state = _read(snapshot, name, references)
    if state.deprecated:  # a deprecation is a change of its own
        state.aspects["deprecated"] = state.deprecated
    return state


def _read(snapshot: Snapshot, name: str, references: Callable[[], list[Snapshot]]) -> State:
    kind = spelling_kind(name)
    if kind == "flag":
        return _flag(snapshot, name)
    if kind == "env":
        return _env(snapshot, name, references())
    if kind == "parameter":
        match = _PARAMETER.match(name)
        assert match is not None
        return _parameter(snapshot, match.group(1), match.group(2))
    if kind == "api":
        return _api(snapshot, name)
    if kind == "requirement":
        return _requirement(snapshot, name)
    if kind == "route":
        return _route(snapshot, name)
    return State()


# ---- sglang's Python API ----------------------------------------------------------------


def param_text(param: Param) -> str:
    from driftaudit.snapshot.api_model import VAR_KEYWORD, VAR_POSITIONAL

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
    from driftaudit.snapshot.api_model import KEYWORD_ONLY, VAR_POSITIONAL

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
    """Per parameter, its kind, default and type (`param:NAME`) and, when it is passed
    by position, its position (`position:NAME`: a parameter inserted before it moves it,
    which only a positional caller sees)."""
    aspects = {}
    for index, param in enumerate(fn.params):
        aspects[f"param:{param.name}"] = f"{param.kind} = {param.default} : {param.annotation}"
        if param.positional:
            aspects[f"position:{param.name}"] = str(index)
    return aspects


def _api(snapshot: Snapshot, name: str) -> State:
    from driftaudit.drift.differ import callable_signature, function_location
    from driftaudit.drift.serverarg_changes import SERVER_ARGS
    from driftaudit.snapshot.api_model import Attribute, Class, Function, Module

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
        note = _deprecation(snapshot, found, location)
        text = f"def {short}{signature_text(obj)}"
        return State("function", text, location, aspects, note)
    if isinstance(obj, Class):
        from driftaudit.match.dataclass_calls import is_dataclass

        bases = ", ".join(obj.bases)
        aspects["bases"] = bases
        aspects["dataclass"] = str(is_dataclass(snapshot, obj))
        text = f"class {short}({bases})"
        init = callable_signature(obj, snapshot)
        if init is not None:
            aspects.update(_param_aspects(init))
            text += f"  constructor {signature_text(init)}"
        note = _deprecation(snapshot, found, location)
        return State("class", text, location, aspects, note)
    if isinstance(obj, Attribute):
        aspects.update(annotation=obj.annotation or "", value=obj.value or "")
        text = short + (f": {obj.annotation}" if obj.annotation else "")
        text += f" = {obj.value}" if obj.value is not None else ""
        return State("attribute", text, location, aspects)
    return State(obj.kind, short, location, aspects)


def _deprecation(snapshot: Snapshot, found: Resolved, location: str | None) -> str | None:
    """`deprecations.deprecation_note` of the definition at `location`, kept per file
    content (releases that share the file share the answer)."""
    from driftaudit.drift.deprecations import DEPRECATIONS_VERSION, deprecation_note

    digest = snapshot.file_digest(found.module.name) if found.module else None
    if digest is None or location is None:
        return deprecation_note(snapshot.tree.root, location)
    return snapshot.kept(
        key("deprecation", DEPRECATIONS_VERSION, digest, location.rpartition(":")[2]),
        lambda: deprecation_note(snapshot.tree.root, location),
        lambda data: data if data is None else str(data),
    )


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
    aspects = {k: v for k, v in _param_aspects(found[1]).items() if k.partition(":")[2] == name}
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


def _env(snapshot: Snapshot, name: str, references: list[Snapshot]) -> State:
    from driftaudit.snapshot.surfaces import envs

    files = _env_files(snapshot, name, references)
    if files is None:  # no manifest to compare by: the tree's own index of names
        var = snapshot.env_vars([name]).get(name)
    else:
        index = envs.EnvIndex(files, {n: list(range(len(files))) for n in envs.scope_of([name])})
        var = envs.extract_env_vars(snapshot.tree.root, [name], index).get(name)
    if var is None:
        return State()
    aspects = {
        "present": var.kind,
        "type": var.type or "",
        "default": var.default or "",
        # why it is retired, not where the notice stands (a line that moves is no change)
        "retired": re.sub(r"\s*at \S+:\d+", "", var.retired or ""),
    }
    text = f"{name}: {var.type} = {var.default}"
    if var.retired:
        text += f"  (retired: {var.retired})"
    return State("env", text, var.location, aspects, var.deprecated)


def _env_files(snapshot: Snapshot, name: str, references: list[Snapshot]) -> list[str] | None:
    """The files of a release that spell `name` (or its other spelling), in the order
    the tree is read, without reading the whole tree: a file whose content a reference
    release has (the same sha256 in both manifests) spells it where the reference's
    index says so; the others are indexed once per release (`_changed_files_index`). A
    variable is read anywhere in a tree: an intermediate release would otherwise cost a
    read of its every file for each name (None: no manifest or no reference)."""
    from driftaudit.snapshot.surfaces import envs

    known = [r for r in references if r.tree.manifest is not None]
    scope = envs.scope_of([name])
    if snapshot.tree.manifest is None or not known:
        return None
    if not all(envs._NAME_RE.fullmatch(n) for n in scope):
        return None  # a name the index does not list (as `envs._env_sources`)
    changed = _changed_files_index(snapshot, known)
    found, read = set(changed.files_spelling(scope)), set(changed.files)
    for reference in known:
        for rel in reference.env_index().files_spelling(scope):
            if rel not in read and _digest(snapshot, rel) == _digest(reference, rel):
                found.add(rel)
    # the order of a walk with sorted folders: a folder's files before its subfolders
    return sorted(found, key=lambda rel: (*rel.split("/")[:-1], "\0" + rel.split("/")[-1]))


def _changed_files_index(snapshot: Snapshot, references: list[Snapshot]):
    """The `EnvIndex` of the release's source files that no reference has as they are
    (by sha256), kept in the store per release and references."""
    from driftaudit.pysource import read_bytes
    from driftaudit.snapshot.surfaces import envs
    from driftaudit.snapshot.surfaces._files import _SKIP_DIRS, is_test_file

    def compute() -> dict:
        assert snapshot.tree.manifest is not None
        files: list[str] = []
        names: dict[str, list[int]] = {}
        for rel, entry in snapshot.tree.manifest.files.items():
            *folders, base = rel.split("/")
            if not (folders[:1] == ["sglang"] and base.endswith(".py")) or is_test_file(base):
                continue
            if any(f in _SKIP_DIRS or f.startswith(".") for f in folders):
                continue  # as the tree's walk (`_files._candidates`)
            if any(_digest(r, rel) == entry[2] for r in references):
                continue
            try:
                text = read_bytes(snapshot.tree.root / rel).decode("utf-8", errors="replace")
            except OSError:
                continue
            for spelled in dict.fromkeys(envs._NAME_RE.findall(text)):
                names.setdefault(spelled, []).append(len(files))
            files.append(rel)
        return envs.EnvIndex(files, names).to_json()

    others = question(*(r.digest for r in references))
    return snapshot.kept(
        key("envdelta", STATES_VERSION, snapshot.digest, others),
        compute,
        envs.EnvIndex.from_json,
    )


def _digest(snapshot: Snapshot, rel: str) -> str | None:
    manifest = snapshot.tree.manifest
    entry = manifest.files.get(rel) if manifest is not None else None
    return entry[2] if entry else None


def _route(snapshot: Snapshot, path: str) -> State:
    """A route as DA501 reads it: live when a handler answers it, not only an error
    stub; placeholders unnamed (`snapshot/surfaces/http.py::route_key`)."""
    from driftaudit.snapshot.surfaces.http import route_key

    key = route_key(path)
    live = [r for r in snapshot.surface("routes") if route_key(r.path) == key and not r.stub]
    if not live:
        return State()
    methods = ",".join(sorted({m for r in live for m in r.methods}))
    text = f"{methods} {live[0].path} -> {live[0].function}"
    return State("route", text, live[0].location, {"present": methods})


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
