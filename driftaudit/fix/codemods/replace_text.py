"""replace-text in Python: `"--sglang-cuda-graph-bs 1 2"` -> `"--sglang-cuda-graph-bs-decode
1 2"`, `args.sglang_nsa_decode_backend` -> `args.sglang_dsa_decode_backend`.

The edit names a span (line, character column, old text) as the surface scanner found it.
It applies to the string literal (or f-string text part) holding the span, keeping prefix
and quotes, or to a name standing exactly there; never in a comment (no string node), a
docstring, a help text, a log or exception message, nor to a flag the consumer defines
(`parser.add_argument("--x")`: its own parser's flag).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from driftaudit.fix.codemods.base import Param, Primitive
from driftaudit.fix.text import bounded
from driftaudit.usage.dest_owners import PARSER_DEFINITIONS

_PROSE_KEYWORDS = {"help", "description", "epilog", "usage", "msg", "message", "doc"}
_LOG_CALLS = {
    "print", "debug", "info", "warning", "warn", "error", "exception", "critical", "log",
    "echo", "secho", "fatal",
}  # fmt: skip


def _callee_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def prose_or_definition(lineage: list[cst.CSTNode]) -> bool:
    """Is the string a docstring, help or log text, an exception message, or the name
    a parser definition gives its own flag? `lineage`: the (original) string node, then
    its parents up to its statement."""
    child = lineage[0]
    for parent in lineage[1:]:
        if isinstance(parent, cst.Expr) and parent.value is child:
            return True  # a bare string statement: a docstring
        keyword = parent.keyword.value if isinstance(parent, cst.Arg) and parent.keyword else ""
        if keyword in _PROSE_KEYWORDS:
            return True
        if isinstance(parent, cst.Call):
            name = _callee_name(parent)
            if name in _LOG_CALLS or name.endswith(("Error", "Exception", "Warning")):
                return True
            return name in PARSER_DEFINITIONS
        if isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
            return isinstance(parent, cst.Raise)
        child = parent
    return False


class ReplaceText(Primitive[cst.CSTNode]):
    kind = "replace-text"
    node_type = cst.CSTNode  # placed by span, see `node_types`
    node_types = (cst.SimpleString, cst.FormattedStringText, cst.Name)
    anchor = "span"
    parameters = {"old": Param("text"), "new": Param("line")}

    def __init__(self, params: dict):
        super().__init__(params)
        self.offset = 0  # of the span in the node's code, set by the composer
        self.lineage: list[cst.CSTNode] = []  # the original node, then its parents
        self.why = "the code at that place no longer matches"  # when it does not apply

    def apply(self, node: cst.CSTNode) -> cst.CSTNode:
        old, new = self.params["old"], self.params["new"]
        if isinstance(node, cst.Name):
            if self.offset != 0 or node.value != old or m.matches(node, m.Name(new)):
                return node
            return node.with_changes(value=new)
        if prose_or_definition(self.lineage):
            self.why = (
                "a docstring, help, log or exception text, or a flag the consumer's own "
                "parser defines: left alone"
            )
            return node
        value = node.value
        if isinstance(node, cst.SimpleString):
            body_start = len(node.prefix) + len(node.quote)
            if not body_start <= self.offset <= len(value) - len(node.quote) - len(old):
                return node
        if not bounded(value, self.offset, old):
            return node
        return node.with_changes(value=value[: self.offset] + new + value[self.offset + len(old) :])
