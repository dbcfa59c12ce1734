"""The fixes a report shows without writing them: SARIF's `fixes` (each autofixable,
certain finding's own rewrite of its file: a code-scanning alert offers the change that
closes it) and the HTML page's preview (each file with all its fixable findings'
edits). Unsafe fixes are included (a suggestion, not a write; the report says which).
Computed before the report layer, which renders only.

A file is read through the consumer's index and parsed at most once, its metadata
(positions, scopes) resolved once, however many findings it holds. What a rewrite gives
is a value derived from the file (`ConsumerFile.derived`, keyed by the file's bytes and
the edits): kept as the line hunks that turn the file into its rewrite, so a warm run
rewrites nothing (on miles 31f1, 0.5.16 -> 0.5.23: 85 rewrites of 65 files, 17-21 s of
CPU, each run)."""

from __future__ import annotations

import difflib
import hashlib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.findings import Finding
from driftaudit.fix.edits import Edit, edits_from_findings, unique
from driftaudit.usage.files import ConsumerFiles

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

    from driftaudit.fix.source import Source

# (first line, end line, text): lines [first, end) (0-based, ends kept) become the text
Hunk = tuple[int, int, str]


def suggestable(finding: Finding) -> bool:
    return bool(finding.fix and finding.fix.autofixable and finding.confidence == "certain")


def suggested_fixes(
    findings: list[Finding], files: ConsumerFiles | Path | None
) -> dict[int, list[Hunk]]:
    """`id(finding)` -> the line hunks of its own fix's rewrite of its file, for the
    findings whose fix changes their file (an unreadable or unparsable file: none)."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if files is not None and suggestable(finding):
            by_file[finding.path].append(finding)
    if files is None or not by_file:
        return {}
    index = _index(files)
    changes: dict[int, list[Hunk]] = {}
    for path, listed in by_file.items():
        edits = [edits_from_findings([finding], unsafe_fixes=True) for finding in listed]
        for finding, (_, hunks) in zip(listed, _rewrites(index, path, edits), strict=True):
            if hunks:
                changes[id(finding)] = hunks
    return changes


def previews(findings: list[Finding], files: ConsumerFiles | Path) -> dict[str, tuple[str, str]]:
    """{path: (before, after)} for every file the fixable findings' edits change, all of
    a file's edits together (what the fixer would write)."""
    by_file: dict[str, list[Edit]] = defaultdict(list)
    for edit in edits_from_findings(findings, unsafe_fixes=True):
        by_file[edit.path].append(edit)
    index = _index(files)
    shown = {}
    for path, edits in sorted(by_file.items()):
        ((before, hunks),) = _rewrites(index, path, [unique(edits)])
        if hunks:
            shown[path] = (before, _patched(before, hunks))
    return shown


def _index(files: ConsumerFiles | Path) -> ConsumerFiles:
    """The consumer's file index (walked once, when given its folder)."""
    return files if isinstance(files, ConsumerFiles) else ConsumerFiles(Path(files))


def _rewrites(
    index: ConsumerFiles, path: str, edit_sets: list[list[Edit]]
) -> list[tuple[str, list[Hunk]]]:
    """(the text of `path`, the hunks of its rewrite) under each set of edits; no hunks
    when the file cannot be read, does not parse or the edits change nothing."""
    from driftaudit.fix.source import UnreadableSource, source_of

    entry = index.get(path)
    try:
        source = source_of(entry, index.root / path)
    except (OSError, UnreadableSource):
        return [("", [])] * len(edit_sets)
    parsed: list[MetadataWrapper | None] = []  # parsed on the first rewrite, then shared

    def rewritten(edits: list[Edit]) -> Callable[[], list[Hunk]]:
        def compute() -> list[Hunk]:
            return _hunks(source.text, _rewrite(path, source, edits, parsed))

        return compute

    lines = len(source.text.splitlines())
    results = []
    for edits in edit_sets:
        compute = rewritten(edits)
        hunks = None
        if entry is not None and entry.text is not None:
            hunks = entry.derived(f"rewrite:{source.digest}:{_digest(edits)}", compute, list)
        if hunks is None or not _fits(hunks, lines):  # a stored value of another shape
            hunks = compute()
        results.append((source.text, hunks))
    return results


def _rewrite(path: str, source: Source, edits: list[Edit], parsed: list) -> str:
    """The file's text after `edits` (unchanged when it does not parse)."""
    import libcst as cst  # only when a fix is computed

    from driftaudit.fix.apply import parse, rewrite

    if path.endswith((".py", ".pyi")) and not parsed:
        try:
            parsed.append(parse(source))
        except (cst.ParserSyntaxError, RecursionError):
            parsed.append(None)
    if path.endswith((".py", ".pyi")) and parsed[0] is None:
        return source.text  # rewrite would change nothing either
    return rewrite(path, source, edits, parsed[0] if parsed else None).after


def _digest(edits: list[Edit]) -> str:
    text = repr([(e.position, e.kind, sorted(e.params.items(), key=repr)) for e in edits])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _hunks(before: str, after: str) -> list[Hunk]:
    """The line replacements that turn `before` into `after`."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [
        (i1, i2, "".join(new[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _fits(hunks: list, lines: int) -> bool:
    """Are these hunks of a file of `lines` lines, in order, not overlapping?"""
    at = 0
    for hunk in hunks:
        if not (isinstance(hunk, tuple) and len(hunk) == 3 and isinstance(hunk[2], str)):
            return False
        first, end, _ = hunk
        if not (isinstance(first, int) and isinstance(end, int) and at <= first <= end <= lines):
            return False
        at = end
    return True


def _patched(before: str, hunks: list[Hunk]) -> str:
    old = before.splitlines(keepends=True)
    out, at = [], 0
    for first, end, text in hunks:
        out += old[at:first]
        out.append(text)
        at = end
    return "".join(out + old[at:])
