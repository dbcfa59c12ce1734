"""rename-keyword: `f(img_data=x)` -> `f(mm_data=x)` (the parameter was renamed in place)."""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class RenameKeyword(Primitive[cst.Call]):
    kind = "rename-keyword"
    node_type = cst.Call
    parameters = {"old": Param("identifier"), "new": Param("identifier")}

    def apply(self, node: cst.Call) -> cst.Call:
        old, new = self.params["old"], self.params["new"]
        args = [
            a.with_changes(keyword=cst.Name(new)) if a.keyword and a.keyword.value == old else a
            for a in node.args
        ]
        return node.with_changes(args=args)
