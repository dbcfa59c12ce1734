"""Type changes that a consumer's values run into: a parameter annotation that no longer
accepts what a call passes, an attribute whose type no longer fits what is assigned.

Found per use (the consumer's value decides), so these classes are built by the matcher
from the two annotations; `driftaudit.drift.annotations` says what an annotation accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.changes import Change, short_name


@dataclass
class ParameterTypeChanged(Change):
    param: str = ""
    old_type: str = ""
    new_type: str = ""
    value: str = ""  # the type of the value the consumer passes

    code = codes.ARGUMENT_TYPE_CHANGED

    def explain(self) -> str:
        return (
            f"passes a `{self.value}` as `{self.param}` of `{short_name(self.symbol)}`, "
            f"annotated `{self.old_type}` before and `{self.new_type}` now"
        )


@dataclass
class AttributeTypeChanged(Change):
    attribute: str = ""
    old_type: str = ""
    new_type: str = ""
    value: str = ""

    code = codes.ATTRIBUTE_TYPE_CHANGED

    def explain(self) -> str:
        owner = short_name(self.symbol.rpartition(".")[0])
        return (
            f"assigns a `{self.value}` to `{owner}.{self.attribute}`, which was "
            f"`{self.old_type}` and is `{self.new_type}` now"
        )
