"""Pack entries x usages -> findings (DA901 with a codemod, DA902 advisories)."""

from __future__ import annotations

import ast
import bisect
import hashlib
import itertools
from collections import defaultdict
from functools import partial
from pathlib import Path, PurePosixPath

from driftaudit import codes
from driftaudit.astwalk import walk
from driftaudit.drift import Differ
from driftaudit.findings import Finding, Fix
from driftaudit.match.members import MemberMatcher
from driftaudit.packs import MAX_TEXT_LINE, PackEntry
from driftaudit.pysource import Columns
from driftaudit.regexes import bounded, required_text
from driftaudit.usage import (
    AttributeNameUsage,
    CallUsage,
    ImportUsage,
    MemberUsage,
    Usage,
    UsageSet,
)
from driftaudit.usage.files import ConsumerFiles

# A whole-line comment in Python, shell, Dockerfiles, YAML or TOML: text patterns skip it.
_COMMENT = "#"
_AT = "at"  # a text pattern's group that marks the place to report


class PackMatcher:
    def __init__(
        self,
        differ: Differ,
        usages: UsageSet,
        members: MemberMatcher,
        root: Path,
        files: ConsumerFiles | None = None,
    ):
        self.differ = differ
        self.usages = usages
        self.members = members
        self.root = root
        self._files = files
        self._texts: list | None = None  # the consumer's text files
        self._canonical: dict[str, str] = {}
        self._by_member: dict[str, list[Usage]] | None = None
        self._calls: list[Usage] | None = None

    def canonical(self, symbol: str) -> str:
        """A path as the old tree defines it (re-exports followed), unknown tail kept."""
        if symbol not in self._canonical:
            found, consumed = self.differ.old.resolve_longest(symbol)
            parts = symbol.split(".")
            if found is None or consumed < 2:
                self._canonical[symbol] = symbol
            else:
                self._canonical[symbol] = ".".join([found.canonical, *parts[consumed:]])
        return self._canonical[symbol]

    # ---- patterns ------------------------------------------------------------------

    def _matches(self, pattern: dict, usage: Usage) -> str | None:
        """The confidence of a match ("certain" / "likely"), or None."""
        kind = pattern["kind"]
        if kind == "member":
            access = pattern.get("access", "any")
            cls, name = self.canonical(pattern["class"]), pattern["member"]
            if isinstance(usage, MemberUsage) and usage.member == name:
                if cls in self.members.classes_of(usage.receiver) and _access_ok(usage, access):
                    return "certain"
            if isinstance(usage, AttributeNameUsage) and usage.member == name:
                if cls in self.members.file_classes(usage.path) and _access_ok(usage, access):
                    return "likely"
            return None
        if kind == "call":
            target = self.canonical(pattern["symbol"])
            shape = None
            if isinstance(usage, CallUsage) and self.canonical(usage.symbol) == target:
                shape = usage
            if isinstance(usage, MemberUsage) and usage.call is not None:
                classes = self.members.classes_of(usage.receiver)
                if any(f"{cls}.{usage.member}" == target for cls in classes):
                    shape = usage.call
            return "certain" if shape is not None and _passes(pattern, shape) else None
        if kind in ("import", "reference"):
            if kind == "import" and not isinstance(usage, ImportUsage):
                return None
            symbol = getattr(usage, "symbol", "")
            if not symbol:
                return None
            target = pattern["symbol"]
            for candidate in {symbol, self.canonical(symbol)}:
                if candidate == target or candidate.startswith(target + "."):
                    return "certain"
        return None

    def _candidates(self, pattern: dict) -> list[Usage]:
        """The usages `pattern` may match (`_matches` decides): for a member pattern the
        usages of that member name; for a call pattern the plain calls and the method
        calls of its last name; every usage for the others. Spares `_matches` the
        thousands of pairs that cannot match (entries x usages)."""
        kind = pattern["kind"]
        if kind not in ("member", "call"):
            return self.usages.usages
        if self._by_member is None or self._calls is None:
            self._by_member, self._calls = defaultdict(list), []
            for usage in self.usages.usages:
                if isinstance(usage, (MemberUsage, AttributeNameUsage)):
                    self._by_member[usage.member].append(usage)
                elif isinstance(usage, CallUsage):
                    self._calls.append(usage)
        if kind == "member":
            return self._by_member.get(pattern["member"], [])
        name = self.canonical(pattern["symbol"]).rpartition(".")[2]
        methods = [u for u in self._by_member.get(name, []) if isinstance(u, MemberUsage)]
        return self._calls + methods

    def _text_matches(self, pattern: dict) -> list[tuple[str, int, int]]:
        """One place per matching line of the files the pattern's glob selects (per file
        and regex, cached by the file's content: `ConsumerFile.derived`)."""
        glob = pattern.get("glob", "*")
        regexes = [pattern["regex"], pattern.get("unless") or ""]
        key = "pack-text:" + hashlib.sha256("\0".join(regexes).encode()).hexdigest()
        found = []
        for file in self._text_files():
            if PurePosixPath(file.rel).match(glob):
                compute = partial(_file_text_matches, file, *regexes)
                found += [(file.rel, line, column) for line, column in file.derived(key, compute)]
        return found

    def _text_files(self) -> list:
        """Every text file of the consumer, from its index, in path order."""
        if self._texts is None:
            if self._files is None:
                self._files = ConsumerFiles(self.root)  # walked here, once
            self._texts = sorted((f for f in self._files if f.text), key=lambda f: f.rel)
        return self._texts

    # ---- findings --------------------------------------------------------------------

    def findings(self, entries: list[PackEntry]) -> list[Finding]:
        findings = []
        for entry in entries:
            within = self._files_matching(entry.within) if entry.within else None
            after = self._first_in_scope(entry.after) if entry.after else None
            # (path, line, column, confidence, the token to point at or None)
            places: list[tuple] = []
            for pattern in entry.patterns:
                if pattern["kind"] == "text":
                    places += [
                        (*place, "certain", None)
                        for place in self._text_matches(pattern)
                        if within is None or place[0] in within
                    ]
                    continue
                for usage in self._candidates(pattern):
                    confidence = self._matches(pattern, usage)
                    if not confidence or (within is not None and usage.path not in within):
                        continue
                    if after is not None:
                        first = after.get((usage.path, usage.scope))
                        if first is None or first >= (usage.line, usage.column):
                            continue
                    place = (usage.path, usage.line, usage.column, confidence, usage.focus)
                    places.append(place)
            for *place, focus in sorted(set(places), key=lambda p: p[:4]):
                finding = self._finding(entry, *place)
                if focus is not None:  # at the token; the codemod still edits the node
                    finding.anchor = (finding.line, finding.column)
                    finding.line, finding.column, finding.end_line, finding.end_column = focus
                findings.append(finding)
        return findings

    # `within` and `after` are answered from one pass over the condition pattern's
    # candidates per entry, not by a scan of the file's usages per place: that was
    # quadratic in the usages of one file (a 1 MB file took a minute).

    def _files_matching(self, pattern: dict) -> set[str]:
        """`within`: the files in which `pattern` matches a usage."""
        return {u.path for u in self._candidates(pattern) if self._matches(pattern, u)}

    def _first_in_scope(self, pattern: dict) -> dict[tuple[str, int], tuple[int, int]]:
        """`after`: (path, scope) -> the first (line, column) where `pattern` matches; a
        place comes after it when its own position is later, in the same function."""
        first: dict[tuple[str, int], tuple[int, int]] = {}
        for usage in self._candidates(pattern):
            if self._matches(pattern, usage):
                key, position = (usage.path, usage.scope), (usage.line, usage.column)
                if key not in first or position < first[key]:
                    first[key] = position
        return first

    def _finding(self, entry: PackEntry, path, line, column, confidence) -> Finding:
        symbol = _entry_symbol(entry)
        old = self.differ.old.resolve(self.canonical(symbol)) if symbol else None
        new = self.differ.new.resolve(symbol) if symbol else None
        steps = [{"kind": s["primitive"], **_params(s)} for s in entry.codemod]
        certain = confidence == "certain"
        edit = {"steps": steps} if steps and certain else None
        fix = Fix(_first_sentence(entry.message), edit) if steps else None
        code = codes.PACK_CHANGE if entry.codemod else codes.PACK_ADVISORY
        severity = entry.severity if certain else "warning"
        message = f"[{entry.id}] {entry.message} (evidence: {entry.evidence})"
        return Finding(
            code,
            path,
            line,
            column,
            symbol or "",
            message,
            old.location if old else None,
            new.location if new else None,
            fix,
            severity=severity,
            confidence=confidence,
            introduced=entry.introduced,
        )


def _access_ok(usage, access: str) -> bool:
    if access == "any":
        return True
    if access == "store":
        return usage.store
    if access == "call":
        return getattr(usage, "call", None) is not None
    return not usage.store and getattr(usage, "call", None) is None


def _params(step: dict) -> dict:
    return {k: v for k, v in step.items() if k != "primitive"}


def _entry_symbol(entry: PackEntry) -> str | None:
    pattern = entry.patterns[0]
    if pattern["kind"] == "member":
        return f"{pattern['class']}.{pattern['member']}"
    return pattern.get("symbol")


def _first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".")


def _passes(pattern: dict, shape) -> bool:
    """Does the call pass the pattern's keyword (if any), with a value it cares about?"""
    keyword = pattern.get("keyword")
    if keyword is None:
        return True
    if keyword not in shape.keywords:
        return False
    return pattern.get("value", "any") != "maybe-none" or keyword not in shape.never_none


def _file_text_matches(file, regex: str, unless: str | None = None) -> list[tuple[int, int]]:
    """(line, column) of the first match of `regex` on each line of one file (at its
    `at` group when it has one), unless `unless` matches the line too: lines longer than
    MAX_TEXT_LINE are skipped, so a regex never runs on an unbounded string, and the
    engine is RE2 (linear in the line, for any pattern); so are whole-line comments and,
    in Python, matches inside a string literal (prose: a docstring, a help text). A file
    without the text every match contains is not searched line by line (most files, for
    most patterns)."""
    needed = required_text(regex)
    if needed is not None and needed not in file.text:
        return []
    compiled = bounded(regex)
    search, group = compiled.search, compiled.groupindex.get(_AT)
    excluded = bounded(unless).search if unless else None
    found = []
    lines = file.text.split("\n")  # ast's lines (str.splitlines knows more line ends)
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_TEXT_LINE or line.lstrip().startswith(_COMMENT):
            continue  # a comment line documents, it installs or runs nothing
        match = search(line)
        if match is None or (excluded is not None and excluded(line) is not None):
            continue
        at = match.start(group) if group is not None else -1  # -1: the group took no part
        found.append((number, (at if at >= 0 else match.start()) + 1))
    if not found or not file.rel.endswith(".py"):
        return found
    tree = file.tree
    columns = Columns(file.text)
    strings = sorted(
        columns.span(node)
        for node in (walk(tree) if tree is not None else ())
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )
    starts = [(span.line, span.column) for span in strings]
    reach = list(itertools.accumulate(((s.end_line, s.end_column) for s in strings), max))
    # a place is inside a string when one starting at or before it ends after it: the
    # furthest end among those (spans sorted by start) says it, in log time per place
    return [
        place
        for place in found
        if not (index := bisect.bisect_right(starts, place)) or reach[index - 1] <= place
    ]
