"""`Differ`: what changed about a name between two snapshots.

Asked path by path (`reference_change`, `signature_changes`, `return_change`) so a
consumer audit only loads what it touches, or for the whole tree (`all_changes`),
the changelog of the upgrade (`driftaudit diff`).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator

from driftaudit.drift.changes import (
    Change,
    DefaultChanged,
    EnumMemberRemoved,
    MemberRemoved,
    ModuleRemoved,
    ParameterAdded,
    ParameterMoved,
    ParameterRemoved,
    ParameterRenamed,
    RequiredParameterAdded,
    ReturnArityChanged,
    ReturnBecameObject,
    SymbolMoved,
    SymbolRelocated,
    SymbolRemoved,
)
from driftaudit.drift.deprecations import deprecated_in
from driftaudit.drift.effective import effective_in, parsed, tree_reads
from driftaudit.drift.gates import never_runs, read_conditions, tree_conditions
from driftaudit.drift.literals import UNKNOWN, value_of
from driftaudit.drift.relocations import relocated
from driftaudit.drift.returns import return_arity, returned_object
from driftaudit.pysource import dotted
from driftaudit.snapshot import Resolved, Snapshot
from driftaudit.snapshot.api_model import (
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Alias,
    Class,
    Function,
    Module,
    Obj,
    Param,
)
from driftaudit.store import key

_VARIADIC = (VAR_POSITIONAL, VAR_KEYWORD)
ATTR_READS_VERSION = "2"
ATTR_GATES_VERSION = "2"
# a limit's default that means "no limit": a new default None may mean the same
_UNBOUNDED = {"sys.maxsize", "math.inf", "float('inf')", 'float("inf")', "inf"}


def callable_signature(obj: Obj | Module | None, snapshot: Snapshot | None = None):
    """The function a call runs: the function itself, or a class's constructor (with
    `snapshot`, a dataclass's fields include those of its dataclass bases)."""
    if isinstance(obj, Function):
        return obj
    if isinstance(obj, Class):
        init = obj.members.get("__init__")
        if isinstance(init, Function):
            return init
        if "dataclass" in obj.labels:
            return dataclass_init(obj, snapshot)
    return None


def _reader(snapshot: Snapshot, symbol: str):
    """`effective.tree_reads` of the tree, in the top-level package that defines `symbol`
    (`sglang/srt`, `sglang/multimodal_gen`: separate programs, and a walk of one is a
    fraction of the tree's), kept in the snapshot store."""
    under = "/".join(symbol.split(".")[:2])

    def reads(holder: str, attr: str) -> list[str] | None:
        entry = key("attr_reads", ATTR_READS_VERSION, snapshot.digest, under, holder, attr)
        return snapshot.kept(
            entry, lambda: tree_reads(snapshot.tree.root, holder, attr, under), _texts
        )

    return reads


def _gates(snapshot: Snapshot, symbol: str):
    """`gates.tree_conditions` of the tree (below the package `_reader` reads),
    kept in the snapshot store."""
    under = "/".join(symbol.split(".")[:2])

    def gates(holder: str, attr: str) -> list[list[str]] | None:
        entry = key("attr_gates", ATTR_GATES_VERSION, snapshot.digest, under, holder, attr)
        return snapshot.kept(
            entry, lambda: tree_conditions(snapshot.tree.root, holder, attr, under), _conjunctions
        )

    return gates


def _conjunctions(data) -> list[list[str]] | None:
    if data is not None and not (
        isinstance(data, list) and all(isinstance(r, list) and _texts(r) is not None for r in data)
    ):
        raise TypeError("not a list of lists of conditions")
    return data


def _texts(data) -> list[str] | None:
    if data is not None and not (isinstance(data, list) and all(isinstance(t, str) for t in data)):
        raise TypeError("not a list of expressions")
    return data


def _comparable(text: str) -> tuple:
    """A value's key (`{}` and `dict()` are one value: its literal, else its text) and
    its text."""
    value = value_of(text, {})
    key = ("text", text) if value is UNKNOWN else ("value", type(value).__name__, value)
    return key, text


def _dataclass_bases(cls: Class, snapshot: Snapshot | None, depth: int = 0) -> list[Class]:
    """The dataclass bases of `cls`, the farthest first (the order fields are made in)."""
    if snapshot is None or depth > 5:
        return []
    found = []
    for base in reversed(cls.bases):
        resolved = snapshot.resolve(base) if base.startswith("sglang.") else None
        if resolved is None or resolved.opaque or not isinstance(resolved.obj, Class):
            continue
        if "dataclass" in resolved.obj.labels:
            found += _dataclass_bases(resolved.obj, snapshot, depth + 1) + [resolved.obj]
    return found


def dataclass_init(cls: Class, snapshot: Snapshot | None = None) -> Function:
    """The `__init__` a @dataclass generates from its annotated fields (and, with
    `snapshot`, the fields it inherits from dataclass bases)."""
    params = [Param("self", "positional or keyword")]
    fields: dict[str, Obj] = {}
    for owner in [*_dataclass_bases(cls, snapshot), cls]:
        for name, member in owner.members.items():
            # a redefined field keeps its first place; a subclass's plain `self.rid = ...`
            # (no annotation) or method leaves an inherited field in the constructor
            if _is_field(member):
                fields[name] = member
    for member in fields.values():
        value = getattr(member, "value", None) or ""
        if "init=False" in value.replace(" ", ""):
            continue
        annotation = member.annotation
        required = value == "" or (value.startswith("field(") and "default" not in value)
        default = None if required else _field_default(value)
        params.append(Param(member.name, "positional or keyword", default, annotation))
    return Function("__init__", cls.lineno, params)


def _field_default(value: str) -> str:
    """The default a field declares: `field(default=None, kw_only=True)` is `None` and
    `field(default_factory=list)` is `list()`, so moving a field into `field(...)` does
    not read as a changed default."""
    try:
        call = ast.parse(value, mode="eval").body
    except SyntaxError:
        return value
    if not (isinstance(call, ast.Call) and (dotted(call.func) or "").endswith("field")):
        return value
    for keyword in call.keywords:
        if keyword.arg == "default":
            return ast.unparse(keyword.value)
        if keyword.arg == "default_factory":
            return f"{ast.unparse(keyword.value)}()"
    return value


def _is_field(member: Obj) -> bool:
    """An annotated class attribute a @dataclass makes a field of (not a ClassVar, not a
    @property's return annotation)."""
    annotation = getattr(member, "annotation", None)
    if member.kind != "attribute" or annotation is None or "ClassVar" in annotation:
        return False
    return "property" not in member.labels


def _name_similarity(old: str, new: str) -> float:
    """1.0 when one name contains the other (`fill_ids` in `full_untruncated_fill_ids`)."""
    old_l, new_l = old.lower().strip("_"), new.lower().strip("_")
    if len(old_l) >= 4 and (old_l in new_l or new_l in old_l):
        return 1.0
    return difflib.SequenceMatcher(None, old_l, new_l).ratio()


def _tokens(module: str) -> set[str]:
    return set(re.split(r"[._]", module)) - {"sglang", "srt", ""}


def _common_prefix(module: str, other: str) -> int:
    """How many leading package names two dotted module paths share."""
    shared = 0
    for a, b in zip(module.split("."), other.split("."), strict=False):
        if a != b:
            break
        shared += 1
    return shared


class Differ:
    def __init__(self, old: Snapshot, new: Snapshot):
        self.old = old
        self.new = new
        self._reference_cache: dict[str, Change | None] = {}
        # a module's syntax tree, per tree and module, for the effective values
        self._parsed: dict[tuple[str, str], ast.Module | None] = {}
        self._new_reads: dict[tuple[str, str], list[list[str]] | None] = {}

    # ---- does the name still exist? ----------------------------------------------

    def reference_change(self, path: str) -> Change | None:
        """The change that makes `path` (as a consumer wrote it) unreachable, if any.

        Only the part of `path` that resolves in the old tree is checked: a name that
        did not exist before (a consumer's own attribute) is not a break.
        """
        if path not in self._reference_cache:
            self._reference_cache[path] = self._reference_change(path)
        return self._reference_cache[path]

    def _reference_change(self, path: str) -> Change | None:
        segments = path.split(".")
        old_found, consumed = self.old.resolve_longest(path)
        if old_found is None or consumed < 2:
            return None
        prefix = segments[:consumed]
        new_found, reached = self.new.resolve_longest(".".join(prefix))
        if new_found is not None and (reached >= consumed or new_found.opaque):
            return None
        missing = ".".join(prefix[: reached + 1])
        if reached + 1 < consumed and self.new.resolve(missing) is None:
            # a name from a module that is gone (or from a submodule of a package that
            # is gone: the first segment past the modules is the name): it may live on
            for end in range(reached + 2, consumed + 1):
                name_path = ".".join(prefix[:end])
                old_name = self.old.resolve(name_path)
                if old_name is None:
                    break
                if isinstance(old_name.obj, Module):
                    continue
                target = self.find_moved(prefix[end - 1], old_name)
                if target is not None:
                    return SymbolMoved(
                        name_path, old_name.location, target.location, target.canonical
                    )
                found = relocated(self.old, self.new, prefix[end - 1], old_name)
                if found is not None:
                    where = self.new.resolve(found[0])
                    location = where.location if where else None
                    return SymbolRelocated(name_path, old_name.location, location, *found)
                break
        return self.removal(missing)

    def removal(self, missing: str) -> Change | None:
        """Describe why `missing` (resolvable in old, not in new) is gone."""
        old_obj = self.old.resolve(missing)
        if old_obj is None:
            return None
        old_loc = old_obj.location
        if isinstance(old_obj.obj, Module):
            return ModuleRemoved(missing, old_loc, None)
        class_path, _, name = missing.rpartition(".")
        parent = self.old.resolve(class_path)
        if parent is not None and isinstance(parent.obj, Class):
            enum_member = parent.obj.is_enum and not isinstance(old_obj.obj, Function)
            cls = EnumMemberRemoved if enum_member else MemberRemoved
            change = cls(missing, old_loc, self._class_location(class_path))
            change.candidate, change.candidate_kind = self._member_candidate(
                parent.obj, class_path, name, old_obj.obj
            )
            return change
        target = self.find_moved(missing.rpartition(".")[2], old_obj)
        if target is not None:
            return SymbolMoved(missing, old_loc, target.location, target.canonical)
        found = relocated(self.old, self.new, missing.rpartition(".")[2], old_obj)
        if found is not None:
            where = self.new.resolve(found[0])
            return SymbolRelocated(missing, old_loc, where.location if where else None, *found)
        return SymbolRemoved(missing, old_loc, None)

    def _member_candidate(self, old_cls: Class, class_path: str, name: str, old_obj):
        """A member added to the class under a similar name, or a function elsewhere."""
        new_cls = self.new.resolve(class_path)
        if new_cls is not None and isinstance(new_cls.obj, Class):
            best, best_score = None, 0.0
            for candidate, obj in new_cls.obj.members.items():
                if candidate in old_cls.members or obj.kind != old_obj.kind:
                    continue
                score = _name_similarity(name, candidate)
                if score > best_score:
                    best, best_score = candidate, score
            if best is not None and best_score >= 0.7:
                return f"{new_cls.canonical}.{best}", "renamed"
        if isinstance(old_obj, Function):
            for definition in self.new.definitions(name):
                if isinstance(definition.obj, Function):
                    return definition.canonical, "moved"
        return None, ""

    def _class_location(self, class_path: str) -> str | None:
        found = self.new.resolve(class_path)
        return found.location if found else None

    def find_moved(self, name: str, old: Resolved) -> Resolved | None:
        """The compatible definition of `name` elsewhere in the new tree whose module is
        closest to the old one: the longest common package path first, then the most
        shared name parts (`dp_mixin` ~ `dp_attn`), then the shortest."""
        old_module = old.canonical.rpartition(".")[0]
        best, best_score = None, None
        for candidate in self.new.definitions(name):
            if not _compatible(old.obj, candidate.obj):
                continue
            module = candidate.canonical.rpartition(".")[0]
            score = (
                _common_prefix(module, old_module),
                len(_tokens(module) & _tokens(old_module)),
                -len(module),
            )
            if best_score is None or score > best_score:
                best, best_score = candidate, score
        return best

    # ---- did its signature or return shape change? -------------------------------

    def signature_changes(self, symbol: str, old: Function, new: Function, locs) -> list[Change]:
        old_loc, new_loc = locs
        changes: list[Change] = []
        old_names = [p.name for p in old.params]
        new_names = [p.name for p in new.params]
        renamed_to: set[str] = set()
        for index, param in enumerate(old.params):
            if param.kind in _VARIADIC or param.name in new_names:
                continue
            twin = new.params[index] if index < len(new.params) else None
            if (
                twin is not None
                and twin.name not in old_names
                and twin.kind == param.kind
                and twin.kind not in _VARIADIC
                and _same_neighbours(old_names, new_names, index)
            ):
                renamed_to.add(twin.name)
                changes.append(ParameterRenamed(symbol, old_loc, new_loc, param.name, twin.name))
            else:
                changes.append(ParameterRemoved(symbol, old_loc, new_loc, param.name))
        for param in new.params:
            if param.name not in old_names and param.required and param.name not in renamed_to:
                changes.append(RequiredParameterAdded(symbol, old_loc, new_loc, param.name))
        old_slots, new_slots = _slots(old), _slots(new)
        shifted: list[Param] = []  # same kind, new position (something was inserted)
        for param in old.params:
            twin = new.param(param.name)
            if twin is None or param.kind in _VARIADIC:
                continue
            before, after = old_slots[param.name], new_slots[param.name]
            if before.split()[0] != after.split()[0]:
                changes.append(ParameterMoved(symbol, old_loc, new_loc, param.name, before, after))
            elif before != after:
                shifted.append(param)
            elif param.default is not None and twin.default is not None:
                before = self._constant(self.old, symbol, param.default)
                after = self._constant(self.new, symbol, twin.default)
                if before != after and not self._retired(param.name, after, new_loc):
                    used = self._effects(symbol, param.name, param.default, twin.default)
                    if used is not None and used[0][0] == used[1][0]:
                        continue  # both end up using the same value
                    conditions = self._conditions(self.new, symbol, param.name)
                    if never_runs(conditions, {param.name: after}) and (
                        before in _UNBOUNDED
                        or never_runs(
                            self._conditions(self.old, symbol, param.name), {param.name: before}
                        )
                    ):
                        # both defaults keep every use off (None -> "none" where each
                        # release tests for its own), or None turns a limit off as the
                        # old maximum did
                        continue
                    change = DefaultChanged(
                        symbol,
                        old_loc,
                        new_loc,
                        param.name,
                        _shown(param.default, before),
                        _shown(twin.default, after),
                    )
                    if used is not None and used[1][1] not in (twin.default, after):
                        change.new_value = used[1][1]
                    change.conditions = conditions
                    changes.append(change)
        if shifted:
            first = shifted[0].name
            changes.append(
                ParameterMoved(
                    symbol,
                    old_loc,
                    new_loc,
                    first,
                    old_slots[first],
                    new_slots[first],
                    len(shifted) - 1,
                )
            )
        return changes

    def _effects(self, symbol: str, param: str, old: str, new: str) -> tuple | None:
        """What each release ends up using for `param` left out (a new None default the
        code replaces by the old value, `x or {}`: see `effective`), as `_comparable`
        gives it; None when either is not known."""
        values = []
        for snapshot, default in ((self.old, old), (self.new, new)):
            value = self._effective(snapshot, symbol, param, default)
            if value is None:
                return None
            values.append(_comparable(self._constant(snapshot, symbol, value)))
        return tuple(values)

    def _effective(self, snapshot: Snapshot, symbol: str, param: str, default: str) -> str | None:
        """The value the callable `symbol` of `snapshot` uses for `param` left out at
        `default` (its source text; None: not known)."""
        found = self._source_of(snapshot, symbol)
        if found is None:
            return None
        tree, obj = found
        reader = _reader(snapshot, symbol)
        return effective_in(tree, obj.lineno or 0, obj.name, param, default, reader)

    def new_reads(self, symbol: str, param: str) -> list[list[str]] | None:
        """Where the new release's callable `symbol` reads `param` (`read_conditions`),
        once per run."""
        if (symbol, param) not in self._new_reads:
            self._new_reads[symbol, param] = self._conditions(self.new, symbol, param)
        return self._new_reads[symbol, param]

    def _conditions(self, snapshot: Snapshot, symbol: str, param: str) -> list[list[str]] | None:
        """Where the callable `symbol` of `snapshot` reads `param`: `read_conditions`."""
        found = self._source_of(snapshot, symbol)
        if found is None:
            return None
        tree, obj = found
        return read_conditions(tree, obj.lineno or 0, obj.name, param, _gates(snapshot, symbol))

    def _source_of(
        self, snapshot: Snapshot, symbol: str
    ) -> tuple[ast.Module, Function | Class] | None:
        """The parsed module defining the callable `symbol`, and what a call runs: the
        function, a class's own `__init__`, or a dataclass."""
        found = snapshot.resolve(symbol)
        if found is None or found.opaque or found.module is None:
            return None
        obj = found.obj
        if isinstance(obj, Class):
            init = obj.members.get("__init__")
            if isinstance(init, Function):
                obj = init
            elif "dataclass" not in obj.labels:
                return None  # a constructor inherited from elsewhere: not read here
        if not isinstance(obj, (Function, Class)) or not obj.lineno:
            return None
        at = (snapshot.digest, found.module.name)
        if at not in self._parsed:
            source = snapshot.source(found.module.name)
            self._parsed[at] = None if source is None else parsed(source)
        tree = self._parsed[at]
        return None if tree is None else (tree, obj)

    def _retired(self, name: str, new_default: str, new_loc: str | None) -> bool:
        """A parameter the new release deprecates, now defaulting to None (not passed):
        a caller that leaves it out sees no default (see `deprecations`)."""
        if new_default != "None":
            return False
        return name in deprecated_in(self.new, new_loc)

    def _constant(self, snapshot: Snapshot, symbol: str, default: str) -> str:
        """A default that names a module constant (`DEFAULT_BS`, `envs.X`): its value."""
        if not default.replace(".", "_").isidentifier() or default in ("None", "True", "False"):
            return default
        found = snapshot.resolve(symbol)
        if found is None or found.module is None:
            return default
        value = snapshot.resolve(f"{found.module.name}.{default}")
        obj = value.obj if value is not None and not value.opaque else None
        if obj is not None and getattr(obj, "value", None) and "module-attribute" in obj.labels:
            return obj.value
        return default

    def return_change(
        self, symbol: str, old: Function, new: Function, locs, paths=None
    ) -> Change | None:
        """A new number of returned values, or a tuple that became one object.

        `paths`: where the old and the new function are defined (default: `symbol`),
        to follow `return helper(...)` from there."""
        old_path, new_path = paths or (symbol, symbol)
        old_arity = return_arity(self.old, old_path, old)
        new_arity = return_arity(self.new, new_path, new)
        if old_arity is not None and new_arity is not None and old_arity != new_arity:
            elements = new.return_elements if new.return_tuples else None
            return ReturnArityChanged(symbol, *locs, old_arity, new_arity, elements)
        if old_arity and old_arity > 1 and new_arity is None:
            returned = returned_object(self.new, new, new_path)
            if returned is not None and returned_object(self.old, old, old_path) is None:
                return ReturnBecameObject(symbol, *locs, old_arity, *returned)
        return None

    def changes_of(self, path: str) -> list[Change]:
        """Signature and return changes of the function or class at `path`."""
        old, new = self.old.resolve(path), self.new.resolve(path)
        if old is None or new is None or old.opaque or new.opaque:
            return []
        old_fn = callable_signature(old.obj, self.old)
        new_fn = callable_signature(new.obj, self.new)
        if old_fn is None or new_fn is None:
            return []
        locs = (function_location(old, old_fn), function_location(new, new_fn))
        changes = self.signature_changes(path, old_fn, new_fn, locs)
        arity = self.return_change(path, old_fn, new_fn, locs, (old.canonical, new.canonical))
        added = parameter_additions(path, old_fn, new_fn, locs)
        return changes + ([arity] if arity else []) + added

    # ---- the whole changelog -----------------------------------------------------

    def all_changes(self, prefix: str | None = None) -> Iterator[Change]:
        """Every change to a module, a module-level definition or a class member
        (of the modules under `prefix` only, when given)."""
        if prefix is None:
            self.new.load_all()
            modules = self.old.load_all()
        else:
            names = [n for n in self.old.files if n == prefix or n.startswith(prefix + ".")]
            modules = [m for m in map(self.old.module, names) if m is not None]
        for module in modules:
            if not self.new.is_module(module.name):
                yield ModuleRemoved(module.name, module.file, None)
                continue
            for name, obj in module.members.items():
                if isinstance(obj, Alias):
                    continue
                path = f"{module.name}.{name}"
                change = self.reference_change(path)
                if change is not None:
                    yield change
                    continue
                yield from self.changes_of(path)
                if isinstance(obj, Class):
                    yield from self._class_changes(path, obj)

    def _class_changes(self, path: str, cls: Class) -> Iterator[Change]:
        for name, member in cls.members.items():
            if isinstance(member, Alias):
                continue
            member_path = f"{path}.{name}"
            change = self.reference_change(member_path)
            if change is not None:
                yield change
            elif isinstance(member, Function):
                yield from self.changes_of(member_path)


def function_location(found: Resolved, fn: Function) -> str | None:
    if found.module is None:
        return None
    lineno = fn.lineno or getattr(found.obj, "lineno", None)
    return f"{found.module.file}:{lineno}" if lineno else found.module.file


def parameter_additions(symbol: str, old: Function, new: Function, locs) -> list[Change]:
    """Optional and keyword-only parameters new in the release (a renamed one is not:
    it takes an old one's place)."""
    old_names = {p.name for p in old.params}
    added = []
    for index, param in enumerate(new.params):
        if param.name in old_names or param.required or param.kind in _VARIADIC:
            continue
        twin = old.params[index] if index < len(old.params) else None
        if twin is not None and twin.name not in {p.name for p in new.params}:
            continue  # renamed in place
        keyword_only = param.kind == "keyword-only"
        added.append(ParameterAdded(symbol, *locs, param.name, param.default, keyword_only))
    return added


def _shown(text: str, value: str) -> str:
    return text if text == value else f"{text} (= {value})"


def _same_neighbours(old: list[str], new: list[str], index: int) -> bool:
    """A rename in place: the parameters either side are the same in both lists."""
    for near in (index - 1, index + 1):
        inside_old, inside_new = 0 <= near < len(old), 0 <= near < len(new)
        if inside_old != inside_new or (inside_old and old[near] != new[near]):
            return False
    return True


def _slots(fn: Function) -> dict[str, str]:
    """Where each parameter sits: `position 2`, `keyword-only`, `positional-only 0`."""
    slots, position = {}, 0
    for param in fn.params:
        if param.positional:
            label = "positional-only" if param.kind == "positional-only" else "position"
            slots[param.name] = f"{label} {position}"
            position += 1
        else:
            slots[param.name] = param.kind
    return slots


def _compatible(old: Obj | Module, new: Obj | Module) -> bool:
    """Could `new` stand in for `old`? Same kind; a function (a class's constructor)
    accepts every old call the same way and returns the same shape."""
    if old.kind != new.kind:
        return False
    old_fn, new_fn = callable_signature(old), callable_signature(new)
    if old_fn is None or new_fn is None:
        return True
    old_slots, new_slots = _slots(old_fn), _slots(new_fn)
    for param in old_fn.params:
        if param.kind in _VARIADIC:
            continue
        if param.name not in new_slots:
            if not new_fn.accepts_var_keyword:
                return False
        elif not _binds_alike(old_slots[param.name], new_slots[param.name]):
            return False  # a positional argument would bind elsewhere
    old_required = {p.name for p in old_fn.params if p.required}
    if any(p.name not in old_required for p in new_fn.params if p.required):
        return False  # calls that leave it out fail
    old_arity, new_arity = old_fn.return_arity, new_fn.return_arity
    return old_arity is None or new_arity is None or old_arity == new_arity


def _binds_alike(old_slot: str, new_slot: str) -> bool:
    """Does an argument passed for the old parameter reach the same new one?"""
    if old_slot == "keyword-only":
        return not new_slot.startswith("positional-only")  # passed by keyword
    if old_slot.startswith("position "):  # positionally or by keyword
        return new_slot == old_slot
    return new_slot.split()[-1] == old_slot.split()[-1] and new_slot.startswith("posi")
