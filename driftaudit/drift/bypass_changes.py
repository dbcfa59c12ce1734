"""An attribute sglang code newly reads on an object the consumer built without
`__init__`: the new constructor sets it, the consumer's hand-made object does not."""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.changes import Change, short_name


@dataclass
class BypassedInitAttributeMissing(Change):
    method: str = ""  # the method the consumer calls
    attribute: str = ""
    init_location: str | None = None  # where the new `__init__` sets it
    stand_in_for: str = ""  # a stand-in handed as this parameter of `method`
    stand_in: str = "a SimpleNamespace"  # what it is: a Mock(spec=...), an instance of `Fake`
    typed: bool = True  # `symbol` is the expected class's attribute (else: the callee)

    code = codes.BYPASSED_INIT_ATTRIBUTE_MISSING

    def explain(self) -> str:
        cls = short_name(self.symbol.rpartition(".")[0])
        where = f" ({self.init_location})" if self.init_location else ""
        if self.stand_in_for and not self.typed:
            role = (
                f"is put in `{self.stand_in_for}` of the object `{self.method}` runs on"
                if self.stand_in_for.startswith("self.")
                else f"is handed to `{self.method}` as `{self.stand_in_for}`"
            )
            return (
                f"{self.stand_in} {role}, which now reads `{self.stand_in_for}.{self.attribute}`"
                " (the old release did not): the stand-in does not set it"
            )
        if self.stand_in_for:
            return (
                f"{self.stand_in} stands in for `{cls}` as `{self.stand_in_for}` of "
                f"`{self.method}`, which now reads `{self.stand_in_for}.{self.attribute}`: "
                f"`{cls}` has it{where}, the stand-in does not set it"
            )
        return (
            f"`{cls}` is built without `__init__` here; `{cls}.{self.method}` now reads "
            f"`self.{self.attribute}`, which the new `__init__` sets"
            + (f" ({self.init_location})" if self.init_location else "")
            + " and this code does not"
        )
