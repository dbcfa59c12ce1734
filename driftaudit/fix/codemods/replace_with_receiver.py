"""replace-with-receiver: `batch.get_model_worker_batch()` -> `batch`.

For a removed conversion step whose callers now take the receiver itself
(`ForwardBatch.init_new` consumes the ScheduleBatch directly since 0.5.13).
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class ReplaceWithReceiver(Primitive[cst.Call]):
    kind = "replace-with-receiver"
    node_type = cst.Call
    parameters = {"method": Param("identifier")}

    def apply(self, node: cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == self.params["method"]:
            return func.value
        return node
