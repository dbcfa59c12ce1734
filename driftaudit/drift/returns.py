"""What a function returns, as far as unpacking it is concerned.

The return statements say it first (`return a, b`); a return that hands on another
function's result (`return helper(x)`, `return self._forward_raw(x)`) is followed, up to
3 calls deep; the return annotation (`-> Tuple[A, B]`) fills in when the body does not
tell. A function annotated to return an sglang class that is not a tuple (a dataclass
such as `ModelRunnerOutput`) returns one object: it cannot be unpacked.
"""

from __future__ import annotations

from driftaudit.snapshot import Snapshot
from driftaudit.snapshot.api_model import Class, Function

_DEPTH = 3
_TUPLES = ("Tuple[", "tuple[", "typing.Tuple[", "builtins.tuple[")


def return_arity(snapshot: Snapshot, path: str, fn: Function, depth: int = 0) -> int | None:
    """The number of values every return gives, or None if not one fixed number."""
    lengths = set(fn.return_tuples)
    for callee in fn.return_calls:
        found = _callee(snapshot, path, callee) if depth < _DEPTH else None
        arity = return_arity(snapshot, *found, depth + 1) if found else None
        if arity is None:
            return annotation_arity(fn.returns) if not lengths else None
        lengths.add(arity)
    if len(lengths) == 1:
        return lengths.pop()
    return annotation_arity(fn.returns) if not lengths else None


def annotation_arity(annotation: str | None) -> int | None:
    """`Tuple[A, B]` -> 2; None for `Tuple[A, ...]`, a union or anything else."""
    if not annotation or not annotation.startswith(_TUPLES) or not annotation.endswith("]"):
        return None
    inner = annotation[annotation.index("[") + 1 : -1]
    parts, depth, start = [], 0, 0
    for index, char in enumerate(inner):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:index].strip())
            start = index + 1
    parts.append(inner[start:].strip())
    if "..." in parts or not all(parts):
        return None
    return len(parts)


def returned_object(
    snapshot: Snapshot, fn: Function, path: str | None = None
) -> tuple[str, list[str]] | None:
    """(class, its fields) when the annotation names an sglang class whose instances
    cannot be unpacked: no `__iter__`, not a tuple or NamedTuple. Without an annotation,
    with `path` (where `fn` is defined): the class every return builds."""
    returns = fn.returns
    if not returns and path is not None:
        returns = returned_class(snapshot, path, fn)
    if not returns or "[" in returns or "|" in returns:
        return None
    found = snapshot.resolve(returns)
    if found is None or found.opaque or not isinstance(found.obj, Class):
        return None
    cls = found.obj
    if "__iter__" in cls.members or any(_tuple_like(b) for b in cls.bases):
        return None
    fields = [
        name
        for name, member in cls.members.items()
        if member.kind == "attribute" and not name.startswith("_")
    ]
    return found.canonical, fields


def _tuple_like(base: str) -> bool:
    short = base.rpartition(".")[2]
    return short in ("tuple", "Tuple", "NamedTuple", "list", "Sequence") or "Enum" in short


def _callee(snapshot: Snapshot, path: str, callee: str) -> tuple[str, Function] | None:
    """`helper` in the function's module, `self.meth`/`cls.meth` in its class."""
    found = _callee_target(snapshot, path, callee)
    if found is None or not isinstance(found.obj, Function):
        return None
    return found.canonical, found.obj


def _callee_target(snapshot: Snapshot, path: str, callee: str):
    """What a returned call's callee names, as the function's module or class sees it."""
    if callee == "?":
        return None
    parent = path.rpartition(".")[0]
    head, _, rest = callee.partition(".")
    owner = snapshot.resolve(parent)
    in_class = owner is not None and isinstance(owner.obj, Class)
    if head in ("self", "cls") and rest:
        if not in_class:
            return None
        target = f"{owner.canonical}.{rest}"
    else:
        module = parent.rpartition(".")[0] if in_class else parent
        target = f"{module}.{callee}"
    found = snapshot.resolve(target)
    if found is None or found.opaque:
        return None
    return found


def returned_class(snapshot: Snapshot, path: str, fn: Function, depth: int = 0) -> str | None:
    """The sglang class whose instance every return of an unannotated function builds
    (`return Output(...)`, or `return helper(...)` that does): None when a return gives
    anything else (a tuple, a name, an unknown call)."""
    if fn.returns or fn.return_tuples or not fn.return_calls or depth > _DEPTH:
        return None
    classes = set()
    for callee in fn.return_calls:
        found = _callee_target(snapshot, path, callee)
        if found is None:
            return None
        if isinstance(found.obj, Class):
            classes.add(found.canonical)
            continue
        if not isinstance(found.obj, Function):
            return None
        annotated = snapshot.resolve(found.obj.returns) if found.obj.returns else None
        if annotated is not None and isinstance(annotated.obj, Class):
            classes.add(annotated.canonical)
            continue
        built = returned_class(snapshot, found.canonical, found.obj, depth + 1)
        if built is None:
            return None
        classes.add(built)
    return classes.pop() if len(classes) == 1 else None
