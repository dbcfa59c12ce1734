"""move-import: `from old import a, b` -> `from old import b` + `from new import a`.

The position is the imported name's. When every name of the statement moves to the
same module, the statement's module is rewritten in place; otherwise the moved names
are split into a new statement right after it (inside the same block: lazy imports
and try/except ImportError fallbacks stay where they are).
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive


class MoveImport(Primitive[cst.ImportAlias]):
    kind = "move-import"
    node_type = cst.ImportAlias  # marks the alias; the composer rewrites the statement
    parameters = {
        "name": Param("identifier"),
        "new_module": Param("dotted"),
        "new_name": Param("dotted", optional=True),  # `Cls.method`: moved into a class
    }

    def apply(self, node: cst.ImportAlias) -> cst.ImportAlias:
        return node


def move_names(
    statement: cst.ImportFrom, moves: dict[str, tuple[str, str | None]]
) -> tuple[cst.ImportFrom | None, list[cst.BaseSmallStatement], list[cst.BaseSmallStatement]]:
    """Split `moves` (name -> (new module, new name or None)) out of an ImportFrom.

    Returns the statement to keep (None when nothing stays), the new import statements,
    and the assignments that bind a method moved into a class under its old name.
    """
    names = list(statement.names)
    moving = [a for a in names if isinstance(a.name, cst.Name) and a.name.value in moves]
    if not moving:
        return statement, [], []
    bindings = [b for a in moving if (b := _binding(a, moves[a.name.value][1])) is not None]
    targets = {moves[a.name.value][0] for a in moving}
    staying = [a for a in names if a not in moving]
    if not staying and len(targets) == 1:
        (module,) = targets
        aliases = _dedupe([as_imported(a, moves[a.name.value][1]) for a in moving])
        aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        renamed = statement.with_changes(module=cst.parse_expression(module), names=aliases)
        return renamed, [], bindings
    new_statements = []
    for module in sorted(targets):
        group = [a for a in moving if moves[a.name.value][0] == module]
        aliases = _dedupe([as_imported(a, moves[a.name.value][1]) for a in group])
        aliases = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
        new_statements.append(cst.ImportFrom(module=cst.parse_expression(module), names=aliases))
    if not staying:
        return None, new_statements, bindings
    if names[-1] in moving:  # the last name left: the new last one takes its comma
        staying[-1] = staying[-1].with_changes(comma=names[-1].comma)
    return statement.with_changes(names=staying), new_statements, bindings


def as_imported(alias: cst.ImportAlias, new_name: str | None) -> cst.ImportAlias:
    """The alias as the new module has the name: `NewName as Old`, or `Cls` for a method."""
    if not new_name:
        return alias
    if "." in new_name:  # a method of a class: import the class
        return cst.ImportAlias(name=cst.Name(new_name.split(".")[0]))
    bound = alias.asname.name.value if alias.asname else alias.name.value
    return alias.with_changes(name=cst.Name(new_name), asname=cst.AsName(name=cst.Name(bound)))


def _binding(alias: cst.ImportAlias, new_name: str | None) -> cst.Assign | None:
    """`old = Cls.old` for a function that became a method of `Cls`."""
    if not new_name or "." not in new_name:
        return None
    bound = alias.asname.name.value if alias.asname else alias.name.value
    return cst.Assign(
        targets=[cst.AssignTarget(target=cst.Name(bound))],
        value=cst.parse_expression(new_name),
    )


def _dedupe(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    """One `Cls` per statement when two methods of one class move into it."""
    seen, kept = set(), []
    for alias in aliases:
        key = cst.Module([]).code_for_node(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        if key not in seen:
            seen.add(key)
            kept.append(alias)
    return kept
