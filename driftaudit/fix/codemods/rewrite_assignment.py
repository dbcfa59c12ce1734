"""rewrite-assignment: `req.fill_ids = ids` ->
`req.full_untruncated_fill_ids = array("q", ids)` and `req.fill_len = len(...)`.

The position is the assigned attribute's. `old` is the member assigned today and
`member` the one to assign instead; `value` is a template for the new value (`{value}`
the old value, `{receiver}` the attribute's owner); `after` lists statement templates
inserted right after it; `imports` lists (module, name) pairs the new code needs (the
templates say `name`; it is respelled when the file uses that name for something else).
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive, build


class RewriteAssignment(Primitive[cst.Assign]):
    kind = "rewrite-assignment"
    node_type = cst.Assign
    parameters = {
        "old": Param("identifier"),
        "member": Param("identifier"),
        "value": Param("expression", optional=True, fields=frozenset({"value", "receiver"})),
        "after": Param("statements", optional=True, fields=frozenset({"receiver"})),
        "imports": Param("imports", optional=True),
    }

    def apply(self, node: cst.Assign) -> cst.Assign:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Attribute):
            return node
        target = node.targets[0].target
        if target.attr.value != self.params["old"]:
            return node  # not (or no longer) the assignment this edit is about
        names = {
            name: self.reference(module, name) for module, name in self.params.get("imports", [])
        }
        value = node.value
        if template := self.params.get("value"):
            value = build(template, names=names, value=node.value, receiver=target.value)
        new_target = target.with_changes(attr=cst.Name(self.params["member"]))
        for statement in self.params.get("after", []):
            self.after.append(
                build(statement, cst.parse_statement, names=names, receiver=target.value)
            )
        return node.with_changes(
            targets=[node.targets[0].with_changes(target=new_target)], value=value
        )
