"""Which parts of a Python file the surface scanner parses, and how (the comment below)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from driftaudit.pysource import parse_region
from driftaudit.usage.files import ConsumerFile
from driftaudit.usage.surface_uses.prefixes import Prefixes
from driftaudit.usage.surface_uses.python_scan import (
    HTTP_CALL_LINE,
    Helper,
    PendingCall,
    PythonScan,
)
from driftaudit.usage.surface_uses.records import SurfaceUsages
from driftaudit.usage.surface_uses.sink import (
    Sink,
    Text,
)
from driftaudit.usage.surface_uses.structured import (
    strip_comment,
)

# Python files: candidate lines -> units -> ast.
#
# Parsing every file would cost seconds on a large consumer (miles: ~1,200 files). A literal
# search finds the lines that can matter (`SGLANG_`, a prefix, `.sglang_`, `launch_server`,
# a quoted "/route", `://`, `{base}/route`), skipping comments. Each line is widened to a
# unit and only the units are parsed, where they stand in the file (`pysource.parse_region`:
# lines and columns are those of the file):
#   - a flag, env var or attribute: its statement;
#   - a route, a launcher or a class field: its outermost function (or class), because
#     the URL may sit in a variable, the payload in a dict built above, the argv in a list
#     appended to later.
# Expressions are visited only in the statements touching a hot line (a candidate, or a
# line that may make an HTTP call); assignments are recorded everywhere, for lookups.
# A unit that does not parse on its own (a guess gone wrong around a multi-line string,
# a backslash continuation) is widened to its function, then to the whole file; units
# covering most of a file make it parse whole. A file usage collection has parsed already
# (it imports sglang) is read from that tree, units unparsed. Once every file is read, the
# calls of the request helpers found (`_make_request("flush_cache", ...)`) are read in
# their units.

_URL_LITERALS = re.compile(r"://|\"/|'/|\}/")
_URL_SCHEME_AT = re.compile(r"""(?:https?|wss?)://[^"'\s/]*/[A-Za-z0-9_{]""")
_URL_PATH_AT = re.compile(r"""/(?!(?:tmp|home|root|usr|dev|proc|sys|etc|var|opt|mnt)/)"""
                          r"""[A-Za-z_{][\w{}.~/-]*["'?]""")  # fmt: skip
_URL_FIELD_AT = re.compile(r"""\}/(?:[A-Za-z_][\w/.~-]*(?:["'?]|\{)|\{[\w.]+\}["'])""")
_CLASS_FIELD_AT = re.compile(r"\w+[ \t]*:[ \t]*[\w\"'\[]")
_KEYWORD_AT = re.compile(r"\w+[ \t]*=(?!=)")
_BASE_HINTS = ("url", "base", "host", "addr", "endpoint", "server", "api", "router", "uri")
_DEF_HEADER = re.compile(r"(?:async[ \t]+)?def[ \t]")
_STATEMENT_HEADER = re.compile(r"(?:async[ \t]+)?def[ \t]|class[ \t]|@")
_CONTINUATIONS = ("else", "elif", "except", "finally", ")", "]", "}")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)


def find_all(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def py_candidates(text: str, wrap: Prefixes) -> tuple[list[int], list[int], bool]:
    """Offsets in a Python file where a flag or env var (first list) or a route or a
    launcher (second list: they need their function) may be written, and whether an
    sglang launcher is named (its argv may then be built anywhere in its function)."""
    found: list[int] = []

    def every(needle: str) -> Iterator[int]:
        return find_all(text, needle)

    launch = [*every("launch_server")]
    launch += [at for at in every("sglang serve") if not text[at + 12 : at + 13].isalnum()]
    scoped: list[int] = list(launch)
    for needle in ("SGLANG_", "SGL_", *wrap.dash):
        found.extend(every(needle))
    for needle in wrap.dash:  # the consumer's own `add_argument("--sglang-x")`: its dest
        scoped.extend(at for at in every(needle) if text[at - 14 : at - 1] == "add_argument(")
    for form, _ in wrap.py:  # args.sglang_x, getattr(args, "sglang_x"), class fields
        for at in every(form):
            before = text[at - 1 : at]
            if before in (".", '"', "'"):
                found.append(at)
            elif before in (" ", "\t") and _CLASS_FIELD_AT.match(text, at):
                scoped.append(at)  # `    sglang_tp_size: int = 1`: its unit is the class
            elif before in ("(", ",", " ", "\t", "\n") and _KEYWORD_AT.match(text, at):
                found.append(at)  # parser.set_defaults(sglang_tp_size=4)
    for m in _URL_LITERALS.finditer(text):
        at, hit = m.start(), m.group()
        if hit == "://":
            scheme = 5 if text[at - 5 : at] == "https" else 4
            quoted = text[at - scheme - 1 : at - scheme] in ("'", '"')
            if quoted and _URL_SCHEME_AT.match(text, at - scheme):
                scoped.append(at)
        elif hit == "}/":
            if _URL_FIELD_AT.match(text, at) and _base_field_at(text, at):
                scoped.append(at)
        elif _URL_PATH_AT.match(text, at + 1):
            scoped.append(at)
    return found, scoped, bool(launch)


def _base_field_at(text: str, at: int) -> bool:
    """`{base_url}/generate`: does the field closing at `at` name a base URL, or does
    its line make an HTTP call? (`f"{args.save_dir}/checkpoints"` does neither.)"""
    field = text[text.rfind("{", max(0, at - 80), at) + 1 : at].lower()
    if any(word in field for word in _BASE_HINTS):
        return True
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    return (
        HTTP_CALL_LINE.search(text, line_start, line_end if line_end >= 0 else len(text))
        is not None
    )


def _imported_names(text: str) -> set[str]:
    names: set[str] = set()
    for m in _IMPORT.finditer(text):
        for part in m.group(1).split(","):
            words = part.split()
            if words:
                names.add(words[-1] if len(words) == 3 else words[0].split(".")[0])
    for m in _FROM_IMPORT.finditer(text):
        for part in m.group(1).strip("()\\ \n").split(","):
            words = part.split()
            if words:
                names.add(words[-1])
    return names


_TRIPLE = re.compile("\"\"\"|'''")


class PyFile:
    def __init__(self, entry: ConsumerFile, out: SurfaceUsages, wrap: Prefixes):
        text = entry.text or ""
        self.entry = entry
        self.text = text
        self.sink = Sink(entry.rel, Text(text), out, wrap)
        self.lines = text.split("\n")
        self._indents: dict[int, int | None] = {}
        self.in_string = self._string_lines()
        self.units: set[int] = set()  # first lines of the units read already
        self.whole = False
        self._imported: set[str] | None = None

    def _string_lines(self) -> set[int]:
        """0-based lines that start inside a triple-quoted string (a close guess)."""
        inside: set[int] = set()
        if '"""' not in self.text and "'''" not in self.text:
            return inside
        opened: tuple[str, int] | None = None
        for m in _TRIPLE.finditer(self.text):
            line, column = self.sink.text.pos(m.start())
            if opened is None:
                if "#" not in self.lines[line - 1][: column - 1]:
                    opened = (m.group(), line - 1)
            elif m.group() == opened[0]:
                inside.update(range(opened[1] + 1, line))
                opened = None
        return inside

    def indent(self, i: int) -> int | None:
        """Indentation of a 0-based line; None for blank, comment and string lines."""
        if i not in self._indents:
            line = self.lines[i]
            stripped = line.lstrip()
            blank = not stripped or stripped.startswith("#") or i in self.in_string
            self._indents[i] = None if blank else len(line) - len(stripped)
        return self._indents[i]

    def imported_names(self) -> set[str]:
        if self._imported is None:
            self._imported = _imported_names(self.text)
        return self._imported

    def _hot(self, offsets: list[int], start: int, end: int) -> list[int]:
        """1-based lines of a unit where a candidate sits or an HTTP call may be made."""
        lines = {self.sink.text.pos(at)[0] for at in offsets}
        for i in range(start, end):
            line = self.lines[i]
            if "(" in line and HTTP_CALL_LINE.search(line):
                lines.add(i + 1)
        return sorted(lines)

    def scan(self, plain: list[int], scoped: list[int], launch: bool,
             helpers: dict[str, Helper], pending: list[PendingCall],
             rescan: bool = False) -> None:  # fmt: skip
        """Parse and read the units holding the candidate offsets: the enclosing function
        for `scoped` ones (routes, launchers: they need the function's names), the
        enclosing statement for the others. `rescan` reads units read before again (for
        the calls of request helpers found since: only their lines are visited)."""
        if self.whole and not rescan:
            return
        if not rescan and self.entry.parsed:  # the whole tree is there already: no units
            kept = [at for at in (*scoped, *plain) if not self._in_comment(at)]
            return self._scan_whole(kept, launch, helpers, pending)
        kept: list[int] = []
        units: list[tuple[int, int]] = []
        for offsets, widen in ((scoped, self._unit), (plain, self._statement)):
            for line, at in sorted((self.sink.text.pos(at)[0] - 1, at) for at in offsets):
                if line not in self.in_string and self.lines[line].lstrip().startswith("#"):
                    continue  # a comment
                kept.append(at)
                if any(start <= line < end for start, end in units):
                    continue
                unit = widen(line)
                if unit is None:
                    return self._scan_whole(offsets, launch, helpers, pending)
                units.append(unit)
        units.sort(key=lambda u: (u[0], -u[1]))
        todo: list[tuple[int, int]] = []
        for start, end in units:  # drop the units inside another
            if todo and start < todo[-1][1]:
                continue
            if rescan or start not in self.units:
                todo.append((start, end))
        if not rescan and sum(end - start for start, end in todo) * 2 > len(self.lines):
            return self._scan_whole(kept, launch, helpers, pending)
        trees = []
        for start, end in todo:
            tree = self._parse(start, end)
            if tree is None:
                unit = self._unit(start)
                tree = self._parse(*unit) if unit else None
                if tree is None:
                    return self._scan_whole(kept, launch, helpers, pending)
                start, end = unit
            trees.append((start, end, tree))
        scan = PythonScan(self.sink, self.lines, self.imported_names, helpers, pending)
        for start, end, tree in trees:
            self.units.add(start)
            if rescan:
                scan.run(tree, sorted({self.sink.text.pos(at)[0] for at in kept}))
            else:
                scan.run(tree, None if launch else self._hot(kept, start, end))

    def _in_comment(self, at: int) -> bool:
        line = self.sink.text.pos(at)[0] - 1
        return line not in self.in_string and self.lines[line].lstrip().startswith("#")

    def _parse(self, start: int, end: int) -> ast.Module | None:
        """Parse lines [start, end) where they stand (lines and columns of the file)."""
        code = "\n".join(self.lines[start:end])
        return parse_region(code, start + 1, bool(self.indent(start)), self.entry.rel)

    def _statement(self, index: int) -> tuple[int, int] | None:
        """(first, end) 0-based lines of the statement holding a line (a close guess: a
        unit that does not parse is widened to its function)."""
        lines = self.lines
        level = self.indent(index)
        start = index
        if lines[index].lstrip().startswith(_CONTINUATIONS[:4]):  # else/elif/except/finally
            return self._unit(index)
        if level is None or lines[index].lstrip().startswith(_CONTINUATIONS):
            level, start = 1 << 30, None
        for i in range(index - 1, -1, -1):
            indent = self.indent(i)
            if indent is None or indent >= level:
                continue
            stripped = lines[i].lstrip()
            if stripped.startswith(_CONTINUATIONS):
                continue
            if strip_comment(stripped).endswith(":"):
                break  # a block header: the statement starts below it
            start, level = i, indent
            if indent == 0:
                break
        if start is None:
            return self._unit(index)
        return start, self._end(start)

    def _end(self, start: int) -> int:
        lines, indent = self.lines, self.indent(start)
        decorating = lines[start].lstrip().startswith("@")
        end = start + 1
        while end < len(lines):
            current = self.indent(end)
            if current is not None and current <= indent:
                stripped = lines[end].lstrip()
                if decorating and stripped.startswith("@"):
                    pass
                elif decorating and _STATEMENT_HEADER.match(stripped):
                    decorating = False
                elif not (stripped.startswith(_CONTINUATIONS) and current == indent):
                    break
            end += 1
        return end

    def _scan_whole(self, offsets: list[int], launch: bool, helpers: dict[str, Helper],
                    pending: list[PendingCall]) -> None:  # fmt: skip
        self.whole = True
        tree = self.entry.tree  # parsed once per run, shared with usage collection
        if tree is None:
            return
        hot = None if launch else self._hot(offsets, 0, len(self.lines))
        scan = PythonScan(self.sink, self.lines, self.imported_names, helpers, pending)
        scan.run(tree, hot)

    def _unit(self, index: int) -> tuple[int, int] | None:
        """(first, end) 0-based lines of the unit holding a line: its outermost enclosing
        function, else its top-level statement. None when the structure is unclear."""
        lines = self.lines
        level = self.indent(index)
        if level is None or lines[index].lstrip().startswith(_CONTINUATIONS):
            level = 1 << 30
        outer_def = top = None
        for i in range(index, -1, -1):
            indent = self.indent(i)
            if indent is None or (indent >= level and i != index):
                continue
            if lines[i].lstrip().startswith(_CONTINUATIONS):
                continue
            level = indent
            if _DEF_HEADER.match(lines[i], indent):
                outer_def = i
            if indent == 0:
                top = i
                break
        start = outer_def if outer_def is not None else top
        if start is None:
            return None
        indent = self.indent(start)
        while (
            start > 0 and self.indent(start - 1) == indent and lines[start - 1].lstrip()[:1] == "@"
        ):
            start -= 1
        if indent and start == 0:
            return None
        return start, self._end(start)
