"""Compose the primitives over one file and check the result (writing: `write.py`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

from driftaudit.fix.codemods import PRIMITIVES, Primitive
from driftaudit.fix.codemods.add_import import ImportNames, insert_imports
from driftaudit.fix.codemods.guard_import import GuardImport, guard_names, try_statement
from driftaudit.fix.codemods.move_import import MoveImport, move_names
from driftaudit.fix.codemods.replace_text import ReplaceText
from driftaudit.fix.edits import Edit, unique
from driftaudit.fix.patch import unified_diff
from driftaudit.fix.source import (
    ChangedSinceScan,
    Source,
    UnreadableSource,
    decode,
    parses,
    source_of,
)
from driftaudit.fix.text import rewrite_text
from driftaudit.usage.files import ConsumerFiles


@dataclass
class FileChange:
    path: str
    source: Source | None  # None when the file could not be read
    after: str
    applied: list[Edit] = field(default_factory=list)
    skipped: list[tuple[Edit, str]] = field(default_factory=list)  # and why

    @property
    def before(self) -> str:
        return self.source.text if self.source else ""

    @property
    def changed(self) -> bool:
        return self.source is not None and self.before != self.after

    def data(self) -> bytes:
        """The new file's bytes: its encoding, BOM and newlines as they were."""
        return self.source.encode(self.after)

    def diff(self) -> str:
        return unified_diff(self.path, self.before, self.after)


class _Frame:
    """What the statement being left gets added: statements after it, moved imports."""

    def __init__(self, suite: bool = False):
        self.suite = suite  # a one-line suite: no room for a compound statement
        self.after: list[cst.BaseStatement] = []
        self.moved: list[cst.BaseSmallStatement] = []
        # (first, fallback, the first is as written) of each `try`
        self.guards: list[tuple[cst.ImportFrom, cst.ImportFrom, bool]] = []
        self.pending: list[Edit] = []  # applied once `after` is in place


class _Composer(cst.CSTTransformer):
    """One pass over the original tree; each edit fires on the node at its position."""

    METADATA_DEPENDENCIES = (PositionProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, placed: list[tuple[tuple[int, int], Edit]]):
        super().__init__()
        self.at: dict[tuple[int, int], list[tuple[Edit, Primitive]]] = defaultdict(list)
        self.spans: dict[int, list[tuple[Edit, ReplaceText]]] = defaultdict(list)  # by line
        for position, edit in placed:
            primitive = PRIMITIVES[edit.kind](edit.params)
            if isinstance(primitive, ReplaceText):
                self.spans[position[0]].append((edit, primitive))
            else:
                self.at[position].append((edit, primitive))
        self.applied: list[Edit] = []
        self.names: ImportNames | None = None
        self._frames: list[_Frame] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.names = ImportNames(node)
        for primitives in self.at.values():
            for _, primitive in primitives:
                primitive.names = self.names

    def _position(self, node: cst.CSTNode) -> tuple[int, int] | None:
        position = self.get_metadata(PositionProvider, node, None)
        return (position.start.line, position.start.column + 1) if position else None

    def _fire(self, edit: Edit, primitive: Primitive, original, updated: cst.CSTNode):
        primitive.scope = self.get_metadata(ScopeProvider, original, None)
        result = primitive.apply(updated)
        after, primitive.after = primitive.after, []
        if not after:
            if result is not updated:
                self.applied.append(edit)
            return result
        if not self._frames:
            return updated  # nowhere to put the statements: not applied
        self._frames[-1].after.extend(after)
        self._frames[-1].pending.append(edit)  # applied once the statement takes them
        return result

    def on_leave(self, original_node, updated_node):
        # primitives first; then the statement-level work of the leave_ methods below
        updated = updated_node
        key = self._position(original_node)
        for edit, primitive in self.at.get(key, ()):
            anchored = getattr(primitive, "anchor", None) == "argument"
            if isinstance(original_node, primitive.node_type) and not anchored:
                if not isinstance(primitive, (MoveImport, GuardImport)):
                    updated = self._fire(edit, primitive, original_node, updated)
        if isinstance(original_node, cst.Call) and original_node.args:
            for edit, primitive in self.at.get(self._position(original_node.args[0].value), ()):
                if getattr(primitive, "anchor", None) == "argument":
                    updated = self._fire(edit, primitive, original_node, updated)
        if self.spans and isinstance(original_node, ReplaceText.node_types):
            updated = self._replace_text(original_node, updated)
        if isinstance(updated, cst.CSTNode) and type(updated) is type(original_node):
            return super().on_leave(original_node, updated)
        return updated

    def _replace_text(self, original, updated):
        """The replace-text edits whose span lies in this string (or is this name)."""
        where = self.get_metadata(PositionProvider, original, None)
        if where is None:
            return updated
        lines = cst.Module(body=[]).code_for_node(original).split("\n")
        inside = []
        for line in range(where.start.line, where.end.line + 1):
            for edit, primitive in self.spans.get(line, ()):
                index = line - where.start.line
                column = edit.column - 1 - (where.start.column if index == 0 else 0)
                if 0 <= column <= len(lines[index]):
                    offset = sum(len(text) + 1 for text in lines[:index]) + column
                    inside.append((offset, edit, primitive))
        lineage = [original, *self._parents(original)] if inside else []
        for offset, edit, primitive in sorted(inside, key=lambda i: -i[0]):  # last first
            primitive.offset, primitive.lineage = offset, lineage
            result = self._fire(edit, primitive, original, updated)
            updated = result if isinstance(result, type(updated)) else updated
        return updated

    def _parents(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        parents = []
        while (node := self.get_metadata(ParentNodeProvider, node, None)) is not None:
            parents.append(node)
            if isinstance(node, cst.BaseStatement):
                break
        return parents

    def visit_SimpleStatementLine(self, node) -> None:
        self._frames.append(_Frame())

    def visit_SimpleStatementSuite(self, node) -> None:
        self._frames.append(_Frame(suite=True))

    def leave_ImportFrom(self, original_node, updated_node):
        moves, guards = {}, {}
        frame = self._frames[-1] if self._frames else None
        for alias in original_node.names if isinstance(original_node.names, tuple) else ():
            for edit, primitive in self.at.get(self._position(alias), ()):
                params = edit.params
                if isinstance(primitive, MoveImport):
                    moves[params["name"]] = (params["new_module"], params.get("new_name"))
                    self.applied.append(edit)
                elif isinstance(primitive, GuardImport) and frame is not None and not frame.suite:
                    guards[params["name"]] = (
                        params["new_module"],
                        params.get("new_name"),
                        params.get("keep_first", False),
                    )
                    self.applied.append(edit)
        if not moves and not guards:
            return updated_node
        kept: cst.ImportFrom | None = updated_node
        if guards:
            kept, pairs = guard_names(updated_node, guards)
            assert frame is not None
            frame.guards.extend(pairs)
        if moves and kept is not None:
            kept, new_statements, bindings = move_names(kept, moves)
            self._frames[-1].moved.extend([*new_statements, *bindings])
        return kept if kept is not None else cst.RemoveFromParent()

    def leave_SimpleStatementLine(self, original_node, updated_node):
        frame = self._frames.pop()
        self.applied.extend(frame.pending)
        if not frame.after and not frame.moved and not frame.guards:
            return updated_node
        lines: list[cst.BaseStatement] = []
        if updated_node.body:
            lines.append(updated_node)
        for first, fallback, written in frame.guards:  # the first takes the line's comments
            gone = not lines and not frame.moved
            lines.append(try_statement(first, fallback, updated_node if gone else None, written))
        for statement in frame.moved:
            lines.append(
                cst.SimpleStatementLine(body=[statement], leading_lines=[])
                if updated_node.body
                else updated_node.with_changes(body=[statement])
            )
        lines.extend(frame.after)
        return cst.FlattenSentinel(lines) if lines else cst.RemoveFromParent()

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        """`if c: req.fill_ids = ids` -> `if c: req.full_... = ...; req.fill_len = ...`."""
        frame = self._frames.pop()
        self.applied.extend(frame.pending)
        if not frame.after and not frame.moved:
            return updated_node
        body = list(updated_node.body) + frame.moved
        for statement in frame.after:
            body.extend(statement.body)
        body = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body]
        return updated_node.with_changes(body=body)

    def leave_Module(self, original_node, updated_node):
        return insert_imports(updated_node, self.names.new if self.names else [])


def parse(source: Source) -> MetadataWrapper:
    """One file's tree with its metadata (positions, scopes) resolved on first use: shared
    by every `rewrite` of that file (the tree is immutable; a rewrite builds a new one)."""
    return MetadataWrapper(cst.parse_module(source.text), unsafe_skip_copy=True)


def rewrite(
    path: str, source: Source | str, edits: list[Edit], parsed: MetadataWrapper | None = None
) -> FileChange:
    """Apply the edits to one file's source; the result always parses, or nothing changes.
    `parsed`: the source's `parse()`, when several rewrites of one file are asked for."""
    if isinstance(source, str):
        source = decode(source.encode("utf-8"))
    change = FileChange(path, source, source.text)
    invalid = [(e, why) for e in edits if (why := _invalid(e)) is not None]
    if invalid:
        skipped = {id(e) for e, _ in invalid}
        edits = [e for e in edits if id(e) not in skipped]
    if not path.endswith((".py", ".pyi")):
        change.after, change.applied, change.skipped = rewrite_text(path, source, edits)
        change.skipped += invalid
        return change
    change.skipped = invalid
    if not edits:
        return change
    try:
        wrapper = parsed or parse(source)
    except cst.ParserSyntaxError as exc:
        change.skipped += [(e, f"does not parse: {exc.message}") for e in edits]
        return change
    except RecursionError:
        change.skipped += [(e, "nested too deeply for the rewriter") for e in edits]
        return change
    placed = [(e.position, e) for e in edits]
    composer = _Composer(placed)
    try:
        code = wrapper.visit(composer).code
        cst.parse_module(code)
        problem = parses(source.encode(code), path)
    except (cst.ParserSyntaxError, ValueError, RecursionError, cst.CSTValidationError) as exc:
        problem = str(exc)  # UnicodeEncodeError is a ValueError: new text the encoding lacks
    if problem is not None:
        change.skipped += [
            (e, f"the result would not parse ({problem}); left unchanged") for e in edits
        ]
        return change
    change.after = code
    applied = {id(e) for e in composer.applied}
    why = {id(e): p.why for spans in composer.spans.values() for e, p in spans}
    change.applied = [e for e in edits if id(e) in applied]
    change.skipped += [
        (e, why.get(id(e), "the code at that place no longer matches"))
        for e in edits
        if id(e) not in applied
    ]
    return change


def _invalid(edit: Edit) -> str | None:
    """Why an edit cannot be made (an unknown primitive, parameters its primitive does not
    declare or of the wrong type), or None."""
    primitive = PRIMITIVES.get(edit.kind)
    if primitive is None:
        return f"unknown codemod primitive {edit.kind!r}"
    try:
        primitive(edit.params)
    except ValueError as exc:
        return str(exc)
    return None


def apply_edits(
    files: ConsumerFiles | Path, edits: list[Edit], scanned_at: int | None = None
) -> list[FileChange]:
    """Each file's new content (nothing is written here), from the consumer's files as
    its index read them (once per run); a file modified after `scanned_at` (ns) is left
    alone."""
    if not isinstance(files, ConsumerFiles):
        files = ConsumerFiles(Path(files))
    by_file: dict[str, list[Edit]] = defaultdict(list)
    for edit in edits:
        by_file[edit.path].append(edit)
    changes = []
    for path in sorted(by_file):
        edits_here = unique(by_file[path])
        try:
            source = source_of(files.get(path), files.root / path, scanned_at)
        except ChangedSinceScan as exc:
            changes.append(FileChange(path, None, "", skipped=[(e, str(exc)) for e in edits_here]))
            continue
        except (OSError, UnreadableSource) as exc:
            reason = f"cannot read: {exc.strerror if isinstance(exc, OSError) else exc}"
            changes.append(FileChange(path, None, "", skipped=[(e, reason) for e in edits_here]))
            continue
        changes.append(rewrite(path, source, edits_here))
    return changes
