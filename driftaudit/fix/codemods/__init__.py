"""Codemod primitives, one per module, composed by `apply.py` (OpenRewrite-style).

Each primitive edits the node that starts at an edit's position (the position the
finding reports), keeps formatting and comments (libcst), and is idempotent: once
applied, the node no longer matches.
"""

from driftaudit.fix.codemods.add_import import AddImport
from driftaudit.fix.codemods.base import Primitive
from driftaudit.fix.codemods.drop_keyword import DropKeyword
from driftaudit.fix.codemods.guard_import import GuardImport
from driftaudit.fix.codemods.move_import import MoveImport
from driftaudit.fix.codemods.pad_unpack import PadUnpack
from driftaudit.fix.codemods.rename_attribute import RenameAttribute
from driftaudit.fix.codemods.rename_import import RenameImport
from driftaudit.fix.codemods.rename_key import RenameKey
from driftaudit.fix.codemods.rename_keyword import RenameKeyword
from driftaudit.fix.codemods.replace_callee import ReplaceCallee
from driftaudit.fix.codemods.replace_len_of_member import ReplaceLenOfMember
from driftaudit.fix.codemods.replace_text import ReplaceText
from driftaudit.fix.codemods.replace_with_receiver import ReplaceWithReceiver
from driftaudit.fix.codemods.rewrite_assignment import RewriteAssignment

PRIMITIVES: dict[str, type[Primitive]] = {
    p.kind: p
    for p in (
        AddImport,
        DropKeyword,
        GuardImport,
        MoveImport,
        PadUnpack,
        RenameAttribute,
        RenameImport,
        RenameKey,
        RenameKeyword,
        ReplaceCallee,
        ReplaceLenOfMember,
        ReplaceText,
        ReplaceWithReceiver,
        RewriteAssignment,
    )
}

__all__ = ["PRIMITIVES", "Primitive"]
