"""Compose the primitives over one file, check the result, write it atomically."""

from __future__ import annotations

import difflib
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from driftaudit.fix.codemods import PRIMITIVES, Primitive
from driftaudit.fix.codemods.add_import import insert_imports
from driftaudit.fix.codemods.move_import import MoveImport, move_names
from driftaudit.fix.edits import Edit
from driftaudit.usage.files import ConsumerFiles


@dataclass
class FileChange:
    path: str
    before: str
    after: str
    applied: list[Edit] = field(default_factory=list)
    skipped: list[tuple[Edit, str]] = field(default_factory=list)  # and why

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                f"a/{self.path}",
                f"b/{self.path}",
            )
        )


class _Composer(cst.CSTTransformer):
    """One pass over the original tree; each edit fires on the node at its position."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, edits: list[Edit]):
        super().__init__()
        self.at: dict[tuple[int, int], list[tuple[Edit, Primitive]]] = defaultdict(list)
        for edit in edits:
            self.at[edit.position].append((edit, PRIMITIVES[edit.kind](edit.params)))
        self.applied: list[Edit] = []
        self.imports: list[tuple[str, str]] = []
        self._after: list[list[cst.BaseStatement]] = []
        self._moved: list[list[cst.BaseSmallStatement]] = []

    def _position(self, node: cst.CSTNode) -> tuple[int, int] | None:
        position = self.get_metadata(PositionProvider, node, None)
        return (position.start.line, position.start.column + 1) if position else None

    def _fire(self, edit: Edit, primitive: Primitive, updated: cst.CSTNode):
        result = primitive.apply(updated)
        if result is not updated or primitive.after or primitive.imports:
            self.applied.append(edit)
        if self._after:
            self._after[-1].extend(primitive.after)
        self.imports.extend(primitive.imports)
        primitive.after, primitive.imports = [], []
        return result

    def on_leave(self, original_node, updated_node):
        # primitives first; then the statement-level work of the leave_ methods below
        updated = updated_node
        key = self._position(original_node)
        for edit, primitive in self.at.get(key, ()):
            anchored = getattr(primitive, "anchor", None) == "argument"
            if isinstance(original_node, primitive.node_type) and not anchored:
                if not isinstance(primitive, MoveImport):
                    updated = self._fire(edit, primitive, updated)
        if isinstance(original_node, cst.Call) and original_node.args:
            for edit, primitive in self.at.get(self._position(original_node.args[0].value), ()):
                if getattr(primitive, "anchor", None) == "argument":
                    updated = self._fire(edit, primitive, updated)
        if isinstance(updated, cst.CSTNode) and type(updated) is type(original_node):
            return super().on_leave(original_node, updated)
        return updated

    def visit_SimpleStatementLine(self, node) -> None:
        self._after.append([])
        self._moved.append([])

    def leave_ImportFrom(self, original_node, updated_node):
        moves = {}
        for alias in original_node.names if isinstance(original_node.names, tuple) else ():
            for edit, primitive in self.at.get(self._position(alias), ()):
                if isinstance(primitive, MoveImport):
                    moves[edit.params["name"]] = edit.params["new_module"]
                    self.applied.append(edit)
        if not moves:
            return updated_node
        kept, new_statements = move_names(updated_node, moves)
        if self._moved:
            self._moved[-1].extend(new_statements)
        return kept if kept is not None else cst.RemoveFromParent()

    def leave_SimpleStatementLine(self, original_node, updated_node):
        after, moved = self._after.pop(), self._moved.pop()
        if not after and not moved:
            return updated_node
        lines = []
        if updated_node.body:
            lines.append(updated_node)
        for statement in moved:
            lines.append(
                cst.SimpleStatementLine(body=[statement], leading_lines=[])
                if updated_node.body
                else updated_node.with_changes(body=[statement])
            )
        lines.extend(after)
        return cst.FlattenSentinel(lines) if lines else cst.RemoveFromParent()

    def leave_Module(self, original_node, updated_node):
        return insert_imports(updated_node, self.imports)


def rewrite(path: str, source: str, edits: list[Edit]) -> FileChange:
    """Apply the edits to one file's source; the result always parses, or nothing changes."""
    change = FileChange(path, source, source)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        change.skipped = [(e, f"does not parse: {exc.message}") for e in edits]
        return change
    except RecursionError:
        change.skipped = [(e, "nested too deeply for the rewriter") for e in edits]
        return change
    composer = _Composer(edits)
    try:
        code = MetadataWrapper(module, unsafe_skip_copy=True).visit(composer).code
        cst.parse_module(code)
        compile(code, path, "exec")
    except (
        cst.ParserSyntaxError,
        SyntaxError,
        ValueError,
        RecursionError,
        cst.CSTValidationError,
    ) as exc:
        change.skipped = [(e, f"the result would not parse ({exc}); left unchanged") for e in edits]
        return change
    change.after = code
    applied = {id(e) for e in composer.applied}
    change.applied = [e for e in edits if id(e) in applied]
    change.skipped = [
        (e, "the code at that place no longer matches") for e in edits if id(e) not in applied
    ]
    return change


def apply_edits(files: ConsumerFiles | Path, edits: list[Edit]) -> list[FileChange]:
    """The edits applied to the consumer's files, as read by its index (once per run)."""
    if not isinstance(files, ConsumerFiles):
        files = ConsumerFiles(Path(files))
    by_file: dict[str, list[Edit]] = defaultdict(list)
    for edit in edits:
        by_file[edit.path].append(edit)
    changes = []
    for path in sorted(by_file):
        entry = files.get(path)
        source = entry.text if entry is not None else None
        if source is None:
            change = FileChange(path, "", "")
            change.skipped = [(e, "the file could not be read") for e in by_file[path]]
            changes.append(change)
            continue
        changes.append(rewrite(path, source, _unique(by_file[path])))
    return changes


def _unique(edits: list[Edit]) -> list[Edit]:
    seen, unique = set(), []
    for edit in edits:
        key = (
            edit.position,
            edit.kind,
            tuple(sorted((k, repr(v)) for k, v in edit.params.items())),
        )
        if key not in seen:
            seen.add(key)
            unique.append(edit)
    return unique


def write_atomically(path: Path, text: str, encoding: str = "utf-8", newline: str = "\n") -> None:
    """Write via a temporary file in the same folder and rename: never a half file. The
    text has "\n" newlines; `encoding` and `newline` are the file's own (its index entry)."""
    mode = path.stat().st_mode if path.exists() else None
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline=newline) as stream:
            stream.write(text)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
