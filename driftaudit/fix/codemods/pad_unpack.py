"""pad-unpack: `a, b, c = f()` -> `a, b, c, _ = f()` when f now returns 4 values.

`slots` gives, for each value the new return statement lists, the index of the old
value it is (None for a new value): the consumer's targets move with their values and
new positions get `_`.
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class PadUnpack(Primitive[cst.Assign]):
    kind = "pad-unpack"
    node_type = cst.Assign
    parameters = {"slots": Param("slots")}

    def apply(self, node: cst.Assign) -> cst.Assign:
        slots = self.params["slots"]
        target = node.targets[0].target if len(node.targets) == 1 else None
        if not isinstance(target, (cst.Tuple, cst.List)):
            return node
        elements = list(target.elements)
        if len(elements) == len(slots):
            return node  # already the new arity
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return node
        if sorted(s for s in slots if s is not None) != list(range(len(elements))):
            return node  # not the shape this edit was computed for
        template = elements[-1]
        new_elements = []
        for index, slot in enumerate(slots):
            element = elements[slot] if slot is not None else cst.Element(cst.Name("_"))
            last = index == len(slots) - 1
            comma = template.comma if last else _comma_like(elements, index)
            new_elements.append(element.with_changes(comma=comma))
        return node.with_changes(
            targets=[
                node.targets[0].with_changes(target=target.with_changes(elements=new_elements))
            ]
        )


def _comma_like(elements: list[cst.Element], index: int):
    """Reuse the formatting of the old commas (one element per line stays so)."""
    for element in elements[:-1]:
        if element.comma is not cst.MaybeSentinel.DEFAULT:
            return element.comma
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
