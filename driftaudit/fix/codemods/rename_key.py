"""rename-key: a key of a keyword dict splatted into a call, `{"old": v}` -> `{"new": v}`
or `dict(old=v)` -> `dict(new=v)` (prefix and quotes kept; a key written with escapes is
left alone)."""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class RenameKey(Primitive[cst.SimpleString | cst.Arg]):
    kind = "rename-key"
    node_type = (cst.SimpleString, cst.Arg)
    parameters = {"old": Param("identifier"), "new": Param("identifier")}

    def apply(self, node: cst.SimpleString | cst.Arg) -> cst.CSTNode:
        old, new = self.params["old"], self.params["new"]
        if isinstance(node, cst.Arg):
            if node.keyword is None or node.keyword.value != old:
                return node
            return node.with_changes(keyword=cst.Name(new))
        body = node.value[len(node.prefix) + len(node.quote) : -len(node.quote)]
        if body != old or "b" in node.prefix.lower():
            return node
        return node.with_changes(value=f"{node.prefix}{node.quote}{new}{node.quote}")
