"""Where a name went that is gone with its module, under another name.

Asked only when no definition of the same name fits (`Differ.find_moved`). The search
reads the modules the new release adds and the new modules of the old one's package
(where a moved name lands), not the whole tree:

- a class renamed on the way: the same constructor parameters and at least 60 % of the
  same members;
- a module function that became a staticmethod or classmethod: a method of that name,
  so labelled, whose parameters (without `cls`) bind the same calls.
"""

from __future__ import annotations

from driftaudit.snapshot import Resolved, Snapshot
from driftaudit.snapshot.api_model import Class, Function

_MIN_SHARED = 0.6
_MAX_MODULES = 400  # an upgrade that adds more is a restructuring: not searched


def relocated(old: Snapshot, new: Snapshot, name: str, found: Resolved) -> tuple | None:
    """(new canonical path, how) for `found` (a class or function of the old tree)."""
    obj = found.obj
    if not isinstance(obj, (Class, Function)):
        return None
    for module_name in _candidate_modules(old, new, found.canonical):
        module = new.module(module_name)
        if module is None or module.parse_error:
            continue
        for cls_name, cls in module.members.items():
            if not isinstance(cls, Class):
                continue
            if isinstance(obj, Function):
                member = cls.members.get(name)
                how = _as_method(obj, member)
                if how:
                    return f"{module_name}.{cls_name}.{name}", how
            elif cls_name != name and _renamed_class(obj, cls):
                return f"{module_name}.{cls_name}", "renamed"
    return None


def _candidate_modules(old: Snapshot, new: Snapshot, canonical: str) -> list[str]:
    added = [m for m in new.files if m not in old.files]
    if len(added) > _MAX_MODULES:
        return []
    package = canonical.rsplit(".", 2)[0]
    near = [m for m in added if m.startswith(package + ".")]
    return near + [m for m in added if not m.startswith(package + ".")]


def _as_method(fn: Function, member) -> str | None:
    if not isinstance(member, Function):
        return None
    kind = next((k for k in ("staticmethod", "classmethod") if k in member.labels), None)
    if kind is None:
        return None
    old = [(p.name, p.kind, p.required) for p in fn.params]
    new = [(p.name, p.kind, p.required) for p in member.bound_params]
    return kind if old == new else None


def _renamed_class(old: Class, new: Class) -> bool:
    old_init, new_init = old.members.get("__init__"), new.members.get("__init__")
    if not isinstance(old_init, Function) or not isinstance(new_init, Function):
        return False
    old_params = [p.name for p in old_init.params]
    if len(old_params) < 2 or old_params != [p.name for p in new_init.params]:
        return False
    names_old, names_new = set(old.members), set(new.members)
    shared = len(names_old & names_new) / max(len(names_old | names_new), 1)
    return shared >= _MIN_SHARED
