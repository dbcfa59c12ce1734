"""rename-attribute: `req.old_name` -> `req.new_name` at one place."""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class RenameAttribute(Primitive[cst.Attribute]):
    kind = "rename-attribute"
    node_type = cst.Attribute
    parameters = {"old": Param("identifier"), "new": Param("identifier")}

    def apply(self, node: cst.Attribute) -> cst.Attribute:
        if node.attr.value != self.params["old"]:
            return node
        return node.with_changes(attr=cst.Name(self.params["new"]))
