"""Resolution: what a dotted path names in one tree, following re-exports, star imports,
sglang's own imports and base classes (`Snapshot.resolve`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from driftaudit.snapshot.api_model import Alias, Class, Module, Obj

if TYPE_CHECKING:
    from driftaudit.snapshot.snapshot import Snapshot

_MAX_DEPTH = 25


@dataclass
class Resolved:
    """What a dotted path names in a snapshot."""

    path: str  # the dotted path as asked (or the prefix of it that resolved)
    obj: Obj | Module  # the object found: a Module, or a model object
    module: Module | None  # the module that defines it (for file:line)
    canonical: str  # where it is defined: sglang.srt.x.Class.meth
    opaque: bool = False  # outside sglang, or not knowable statically: stop here

    @property
    def location(self) -> str | None:
        if self.module is None:
            return None
        lineno = getattr(self.obj, "lineno", None)
        file = getattr(self.obj, "file", None) or self.module.file
        return f"{file}:{lineno}" if lineno else file


class Resolver:
    """The resolutions of one snapshot, each answered once."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self._answers: dict[str, tuple[Resolved | None, int]] = {}

    def resolve(self, path: str) -> Resolved | None:
        found, consumed = self.resolve_longest(path)
        return found if consumed == len(path.split(".")) or (found and found.opaque) else None

    def resolve_longest(self, path: str) -> tuple[Resolved | None, int]:
        """The longest prefix of `path` that resolves, and how many segments it has.

        An opaque result (outside sglang, or a module that does not parse) ends the
        walk: nothing more can be said about the rest of the path.
        """
        if path not in self._answers:
            self._answers[path] = self._resolve_segments(path.split("."), 0)
        return self._answers[path]

    def _resolve_segments(self, segments: list[str], depth: int) -> tuple[Resolved | None, int]:
        if not segments or segments[0] != "sglang" or depth > _MAX_DEPTH:
            return None, 0
        current = Resolved(
            "sglang", self.snapshot.module("sglang") or Module("sglang", ""), None, "sglang"
        )
        current.module = current.obj if isinstance(current.obj, Module) else None
        for index, segment in enumerate(segments[1:], start=1):
            step = self._member(current, segment, depth)
            if step is None:
                return current, index
            step.path = ".".join(segments[: index + 1])
            current = step
            if current.opaque:
                return current, len(segments)
        return current, len(segments)

    def _member(self, parent: Resolved, name: str, depth: int) -> Resolved | None:
        obj = parent.obj
        if isinstance(obj, Module):
            return self._module_member(obj, name, depth)
        if isinstance(obj, Class):
            return self._class_member(obj, parent, name, depth, set())
        return None  # attributes and functions: their members are not modelled

    def _module_member(self, module: Module, name: str, depth: int) -> Resolved | None:
        if module.parse_error:
            return Resolved("", module, module, f"{module.name}.{name}", opaque=True)
        member = module.members.get(name)
        if isinstance(member, Alias):
            return self._follow(member, module, depth)
        if member is not None:
            return Resolved("", member, module, f"{module.name}.{name}")
        submodule = f"{module.name}.{name}"
        if self.snapshot.is_module(submodule):
            sub = self.snapshot.module(submodule)
            if sub is not None:
                return Resolved("", sub, sub, submodule)
        for source in module.wildcards:
            if depth > _MAX_DEPTH:
                break
            source_module = self.snapshot.module(source)
            if source_module is None:
                continue  # a star import from outside sglang: its names are unknown
            exported = source_module.exports
            if exported is not None and name not in exported:
                continue
            if exported is None and name.startswith("_"):
                continue
            found = self._module_member(source_module, name, depth + 1)
            if found is not None:
                return found
        return None

    def _follow(self, alias: Alias, module: Module, depth: int) -> Resolved:
        """An import inside sglang: resolve its target (opaque if outside sglang)."""
        target = alias.target
        if target.split(".", 1)[0] != "sglang":
            return Resolved("", alias, module, target, opaque=True)
        found, consumed = self._resolve_segments(target.split("."), depth + 1)
        if found is not None and consumed == len(target.split(".")):
            return found
        if found is not None and found.opaque:
            return found
        # sglang imports something that is not there (guarded import, TYPE_CHECKING):
        # the name exists in the module, but what it is cannot be known.
        return Resolved("", alias, module, target, opaque=True)

    def _class_member(
        self, cls: Class, owner: Resolved, name: str, depth: int, seen: set[str]
    ) -> Resolved | None:
        member = cls.members.get(name)
        if member is not None:
            if isinstance(member, Alias):
                return Resolved("", member, owner.module, member.target, opaque=True)
            return Resolved("", member, owner.module, f"{owner.canonical}.{name}")
        seen.add(owner.canonical)
        for base in cls.bases:
            if base in seen or not base.startswith("sglang."):
                continue
            found = self.resolve(base) if depth < _MAX_DEPTH else None
            if found is not None and isinstance(found.obj, Class):
                hit = self._class_member(found.obj, found, name, depth + 1, seen)
                if hit is not None:
                    return hit
        return None
