"""drop-keyword: `f(a, legacy=True, b=1)` -> `f(a, b=1)` (the parameter was removed)."""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class DropKeyword(Primitive[cst.Call]):
    kind = "drop-keyword"
    node_type = cst.Call
    parameters = {"keyword": Param("identifier")}

    def apply(self, node: cst.Call) -> cst.Call:
        keyword = self.params["keyword"]
        kept = [a for a in node.args if not (a.keyword and a.keyword.value == keyword)]
        if len(kept) == len(node.args):
            return node
        if kept and len(kept) < len(node.args) and node.args[-1] not in kept:
            # the dropped argument was last: the new last one takes its trailing comma
            last = kept[-1].with_changes(comma=node.args[-1].comma)
            kept[-1] = last
        return node.with_changes(args=kept)
