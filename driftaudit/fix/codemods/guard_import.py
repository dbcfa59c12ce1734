"""guard-import: `from old import a` -> `try: from new import a` / `except ImportError:
from old import a`, for a range of releases where each spelling works on some (with
`keep_first`, the import as written stays in the `try` and the new one is the fallback:
the newest release's spelling first, whichever side the consumer wrote).

The position is the imported name's. The guarded name leaves its statement (the others
stay, as `move-import` splits them) and the `try` follows that statement in its block;
when nothing stays, the `try` takes the statement's place, its comments above and the
comment at its end (on the old spelling's line). The consumer's alias is kept in both
branches. A statement in a one-line suite (`if c: from x import a`) has no room for a
`try`: the edit is not made.
"""

from __future__ import annotations

import libcst as cst

from driftaudit.fix.codemods.base import Param, Primitive
from driftaudit.fix.codemods.move_import import as_imported


class GuardImport(Primitive[cst.ImportAlias]):
    kind = "guard-import"
    node_type = cst.ImportAlias  # marks the alias; the composer rewrites the statement
    parameters = {
        "name": Param("identifier"),
        "new_module": Param("dotted"),
        "new_name": Param("identifier", optional=True),  # renamed there
        "keep_first": Param("flag", optional=True),
    }

    def apply(self, node: cst.ImportAlias) -> cst.ImportAlias:
        return node


def guard_names(
    statement: cst.ImportFrom, guards: dict[str, tuple[str, str | None, bool]]
) -> tuple[cst.ImportFrom | None, list[tuple[cst.ImportFrom, cst.ImportFrom, bool]]]:
    """Split the names of `guards` (name -> (new module, new name or None, keep_first))
    out of an ImportFrom: the statement to keep (None when nothing stays) and, per
    guarded name, (the import its `try` holds, its fallback, whether the first is the
    import as written)."""
    names = list(statement.names) if isinstance(statement.names, (list, tuple)) else []
    guarded = [a for a in names if isinstance(a.name, cst.Name) and a.name.value in guards]
    pairs = []
    for alias in guarded:
        module, new_name, keep_first = guards[alias.name.value]
        plain = alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        dotted = cst.parse_expression(module)
        assert isinstance(dotted, (cst.Name, cst.Attribute))  # a `dotted` parameter
        new = cst.ImportFrom(module=dotted, names=[as_imported(plain, new_name)])
        old = statement.with_changes(
            names=[plain], lpar=None, rpar=None, whitespace_after_import=cst.SimpleWhitespace(" ")
        )
        pairs.append((old, new, True) if keep_first else (new, old, False))
    staying = [a for a in names if a not in guarded]
    if not staying:
        return None, pairs
    if names[-1] in guarded:  # the last name left: the new last one takes its comma
        staying[-1] = staying[-1].with_changes(comma=names[-1].comma)
    return statement.with_changes(names=staying), pairs


def try_statement(
    first: cst.ImportFrom,
    fallback: cst.ImportFrom,
    line: cst.SimpleStatementLine | None,
    written_first: bool = False,
) -> cst.Try:
    """`try: first` / `except ImportError: fallback`; `line`: the statement the import
    was alone in (its comments move onto the `try`, and the one at its end onto the
    line of the import as written)."""
    lines = [cst.SimpleStatementLine(body=[first]), cst.SimpleStatementLine(body=[fallback])]
    leading: list[cst.EmptyLine] = []
    if line is not None:
        written = 0 if written_first else 1
        lines[written] = lines[written].with_changes(trailing_whitespace=line.trailing_whitespace)
        leading = list(line.leading_lines)
    return cst.Try(
        body=cst.IndentedBlock(body=[lines[0]]),
        handlers=[
            cst.ExceptHandler(body=cst.IndentedBlock(body=[lines[1]]), type=cst.Name("ImportError"))
        ],
        leading_lines=leading,
    )
