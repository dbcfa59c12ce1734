"""Resolve a consumer TypeRef to an sglang class, with the old snapshot's annotations.

`batch.reqs` is typed through `ScheduleBatch.reqs: List[Req]`; a method call through
its return annotation; a constructor call gives an instance of its class; an attribute
of a consumer object through the consumer's attribute table (`UsageSet.fields`: how its
class annotates or assigns `self.x`), then on as any other TypeRef.
"""

from __future__ import annotations

from driftaudit.drift.returns import returned_class
from driftaudit.snapshot import Snapshot
from driftaudit.snapshot.api_model import Attribute, Class, Function
from driftaudit.usage.types import annotation_text_type

_MAX_DEPTH = 12
_VALUE_METHODS = {"get", "pop", "setdefault"}  # of a mapping: one of its values


class TypeResolver:
    def __init__(self, snapshot: Snapshot, fields: dict[str, dict[str, tuple]] | None = None):
        self.snapshot = snapshot
        self.fields = fields or {}  # the consumer's attribute table
        self._cache: dict = {}

    def stored(self, ref, depth: int = 0):
        """`ref` with the consumer objects' attributes in it followed through the
        attribute table to the TypeRef their class gives them; None for an attribute
        the table does not type (a consumer object's, or one its class sets itself)."""
        while ref is not None and depth <= _MAX_DEPTH:
            depth += 1
            if ref[0] == "field":
                ref = self.fields.get(ref[1], {}).get(ref[2])
                continue
            if ref[0] != "attr":
                return ref
            owner = self.stored(ref[1], depth)
            if owner is None or owner[0] not in ("obj", "self") or len(owner) < 2:
                return ref
            if owner[0] == "obj":
                ref = ("field", owner[1], ref[2])
            elif len(owner) > 3 and ref[2] in owner[2]:  # the subclass's own attribute
                row = self.fields.get(owner[3], {}).get(ref[2])
                if row is None:
                    return ref  # untyped by the subclass: as its sglang base types it
                ref = row
            else:
                return ("attr", owner, ref[2]) if owner is not ref[1] else ref
        return None

    def class_of(self, ref) -> str | None:
        """The canonical sglang class a TypeRef holds an instance of, or None."""
        resolved = self.resolve(ref)
        return resolved[1] if resolved and resolved[0] == "class" else None

    def resolve(self, ref, depth: int = 0):
        """TypeRef -> ("class", canonical) | ("list" | "map", resolved) | None."""
        if ref is None or depth > _MAX_DEPTH:
            return None
        if ref in self._cache:
            return self._cache[ref]
        self._cache[ref] = None  # cycle guard
        result = self._resolve(ref, depth)
        self._cache[ref] = result
        return result

    def _resolve(self, ref, depth: int):
        kind = ref[0]
        if kind in ("field", "attr", "obj"):
            followed = self.stored(ref)
            if followed is None or followed[0] == "obj":
                return None  # a consumer object, or its attribute of unknown type
            if followed != ref:
                return self.resolve(followed, depth + 1)
        if kind in ("path", "call"):
            found = self.snapshot.resolve(ref[1])
            if found is None or found.opaque:
                return None
            if isinstance(found.obj, Class):
                return ("class", found.canonical)
            if kind == "call" and isinstance(found.obj, Function):
                return self._returned(found.canonical, found.obj, depth)
            return None
        if kind == "self":
            for base in ref[1]:
                resolved = self.resolve(("path", base), depth + 1)
                if resolved:
                    return resolved
            return None
        if kind in ("list", "map"):
            inner = self.resolve(ref[1], depth + 1)
            return (kind, inner) if inner else None
        if kind in ("elem", "iter"):  # an item: a list's element, a mapping's value
            container = self.resolve(ref[1], depth + 1)
            wanted = ("list", "map") if kind == "elem" else ("list",)
            return container[1] if container and container[0] in wanted else None
        if kind in ("attr", "ret"):
            owner = self.resolve(ref[1], depth + 1)
            if kind == "ret" and owner and owner[0] == "map":
                if ref[2] == "values":
                    return ("list", owner[1])
                return owner[1] if ref[2] in _VALUE_METHODS else None
            if not owner or owner[0] != "class":
                return None
            found = self.snapshot.resolve(f"{owner[1]}.{ref[2]}")
            if found is None or found.opaque:
                return None
            member = found.obj
            if kind == "attr" and isinstance(member, Attribute):
                return self._annotation(member.type, depth)
            if isinstance(member, Function) and (kind == "ret" or "property" in member.labels):
                return self._returned(found.canonical, member, depth)
        return None

    def _returned(self, path: str, fn: Function, depth: int):
        """What a call returns: its annotation, else the class its returns all build."""
        if fn.returns:
            return self._annotation(fn.returns, depth)
        built = returned_class(self.snapshot, path, fn)
        return ("class", built) if built else None

    def _annotation(self, text: str | None, depth: int):
        return self.resolve(annotation_text_type(text), depth + 1)
