"""What a name is bound to while the usage visitor walks a consumer file: local
functions, the consumer's classes and instances, deferred function bodies, and the list
that stamps each usage with its scope and guards."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from driftaudit.usage.usages import CallShape, Usage


class Recorder(list[Usage]):
    """The usages of a file; each is stamped with the function it occurs in."""

    scope = 0
    guards: tuple = ()

    def append(self, usage: Usage) -> None:
        usage.scope, usage.guards = self.scope, self.guards
        super().append(usage)


CONSUMER = "consumer:"  # prefix of a binding to a consumer module


@dataclass
class LocalFunction:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    returns: tuple | None  # TypeRef of its return annotation


@dataclass
class ClassContext:
    name: str
    bases: tuple[str, ...]  # sglang paths of its bases
    own: frozenset[str]  # names the class defines itself
    key: str = ""  # module.Class: its row of the consumer's attribute table
    writes: frozenset[str] = frozenset()  # `self.a.b = ...` in its methods: "a.b"
    # x -> TypeRef of `self.x` as its annotations and methods give it (so far in the walk;
    # the file's attribute table holds this dict, read whole when matching)
    attr_types: dict[str, tuple] = field(default_factory=dict)
    # no sglang base, but `__init__` takes an sglang instance (`processor: LogitsProcessor`):
    # the class may stand in for it, so its methods are checked like overrides
    wraps: tuple[str, ...] = ()
    # the sglang class `super()` reaches first: the class statement's first base, when
    # it names sglang (after a consumer class or mixin, the MRO is not known here)
    first_base: str | None = None


@dataclass
class ConsumerClass:
    """A consumer class that subclasses sglang classes: calling it builds a `self`."""

    name: str
    bases: tuple[str, ...]
    own: frozenset[str]
    # one base, no decorator, no `__init__`/`__new__` of its own: calling it calls the
    # sglang base's `__init__` with the same arguments
    inherits_init: bool = False
    key: str = ""  # module.Class where it is defined (the consumer's attribute table)

    def instance(self) -> tuple:
        return ("self", self.bases, self.own, self.key)


@dataclass
class OwnClass:
    """A consumer class with no sglang base: its instances are `("obj", key)`, whose
    attributes its attribute table may type."""

    key: str


@dataclass
class ConsumerInstance:
    """`self` in a consumer class that does not subclass sglang: its attributes may
    still hold sglang instances (`self.logits_processor = logits_processor`)."""

    owner: ClassContext


@dataclass
class PartialOf:
    """`bound = functools.partial(f, ...)`: calling `bound` calls `f` with these first."""

    symbol: str  # the callee, "" for a method on an sglang instance
    shape: CallShape
    receiver: tuple = ()  # that instance's TypeRef
    member: str = ""


@dataclass
class Deferred:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    scopes: list[dict]
    owner: ClassContext | None
    patched: tuple | None = None  # TypeRef of `self` when installed on an sglang class
    guards: tuple = ()  # the lasting guards where it is defined (consumer_guards.LASTING)
