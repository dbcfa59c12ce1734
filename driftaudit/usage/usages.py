"""What a consumer touches: one record per place, naming the sglang path it reaches."""

from __future__ import annotations

from dataclasses import dataclass, field

from driftaudit.pysource import Span


@dataclass
class Usage:
    path: str  # consumer file, relative to the consumer root
    line: int  # 1-based: where the node starts (the fixer's edits act on that node)
    column: int  # 1-based, in characters
    symbol: str  # the sglang dotted path as the consumer reaches it
    # line of the enclosing function's `def` (0: module level); set by the visitor
    scope: int = field(default=0, kw_only=True)
    # the token a finding about this usage points at (an import's alias, the `c` of
    # `a.b.c`, a call's callee); None: the node at line:column
    focus: Span | None = field(default=None, kw_only=True)
    # the guards around it, innermost last (usage/consumer_guards.py); set by the visitor
    guards: tuple = field(default=(), kw_only=True)
    # a name a star import brought (`from sglang.x import *`): the sglang modules it may
    # come from, the last import first; `symbol` is under the first, and the matcher takes
    # the first whose old release defines the name
    star: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass
class ImportUsage(Usage):
    """`import sglang.x`, `from sglang.x import y` (symbol: sglang.x.y)."""

    lazy: bool = False  # inside a function
    guarded: bool = False  # inside `try: ... except ImportError`
    bound: str | None = None  # the name a `from` import binds (its alias when aliased)


@dataclass
class ReferenceUsage(Usage):
    """An attribute chain on an imported sglang name: `dp_attention._ATTN_TP_RANK`."""

    store: bool = False  # assigned or deleted rather than read
    # stored by a patcher that looks the target up first (mock.patch, patch.object,
    # monkeypatch.setattr): a missing target raises; a plain write just does nothing
    patcher: bool = False


@dataclass
class CallShape:
    """How a call passes its arguments."""

    positional: int = 0
    keywords: list[str] = field(default_factory=list)
    star_args: bool = False
    star_kwargs: bool = False
    # value types known from the syntax, by position ("0") or keyword (valuetypes.py)
    arg_types: dict[str, str] = field(default_factory=dict)
    # where each argument is, by position ("0") or keyword (the keyword's name)
    places: dict[str, Span] = field(default_factory=dict)
    # the arguments whose value is never None: a literal, a `x or "auto"` fallback
    never_none: list[str] = field(default_factory=list)
    # the arguments written as literals (`temperature=0`), by position or keyword: their
    # source text, for the conditions the callee puts on its other parameters
    literals: dict[str, str] = field(default_factory=dict)
    # keywords a `**kwargs` spread supplies, read from the dict it was built as (no edit
    # can rename them in the call)
    spread: list[str] = field(default_factory=list)
    # `functools.partial(f, ...)`: more arguments come at the later call, so nothing is
    # missing yet and no default is relied on
    partial: bool = False
    # a call of such a partial: the partial's keywords and positional count, judged there
    settled: list[str] = field(default_factory=list)
    settled_positional: int = 0


@dataclass
class CallUsage(Usage):
    positional: int = 0
    keywords: list[str] = field(default_factory=list)
    star_args: bool = False
    star_kwargs: bool = False
    arg_types: dict[str, str] = field(default_factory=dict)
    places: dict[str, Span] = field(default_factory=dict)
    never_none: list[str] = field(default_factory=list)
    literals: dict[str, str] = field(default_factory=dict)
    spread: list[str] = field(default_factory=list)
    partial: bool = False
    settled: list[str] = field(default_factory=list)
    settled_positional: int = 0
    via: str = (
        ""  # a consumer subclass constructed, as its `key`, module.Class (symbol: its sglang base)
    )
    via_init: bool = False  # that subclass has no `__init__`: the call binds to the base's


@dataclass
class MemberUsage(Usage):
    """`receiver.member` where the receiver is known to hold an sglang instance.

    `symbol` is filled in by the matcher once the receiver's class is resolved.
    """

    receiver: tuple = ()  # a TypeRef, see types.py
    member: str = ""
    store: bool = False
    call: CallShape | None = None
    value_type: str | None = None  # of the value assigned, when store (valuetypes.py)


@dataclass
class AttributeNameUsage(Usage):
    """`x.member` on a receiver of unknown type: only the name ties it to sglang."""

    member: str = ""
    store: bool = False


@dataclass
class KeywordDictUsage(Usage):
    """A dict literal or `dict(...)` call with string keys (it may feed `f(**kwargs)`)."""

    keys: list[tuple[str, Span]] = field(default_factory=list)  # (key, where it is)


@dataclass
class EnumLookupUsage(Usage):
    """A member of an sglang class looked up at run time: `E[name]`, `getattr(E, name)`
    (by name, with a string not written in the code) or `E(value)` (by value)."""

    by_value: bool = False
    literal: str | None = None  # `E("fp8")`: the value written in the call


@dataclass
class ClassFieldUsage(Usage):
    """A name a consumer class body declares (`sglang_tp_size: int = 1` wraps a flag)."""

    name: str = ""
    owner: str = ""


@dataclass
class MetaInfoUsage(Usage):
    """`out["meta_info"]["key"]` or `...["meta_info"].get("key")`: a response field read."""

    key: str = ""


@dataclass
class OverrideUsage(Usage):
    """A method that a consumer subclass of sglang classes defines."""

    owner: str = ""  # the consumer class
    bases: tuple = ()  # sglang paths of its bases
    method: str = ""
    params: list[str] = field(default_factory=list)
    variadic: bool = False  # takes both *args and **kwargs: accepts any base signature
    var_positional: bool = False  # takes *args
    var_keyword: bool = False  # takes **kwargs
    # not a subclass: a class whose `__init__` takes an instance of `bases` and that may
    # stand in for it (a wrapper sglang calls in its place); only a method that mirrors
    # the base's old parameters is taken for such a stand-in
    stand_in: bool = False
    # a consumer function installed in sglang's place (`Cls.meth = fn`, `setattr`,
    # `patch.object`): `owner` is the function's name, `bases` the patched class or module
    replaces: bool = False
    defaulted: list[str] = field(default_factory=list)  # its parameters with a default
    keyword_only: list[str] = field(default_factory=list)  # its keyword-only parameters


@dataclass
class DataclassCallUsage(Usage):
    """`dataclasses.fields(X)` (`replace`, `asdict`, `astuple`, `is_dataclass`) on an
    sglang class (`symbol`) or on an instance of one (`receiver`, `symbol` empty): it
    relies on the class being a dataclass."""

    function: str = ""  # the `dataclasses` function called
    receiver: tuple | None = None


@dataclass
class SubclassUsage(Usage):
    """A consumer class statement whose bases reach sglang classes (directly or through
    the module's other consumer classes): what it must define to be instantiable."""

    owner: str = ""  # the consumer class
    bases: tuple = ()  # sglang paths of its bases, those of consumer bases included
    own: frozenset = frozenset()  # names it and its consumer bases define
    abstract: bool = False  # it declares abstract methods itself: not meant to be built
    key: str = ""  # `module.Class`: what a call of it names as `CallUsage.via`
    consumer_bases: tuple = ()  # the keys of its consumer base classes (`class B(A)`: A's)


@dataclass
class UnpackUsage(Usage):
    """`a, b, c = f(...)`: the call result unpacked into `targets` names."""

    targets: int = 0
    starred: bool = False
    # `a, b = obj.meth(...)` on an sglang instance: symbol "" until the matcher types it
    receiver: tuple = ()
    member: str = ""


@dataclass
class IndexUsage(UnpackUsage):
    """`out = f(...)` then `out[1]` (or `f(...)[1]`): one value of the result by index."""

    index: int = 0


@dataclass
class ParseFailure:
    path: str
    line: int
    column: int
    message: str


@dataclass
class UsageSet:
    root: str
    usages: list[Usage] = field(default_factory=list)
    failures: list[ParseFailure] = field(default_factory=list)
    files_scanned: int = 0  # files that reach sglang, visited for usages
    files_total: int = 0
    defined_names: set[str] = field(default_factory=set)  # attribute names the consumer defines
    # consumer classes whose instances it puts in place of another object's attribute
    installed: set[str] = field(default_factory=set)
    # the consumer's attribute table: class (module.Class) -> attribute -> TypeRef, as
    # its annotations and methods type `self.x` (types.py: "field")
    fields: dict[str, dict[str, tuple]] = field(default_factory=dict)
