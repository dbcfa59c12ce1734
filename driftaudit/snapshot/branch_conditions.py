"""The conditions an `if` puts on the code under it, as far as they name a value a caller
controls: an attribute of the function's own object (`self.spec == "inkling"`) or one of
its parameters (`mode in ("a", "b")`, `if flag:`), compared with literals.

A guard is `[first_line, last_line, subject, op, values]`: in those lines `subject`
(`self.<attr>` or a parameter name) satisfies `op` (`in`, `not in`, `truthy`, `falsy`)
against `values` (JSON literals). The `if` branch holds every conjunct of its test; the
`else` branch the negation of a single condition (or of every disjunct of an `or`).
What is not a literal comparison of such a subject gives no guard: the call graph's
consumers then assume the branch may run. After an `if` one branch of which always
leaves (`if not self.x: return`, `raise`, `continue`), the rest of its block holds what
the other branch does (`exit_facts`), through `elif` chains; after `assert <cond>`, what
`<cond>` holds.
"""

from __future__ import annotations

import ast

from driftaudit.pysource import leaves

_NEGATED = {"in": "not in", "not in": "in", "truthy": "falsy", "falsy": "truthy"}


def branch_facts(node: ast.If, self_name: str | None, params: set[str]) -> list[list]:
    guards = []
    facts = _facts(node.test, True, self_name, params)
    if facts and node.body:
        first, last = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
        guards += [[first, last, *fact] for fact in facts]
    facts = _facts(node.test, False, self_name, params)
    if facts and node.orelse:
        first, last = node.orelse[0].lineno, node.orelse[-1].end_lineno or node.orelse[-1].lineno
        guards += [[first, last, *fact] for fact in facts]
    return guards


def exit_facts(block: list[ast.stmt], self_name: str | None, params: set[str]) -> list[list]:
    """The guards on the rest of `block` after each `if` one branch of which leaves."""
    guards = []
    last = block[-1].end_lineno or block[-1].lineno if block else 0
    for index, node in enumerate(block[:-1]):
        if node.__class__ is ast.If:
            facts = _after(node, self_name, params)
        elif node.__class__ is ast.Assert:  # `assert <cond>`: `if not <cond>: raise`
            facts = _facts(node.test, True, self_name, params)
        else:
            continue
        first = block[index + 1].lineno
        guards += [[first, last, *fact] for fact in facts]
    return guards


def _after(node: ast.If, self_name: str | None, params: set[str]) -> list[list]:
    """What holds after `node` when exactly one of its branches leaves."""
    body, other = leaves(node.body), leaves(node.orelse)
    if body == other:
        return []
    facts = _facts(node.test, not body, self_name, params)
    if body and len(node.orelse) == 1 and node.orelse[0].__class__ is ast.If:
        facts += _after(node.orelse[0], self_name, params)  # `elif` chain
    return facts


def _facts(test: ast.expr, holds: bool, self_name: str | None, params: set[str]) -> list[list]:
    """What `test` being `holds` says of the subjects, as [subject, op, values]."""
    if isinstance(test, ast.BoolOp):
        # `a and b` true: both hold; `a or b` false: neither holds
        if isinstance(test.op, ast.And) == holds:
            return [f for part in test.values for f in _facts(part, holds, self_name, params)]
        return []
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _facts(test.operand, not holds, self_name, params)
    subject = _subject(test, self_name, params)
    if subject is not None:
        return [[subject, "truthy" if holds else "falsy", []]]
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return []
    subject = _subject(test.left, self_name, params)
    op, right = test.ops[0], test.comparators[0]
    if subject is None:
        return []
    if isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
        values = _literals([right])
        positive = isinstance(op, (ast.Eq, ast.Is))
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        values = _literals(right.elts)
        positive = isinstance(op, ast.In)
    else:
        return []
    if values is None:
        return []
    kind = "in" if positive else "not in"
    return [[subject, kind if holds else _NEGATED[kind], values]]


def _subject(node: ast.expr, self_name: str | None, params: set[str]) -> str | None:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and self_name is not None
        and node.value.id == self_name
    ):
        return f"self.{node.attr}"
    if isinstance(node, ast.Name) and node.id in params and node.id != self_name:
        return node.id
    return None


def _literals(nodes: list[ast.expr]) -> list | None:
    values = []
    for node in nodes:
        if not isinstance(node, ast.Constant) or not isinstance(
            node.value, (str, int, float, bool, type(None))
        ):
            return None
        values.append(node.value)
    return values


def satisfied(op: str, values: list, value: object) -> bool:
    """Does `value` meet the guard?"""
    if op == "truthy":
        return bool(value)
    if op == "falsy":
        return not value
    inside = any(type(value) is type(v) and value == v for v in values)
    return inside if op == "in" else not inside
