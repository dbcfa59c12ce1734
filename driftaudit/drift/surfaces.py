"""Drift of sglang's non-Python surfaces, for `driftaudit diff`: HTTP routes, request
structs, meta_info keys, env vars, parser names and the wheel's requirements."""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit import rules
from driftaudit.drift.changes import Change
from driftaudit.snapshot import Snapshot
from driftaudit.snapshot.surfaces.requirements import diff_requirements


@dataclass
class SurfaceChange(Change):
    """A removed or changed surface item; `text` says what happened."""

    text: str = ""
    code: str = ""

    @property
    def rule(self):  # type: ignore[override]
        return rules.RULES[self.code]

    def explain(self) -> str:
        return self.text


def surface_changes(old: Snapshot, new: Snapshot) -> list[Change]:
    changes: list[Change] = []
    old_routes, new_routes = _routes(old), _routes(new)
    for path, (methods, where) in sorted(old_routes.items()):
        if path not in new_routes:
            changes.append(
                SurfaceChange(path, where, None, f"HTTP route {path} was removed", "DA501")
            )
        elif "*" not in new_routes[path][0] and not methods <= new_routes[path][0]:
            gone = ", ".join(sorted(methods - new_routes[path][0]))
            text = f"HTTP route {path} no longer accepts {gone}"
            changes.append(SurfaceChange(path, where, new_routes[path][1], text, "DA502"))
    old_structs, new_structs = old.surface("request_structs"), new.surface("request_structs")
    for name, struct in sorted(old_structs.items()):
        twin = new_structs.get(name)
        for field in struct.fields if twin is not None else ():
            if field not in twin.fields:
                text = f"request struct field {name}.{field} was removed"
                where = f"{struct.file}:{struct.fields[field].line}"
                changes.append(SurfaceChange(f"{name}.{field}", where, None, text, "DA503"))
    old_keys, new_keys = old.surface("meta_info_keys"), new.surface("meta_info_keys")
    for key, where in sorted(old_keys.items()):
        if key not in new_keys:
            text = f"meta_info key {key!r} is no longer written"
            changes.append(SurfaceChange(f"meta_info.{key}", where, None, text, "DA506"))
    old_envs, new_envs = old.surface("env_vars"), new.surface("env_vars")
    for name, env in sorted(old_envs.items()):
        if name not in new_envs and name.startswith(("SGLANG_", "SGL_")):
            text = f"environment variable {name} is no longer read"
            changes.append(SurfaceChange(name, f"{env.file}:{env.line}", None, text, "DA504"))
    old_parsers, new_parsers = old.surface("parsers"), new.surface("parsers")
    for kind, label in (("tool_call", "tool-call"), ("reasoning", "reasoning")):
        before, after = getattr(old_parsers, kind), getattr(new_parsers, kind)
        for name, where in sorted(before.items()):
            if name not in after:
                text = f"{label} parser {name!r} is no longer registered"
                changes.append(SurfaceChange(name, where, None, text, "DA505"))
    for item in diff_requirements(old.surface("requirements"), new.surface("requirements")):
        if item.get("extra"):
            continue
        before, after = item.get("old") or "", item.get("new") or ""
        text = f"requirement {item['name']}: {item['change']} ({before or '-'} -> {after or '-'})"
        changes.append(SurfaceChange(item["name"], None, "METADATA", text, "DA508"))
    return changes


def _routes(snapshot: Snapshot) -> dict[str, tuple[set[str], str]]:
    table: dict[str, tuple[set[str], str]] = {}
    for route in snapshot.surface("routes"):
        methods, where = table.get(route.path, (set(), f"{route.file}:{route.line}"))
        table[route.path] = (methods | set(route.methods), where)
    return table
