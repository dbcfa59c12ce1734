"""replace-callee: `Scheduler.prepare_raw(self, batch)` -> `prepare_raw(batch)`.

A method that became a module function: the call keeps its arguments (optionally
without the first, the old `self`) and imports the function from its new module.
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class ReplaceCallee(Primitive[cst.Call]):
    kind = "replace-callee"
    node_type = cst.Call
    parameters = {
        "module": Param("dotted"),
        "name": Param("identifier"),
        "drop_first_argument": Param("flag", optional=True),  # the old `self`
    }

    def apply(self, node: cst.Call) -> cst.Call:
        name = self.params["name"]
        if not isinstance(node.func, cst.Attribute):
            return node  # already a plain function call (`name` or its respelling)
        args = list(node.args)
        if self.params.get("drop_first_argument") and args and args[0].keyword is None:
            args = args[1:]
        func = cst.parse_expression(self.reference(self.params["module"], name))
        return node.with_changes(func=func, args=args)
