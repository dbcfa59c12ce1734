"""One class per kind of change between two sglang releases; each explains itself.

`symbol` is the fully qualified sglang name as a consumer reaches it; locations are
`file:line` in the old and new tree. Every concrete class carries its documented code
(`driftaudit.codes`): the finding's code comes from the class, never from the instance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from driftaudit import codes


@dataclass
class Change:
    symbol: str
    old_location: str | None
    new_location: str | None

    code: ClassVar[codes.Code]  # set by every concrete kind

    def explain(self) -> str:
        raise NotImplementedError

    def as_dict(self) -> dict:
        return {
            "rule": self.code.code,
            "kind": self.code.kind,
            "symbol": self.symbol,
            "message": self.explain(),
            "old_location": self.old_location,
            "new_location": self.new_location,
        }


@dataclass
class ModuleRemoved(Change):
    code = codes.MODULE_REMOVED

    def explain(self) -> str:
        return f"module `{self.symbol}` was removed"


@dataclass
class SymbolRemoved(Change):
    code = codes.SYMBOL_REMOVED

    def explain(self) -> str:
        module, _, name = self.symbol.rpartition(".")
        return f"`{name}` was removed from `{module}`"


@dataclass
class SymbolMoved(Change):
    new_symbol: str = ""

    code = codes.IMPORT_MOVED

    @property
    def new_module(self) -> str:
        return self.new_symbol.rpartition(".")[0]

    def explain(self) -> str:
        module, _, name = self.symbol.rpartition(".")
        return f"`{name}` moved from `{module}` to `{self.new_module}`"


@dataclass
class SymbolRelocated(SymbolMoved):
    """Gone with its module, found under another name: a class renamed on the way (same
    constructor, mostly the same members), or a function that became a static or class
    method (`new_symbol` is then `module.Class.name`)."""

    how: str = ""  # "renamed" or "staticmethod"/"classmethod"

    @property
    def new_module(self) -> str:
        parts = self.new_symbol.split(".")
        return ".".join(parts[:-2] if self.how != "renamed" else parts[:-1])

    @property
    def new_name(self) -> str:
        parts = self.new_symbol.split(".")
        return ".".join(parts[-2:]) if self.how != "renamed" else parts[-1]

    def explain(self) -> str:
        module, _, name = self.symbol.rpartition(".")
        what = "renamed" if self.how == "renamed" else f"now a {self.how}"
        return (
            f"`{name}` moved from `{module}` to `{self.new_module}` as `{self.new_name}` ({what})"
        )


@dataclass
class AbstractMethodAdded(Change):
    """`symbol`: the base's new abstract method; the consumer class is named by the
    finding (found per subclass, by the matcher)."""

    owner: str = ""  # the consumer class that does not define it

    code = codes.ABSTRACT_METHOD_ADDED

    def explain(self) -> str:
        base, _, name = self.symbol.rpartition(".")
        return (
            f"`{self.owner}` does not define `{name}`, an abstract method "
            f"`{base.rpartition('.')[2]}` has now: instantiating `{self.owner}` raises TypeError"
        )


@dataclass
class DataclassLost(Change):
    """`symbol`: a class that was a dataclass in the old tree and is none in the new one;
    found per call of a `dataclasses` function on it (by the matcher)."""

    function: str = ""  # the `dataclasses` function the consumer calls

    code = codes.DATACLASS_LOST

    def explain(self) -> str:
        name = short_name(self.symbol)
        if self.function == "is_dataclass":
            return (
                f"`{name}` is no longer a dataclass: `dataclasses.is_dataclass` now answers False"
            )
        return (
            f"`dataclasses.{self.function}` needs a dataclass and `{name}` is no longer one: "
            f"it raises TypeError"
        )


@dataclass
class MemberRemoved(Change):
    candidate: str | None = None  # the likely replacement: a new member, or a function
    candidate_kind: str = ""  # "renamed" (a member added to the class) or "moved"

    code = codes.MEMBER_REMOVED

    def explain(self) -> str:
        owner, _, name = self.symbol.rpartition(".")
        text = f"`{name}` was removed from class `{owner.rpartition('.')[2]}`"
        if self.candidate_kind == "renamed":
            text += f" (perhaps renamed to `{self.candidate.rpartition('.')[2]}`)"
        elif self.candidate_kind == "moved":
            text += f" (now a function: `{self.candidate}`)"
        return text


@dataclass
class EnumMemberRemoved(MemberRemoved):
    code = codes.ENUM_MEMBER_REMOVED

    def explain(self) -> str:
        owner, _, name = self.symbol.rpartition(".")
        text = f"enum member `{owner.rpartition('.')[2]}.{name}` was removed"
        if self.candidate_kind == "renamed":
            text += f" (perhaps renamed to `{self.candidate.rpartition('.')[2]}`)"
        return text


@dataclass
class ParameterRemoved(Change):
    param: str = ""

    code = codes.KEYWORD_REMOVED

    def explain(self) -> str:
        return f"parameter `{self.param}` was removed from `{short_name(self.symbol)}`"


@dataclass
class RequestKeywordRemoved(ParameterRemoved):
    """A keyword of an io_struct request (`GenerateReqInput(stream_interval=...)`): the
    same field a JSON payload sends, so it carries the request-field code."""

    code = codes.REQUEST_FIELD_REMOVED


@dataclass
class ParameterRenamed(Change):
    param: str = ""
    new_name: str = ""

    code = codes.KEYWORD_RENAMED

    def explain(self) -> str:
        return (
            f"parameter `{self.param}` of `{short_name(self.symbol)}` was renamed "
            f"to `{self.new_name}`"
        )


@dataclass
class RequiredParameterAdded(Change):
    param: str = ""

    code = codes.REQUIRED_PARAMETER_ADDED

    def explain(self) -> str:
        return f"`{short_name(self.symbol)}` has a new required parameter `{self.param}`"


@dataclass
class ParameterAdded(Change):
    """An optional or keyword-only parameter (a dataclass field) new in the release."""

    param: str = ""
    default: str | None = None
    keyword_only: bool = False

    code = codes.PARAMETER_ADDED

    def explain(self) -> str:
        kind = "keyword-only parameter" if self.keyword_only else "parameter"
        default = f" (default {self.default})" if self.default is not None else ""
        return f"`{short_name(self.symbol)}` has a new {kind} `{self.param}`{default}"


@dataclass
class ParameterMoved(Change):
    """Position or kind changed (e.g. became keyword-only)."""

    param: str = ""
    old_slot: str = ""
    new_slot: str = ""
    more: int = 0  # further parameters shifted the same way

    code = codes.POSITIONAL_MISMATCH

    def explain(self) -> str:
        more = f" (and {self.more} after it)" if self.more else ""
        return (
            f"parameter `{self.param}`{more} of `{short_name(self.symbol)}` changed from "
            f"{self.old_slot} to {self.new_slot}"
        )


@dataclass
class DefaultChanged(Change):
    param: str = ""
    old_default: str | None = None
    new_default: str | None = None
    new_value: str | None = None  # what the new code turns the default into, if not it
    # where the new code reads the parameter: per read, the conditions on the other
    # parameters it runs under (`gates.read_conditions`); None when not known
    conditions: list[list[str]] | None = None

    code = codes.DEFAULT_CHANGED

    def explain(self) -> str:
        used = f" (the new code uses {self.new_value})" if self.new_value else ""
        return (
            f"default of `{self.param}` in `{short_name(self.symbol)}` changed from "
            f"{self.old_default} to {self.new_default}{used}"
        )


@dataclass
class ReturnArityChanged(Change):
    old_arity: int = 0
    new_arity: int = 0
    new_elements: list[str] | None = None  # the new return statement, element by element

    code = codes.RETURN_ARITY_CHANGED

    def explain(self) -> str:
        shown = f": return {', '.join(self.new_elements)}" if self.new_elements else ""
        return (
            f"`{short_name(self.symbol)}` now returns {self.new_arity} values "
            f"(was {self.old_arity}){shown}"
        )


@dataclass
class ReturnBecameObject(Change):
    """A tuple return that became one object (a dataclass): it cannot be unpacked."""

    old_arity: int = 0
    new_class: str = ""
    fields: list[str] | None = None

    code = codes.RETURN_ARITY_CHANGED

    def explain(self) -> str:
        fields = f" (fields: {', '.join(self.fields)})" if self.fields else ""
        return (
            f"`{short_name(self.symbol)}` now returns one `{self.new_class.rpartition('.')[2]}` "
            f"object{fields}, not a tuple of {self.old_arity}: it cannot be unpacked"
        )


# ---- seen from a call's shape: the matcher builds these from the binding ----------


@dataclass
class PositionalRebound(Change):
    """A positional argument the call passes now lands in another parameter."""

    index: int = 0  # 0-based position of the argument
    was: str = ""
    now: str = ""

    code = codes.POSITIONAL_MISMATCH

    def explain(self) -> str:
        return (
            f"positional argument {self.index + 1} now binds to `{self.now}` "
            f"instead of `{self.was}`"
        )


@dataclass
class PositionalCapacityReduced(Change):
    """The call passes more positional arguments than the new signature takes."""

    passed: int = 0
    capacity: int = 0

    code = codes.POSITIONAL_MISMATCH

    def explain(self) -> str:
        return (
            f"passes {self.passed} positional arguments; "
            f"`{short_name(self.symbol)}` now takes at most {self.capacity}"
        )


def short_name(symbol: str) -> str:
    """`sglang.srt.x.Class.meth` -> `Class.meth`; a function -> its name."""
    parts = symbol.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]
