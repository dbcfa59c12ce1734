"""Drift of sglang's non-Python surfaces, for `driftaudit diff`: HTTP routes, request
structs, meta_info keys, env vars, parser names and the wheel's requirements."""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.changes import Change
from driftaudit.drift.env_renames import EnvReplacement, find_replacement, mapped_to, similar
from driftaudit.snapshot import Snapshot
from driftaudit.snapshot.surfaces.envs import EnvVar
from driftaudit.snapshot.surfaces.requires_dist import diff_requirements


@dataclass
class RouteRemoved(Change):
    """`symbol` is the route path; `new_location`, when set, is the stub that only answers
    with an error (see `snapshot.surfaces.http`)."""

    code = codes.ROUTE_REMOVED

    def explain(self) -> str:
        if self.new_location:
            return f"HTTP route {self.symbol} only answers with an error now"
        return f"HTTP route {self.symbol} was removed"


@dataclass
class RouteMethodChanged(Change):
    gone: tuple[str, ...] = ()  # the methods the new route no longer accepts

    code = codes.ROUTE_METHOD_CHANGED

    def explain(self) -> str:
        return f"HTTP route {self.symbol} no longer accepts {', '.join(self.gone)}"


@dataclass
class RequestFieldRemoved(Change):
    """`symbol` is `Struct.field`."""

    code = codes.REQUEST_FIELD_REMOVED

    def explain(self) -> str:
        return f"request struct field {self.symbol} was removed"


@dataclass
class EnvVarUnused(Change):
    """`replacement`: the variable that takes over, when one does (see `env_renames`);
    `retired`: the new release still names it, but only in a removal notice (or its
    registry, never read), see `EnvVar.retired`."""

    replacement: EnvReplacement | None = None
    retired: str | None = None

    code = codes.ENV_VAR_UNUSED

    def explain(self) -> str:
        return f"environment variable {self.symbol} is no longer read" + self.instead()

    def instead(self) -> str:
        """The message's tail: "; now read as `SGLANG_Y`", or why not quite."""
        found = self.replacement
        if found is None:
            return f"; in the new release {self.retired}" if self.retired else ""
        if found.inverted:
            return f"; sglang now reads `{found.name}`, of the opposite sense"
        if found.how == "similar":
            return f"; probably now read as `{found.name}` (a similar new name)"
        return f"; now read as `{found.name}`"

    def as_dict(self) -> dict:
        data = super().as_dict()
        if self.replacement is not None:
            data["replacement"] = self.replacement.name
            data["replacement_kind"] = self.replacement.how
        return data


@dataclass
class ParserRemoved(Change):
    label: str = ""  # "tool-call" or "reasoning"

    code = codes.PARSER_REMOVED

    def explain(self) -> str:
        return f"{self.label} parser {self.symbol!r} is no longer registered"


@dataclass
class MetaInfoKeyRemoved(Change):
    """`symbol` is `meta_info.<key>`."""

    code = codes.META_INFO_KEY_REMOVED

    @property
    def key(self) -> str:
        return self.symbol.removeprefix("meta_info.")

    def explain(self) -> str:
        return f"meta_info key {self.key!r} is no longer written"


@dataclass
class RequirementChanged(Change):
    """`symbol` is the distribution name; `how` says what changed in its Requires-Dist."""

    how: str = ""
    old: str = ""
    new: str = ""

    code = codes.REQUIREMENT_CHANGED

    def explain(self) -> str:
        return f"requirement {self.symbol}: {self.how} ({self.old or '-'} -> {self.new or '-'})"


@dataclass
class RouteAdded(Change):
    code = codes.SURFACE_ADDED

    def explain(self) -> str:
        return f"HTTP route {self.symbol} is new"


@dataclass
class RequestFieldAdded(Change):
    code = codes.SURFACE_ADDED

    def explain(self) -> str:
        return f"request struct field {self.symbol} is new"


@dataclass
class EnvVarAdded(Change):
    code = codes.SURFACE_ADDED

    def explain(self) -> str:
        return f"environment variable {self.symbol} is new"


def env_var_unused(
    name: str, old: dict[str, EnvVar], new: dict[str, EnvVar]
) -> EnvVarUnused | None:
    """`name` had an effect in the old release and has none in the new one: it is read
    there (not only by a removal notice, see `EnvVar.retired`) and not here, or only by a
    removal notice here."""
    before, after = old.get(name), new.get(name)
    if before is None or before.retired or (after is not None and not after.retired):
        return None
    found = find_replacement(name, old, new)
    if found is not None:
        where = f"{new[found.name].file}:{new[found.name].line}"
    else:
        where = f"{after.file}:{after.line}" if after is not None else None
    retired = after.retired if after is not None else None
    return EnvVarUnused(name, f"{before.file}:{before.line}", where, found, retired)


def env_tables(
    old: Snapshot, new: Snapshot, names: set[str]
) -> tuple[dict[str, EnvVar], dict[str, EnvVar]]:
    """The entries of each tree's env-var surface that `env_var_unused` reads for
    `names`, as the whole surfaces have them (`Snapshot.env_vars`, by name): the names
    and the other spelling of their prefix, what the old tree aliases them to, and, for
    a name read in the old tree and not in the new one, the variables the new tree's
    file of that name spells whose names say the same (`find_replacement`'s candidates
    of a rename), in both."""
    old_envs = old.env_vars(names)
    aliases = {t for n in names if (t := mapped_to(n, old_envs))}
    new_envs = new.env_vars(names | aliases)
    unused = [
        n
        for n in names
        if n in old_envs and not old_envs[n].retired and (n not in new_envs or new_envs[n].retired)
    ]
    # a rename's candidates: the names of the file that read it, that say the same
    candidates = {c for n in unused for c in new.env_names_in(old_envs[n].file) if similar(n, c)}
    if candidates:
        new_envs.update(new.env_vars(candidates))
        old_envs.update(old.env_vars(candidates))
    return old_envs, new_envs


def surface_additions(old: Snapshot, new: Snapshot) -> list[Change]:
    """What the new release adds: routes, request-struct fields, SGLANG_* variables."""
    changes: list[Change] = []
    old_routes = _routes(old)
    for path, (_, where) in sorted(_routes(new).items()):
        if path not in old_routes:
            changes.append(RouteAdded(path, None, where))
    old_structs, new_structs = old.surface("request_structs"), new.surface("request_structs")
    for name, struct in sorted(new_structs.items()):
        before = old_structs.get(name)
        for field in struct.fields if before is not None else ():
            if field not in before.fields:
                where = f"{struct.file}:{struct.fields[field].line}"
                changes.append(RequestFieldAdded(f"{name}.{field}", None, where))
    old_envs = old.surface("env_vars")
    for name, env in sorted(new.surface("env_vars").items()):
        if name not in old_envs and name.startswith(("SGLANG_", "SGL_")):
            changes.append(EnvVarAdded(name, None, f"{env.file}:{env.line}"))
    return changes


def surface_changes(old: Snapshot, new: Snapshot) -> list[Change]:
    changes: list[Change] = []
    old_routes, new_routes = _routes(old), _routes(new)
    stubs = _stubs(old), _stubs(new)
    for path, (methods, where) in sorted(old_routes.items()):
        if path in stubs[0]:
            continue  # it only answered with an error already
        if path not in new_routes or path in stubs[1]:
            changes.append(RouteRemoved(path, where, stubs[1].get(path)))
        elif "*" not in new_routes[path][0] and not methods <= new_routes[path][0]:
            gone = tuple(sorted(methods - new_routes[path][0]))
            changes.append(RouteMethodChanged(path, where, new_routes[path][1], gone))
    old_structs, new_structs = old.surface("request_structs"), new.surface("request_structs")
    for name, struct in sorted(old_structs.items()):
        twin = new_structs.get(name)
        for field in struct.fields if twin is not None else ():
            if field not in twin.fields:
                where = f"{struct.file}:{struct.fields[field].line}"
                changes.append(RequestFieldRemoved(f"{name}.{field}", where, None))
    old_keys, new_keys = old.surface("meta_info_keys"), new.surface("meta_info_keys")
    for key, where in sorted(old_keys.items()):
        if key not in new_keys:
            changes.append(MetaInfoKeyRemoved(f"meta_info.{key}", where, None))
    old_envs, new_envs = old.surface("env_vars"), new.surface("env_vars")
    for name in sorted(old_envs):
        unused = env_var_unused(name, old_envs, new_envs)
        if unused is not None and name.startswith(("SGLANG_", "SGL_")):
            changes.append(unused)
    old_parsers, new_parsers = old.surface("parsers"), new.surface("parsers")
    for kind, label in (("tool_call", "tool-call"), ("reasoning", "reasoning")):
        before, after = getattr(old_parsers, kind), getattr(new_parsers, kind)
        for name, where in sorted(before.items()):
            if name not in after:
                changes.append(ParserRemoved(name, where, None, label))
    for item in diff_requirements(old.surface("requirements"), new.surface("requirements")):
        if item.get("extra"):
            continue
        before, after = item.get("old") or "", item.get("new") or ""
        changes.append(
            RequirementChanged(item["name"], None, "METADATA", item["change"], before, after)
        )
    return changes


def _stubs(snapshot: Snapshot) -> dict[str, str]:
    """path -> location, of the routes whose every handler only answers with an error."""
    table: dict[str, list] = {}
    for route in snapshot.surface("routes"):
        table.setdefault(route.path, []).append(route)
    return {p: rs[0].location for p, rs in table.items() if all(r.stub for r in rs)}


def _routes(snapshot: Snapshot) -> dict[str, tuple[set[str], str]]:
    table: dict[str, tuple[set[str], str]] = {}
    for route in snapshot.surface("routes"):
        methods, where = table.get(route.path, (set(), f"{route.file}:{route.line}"))
        table[route.path] = (methods | set(route.methods), where)
    return table
