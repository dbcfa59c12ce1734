"""move-import: `from old import a, b` -> `from old import b` + `from new import a`.

The position is the imported name's. When every name of the statement moves to the
same module, the statement's module is rewritten in place; otherwise the moved names
are split into a new statement right after it (inside the same block: lazy imports
and try/except ImportError fallbacks stay where they are).
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Primitive


class MoveImport(Primitive):
    kind = "move-import"
    node_type = cst.ImportAlias  # marks the alias; the composer rewrites the statement
    required = ("name", "new_module")

    def apply(self, node: cst.ImportAlias) -> cst.ImportAlias:
        return node


def move_names(
    statement: cst.ImportFrom, moves: dict[str, str]
) -> tuple[cst.ImportFrom | None, list[cst.BaseSmallStatement]]:
    """Split `moves` (name -> new module) out of an ImportFrom.

    Returns the statement to keep (None when nothing stays) and the new statements.
    """
    names = list(statement.names)
    moving = [a for a in names if isinstance(a.name, cst.Name) and a.name.value in moves]
    if not moving:
        return statement, []
    targets = {moves[a.name.value] for a in moving}
    staying = [a for a in names if a not in moving]
    if not staying and len(targets) == 1:
        (module,) = targets
        return statement.with_changes(module=cst.parse_expression(module)), []
    new_statements = []
    for module in sorted(targets):
        group = [a for a in moving if moves[a.name.value] == module]
        aliases = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in group]
        new_statements.append(cst.ImportFrom(module=cst.parse_expression(module), names=aliases))
    if not staying:
        return None, new_statements
    if names[-1] in moving:  # the last name left: the new last one takes its comma
        staying[-1] = staying[-1].with_changes(comma=names[-1].comma)
    return statement.with_changes(names=staying), new_statements
