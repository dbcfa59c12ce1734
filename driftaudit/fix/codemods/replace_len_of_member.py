"""replace-len-of-member: `len(req.fill_ids)` -> `req.fill_len`.

The position is the attribute's (`req.fill_ids`); the call around it is replaced by
the template, `{receiver}` standing for the attribute's owner.
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive, build


class ReplaceLenOfMember(Primitive[cst.Call]):
    kind = "replace-len-of-member"
    node_type = cst.Call  # matched through its only argument, see apply.py
    parameters = {
        "member": Param("identifier"),
        "template": Param("expression", fields=frozenset({"receiver"})),
    }
    anchor = "argument"  # the edit's position is the call's first argument

    def apply(self, node: cst.Call):
        if not (isinstance(node.func, cst.Name) and node.func.value == "len"):
            return node
        if len(node.args) != 1 or not isinstance(node.args[0].value, cst.Attribute):
            return node
        attribute = node.args[0].value
        if attribute.attr.value != self.params["member"]:
            return node
        return build(self.params["template"], receiver=attribute.value)
