"""rename-import: `from m import old` -> `from m import new as old` (a renamed function
keeps its call sites)."""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class RenameImport(Primitive[cst.ImportAlias]):
    kind = "rename-import"
    node_type = cst.ImportAlias  # the composer rewrites the statement (see apply.py)
    parameters = {"old": Param("identifier"), "new": Param("identifier")}

    def apply(self, node: cst.ImportAlias) -> cst.ImportAlias:
        if not isinstance(node.name, cst.Name) or node.name.value != self.params["old"]:
            return node
        asname = node.asname or cst.AsName(name=cst.Name(self.params["old"]))
        return node.with_changes(name=cst.Name(self.params["new"]), asname=asname)
