"""Consumer classes whose instances a file puts in the place of another object's attribute.

`setattr(module, name, Wrapper(...))`, `model.logits_processor = Wrapper(...)`, also through
a local first (`wrapped = Wrapper(sub); setattr(module, name, wrapped)`). A wrapper put there
is what sglang then calls instead of its own object: the evidence that a class taking an
sglang instance stands in for it (DA305). `self.x = Wrapper(...)` is the consumer keeping
its own object, not a replacement, and does not count.
"""

from __future__ import annotations

import ast

from driftaudit.astwalk import walk, walk_statements


def installed_classes(tree: ast.Module, text: str | None = None) -> set[str]:
    """`text`: the module's source, when known (without `setattr` in it, only the
    statements are walked: an assignment is one, a call may lie in any expression)."""
    built: dict[str, str] = {}  # local name -> the class it was built from
    placed: list[ast.expr] = []
    nodes = walk_statements(tree) if text is not None and "setattr" not in text else walk(tree)
    for node in nodes:
        if isinstance(node, ast.Assign):
            target = node.targets[0] if len(node.targets) == 1 else None
            if isinstance(target, ast.Name) and (cls := _built(node.value)):
                built[target.id] = cls
            elif isinstance(target, ast.Attribute) and not _is_self(target.value):
                placed.append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) == 3
        ):
            placed.append(node.args[2])
    found = set()
    for value in placed:
        name = _built(value) or (built.get(value.id) if isinstance(value, ast.Name) else None)
        if name:
            found.add(name)
    return found


def _built(value: ast.expr) -> str | None:
    """`Cls(...)`: the class name (capitalised, as classes are named)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id if value.func.id[:1].isupper() else None
    return None


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")
