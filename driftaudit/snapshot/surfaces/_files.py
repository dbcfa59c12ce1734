"""Shared file walking for the surface extractors: which source files to read, a cheap
byte-level pre-filter before `ast.parse`, and parsing only the code around a match.

A release holds thousands of modules (0.5.23: 4,700 files, 68 MB); reading them all
takes a fraction of a second, parsing them all with `ast` about 20 s. Each extractor
therefore names byte patterns its constructs cannot occur without, and only the files
that contain one are parsed (and of a large module, with `parse_around`, only the
blocks around the matching lines). Keep each pattern led by a literal (`@`, `SGL`):
Python's `re` then skips ahead with a fast substring search, while a pattern led by
`\b` or an alternation is tried at every offset (60 MB: 0.02 s against 0.4 s or more).

Test code is not part of the server's surface: folders named `test`/`tests` (this
includes the `sglang/test` package of CI helpers), `test_*.py`, `*_test.py` and
`conftest.py` are skipped, as are hidden folders (`.agents/...`) and `__pycache__`.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from driftaudit.pysource import dotted, parse_module, parse_region, read_bytes
from driftaudit.regexes import required_bytes

__all__ = ["dotted"]  # shared with the usage layer, defined in driftaudit.pysource

_SKIP_DIRS = {"__pycache__", "test", "tests"}

Needle = re.Pattern[bytes] | Sequence[re.Pattern[bytes]] | None


def is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def prefilter(*needles: re.Pattern[bytes]) -> tuple[re.Pattern[bytes], ...]:
    """Declare an extractor's byte patterns (at import): a `TreeScan` tests them all in
    one read of the tree, whichever extractor asks first."""
    _PREFILTERS.append(needles)
    return needles


_PREFILTERS: list[tuple[re.Pattern[bytes], ...]] = []


class TreeScan(os.PathLike):
    """A tree's root that reads the tree's source files once for every declared
    prefilter (the surfaces of a cold run each read the whole tree otherwise): handed to
    the extractors in place of the root (it is one: `os.fspath`, `/`), `iter_sources`
    answers from it. Lives as long as its snapshot: the tree does not change under it.
    Only paths are kept, never the files' bytes."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._hits: dict[tuple, list[str]] | None = None
        self._parsed: dict[str, ast.Module] = {}  # text -> its tree (a few files)

    def parsed(self, text: str) -> ast.Module:
        """`ast.parse(text)`, shared by the extractors reading this tree (the ServerArgs
        files are read by three). Raises as `ast.parse` does; not to be changed."""
        if text not in self._parsed:
            self._parsed[text] = ast.parse(text)
        return self._parsed[text]

    def __fspath__(self) -> str:
        return str(self.root)

    def __truediv__(self, other: str) -> Path:
        return self.root / other

    def __str__(self) -> str:
        return str(self.root)

    def hits(self, needles: tuple) -> list[str] | None:
        """The files under `root/sglang` that `needles` match, in path order (None: not a
        declared prefilter, the caller reads the files itself)."""
        if not any(needles is declared for declared in _PREFILTERS):
            return None
        if self._hits is None:
            self._hits = {declared: [] for declared in _PREFILTERS}
            # each pattern's plain text first: a substring test is several times faster
            # than the regex, and most files lack it
            tests = [
                (found, [(required_bytes(n) or b"", n.search) for n in declared])
                for declared, found in self._hits.items()
            ]
            for path in _candidates(self.root / "sglang"):
                try:
                    data = read_bytes(path)
                except OSError:
                    continue
                for found, checks in tests:
                    if any(text in data and search(data) for text, search in checks):
                        found.append(path)
        return self._hits.get(needles)


def parse_text(root: Path | TreeScan, text: str) -> ast.Module:
    """`ast.parse(text)`, shared through `root` when it is a `TreeScan`."""
    return root.parsed(text) if isinstance(root, TreeScan) else ast.parse(text)


def _candidates(base: Path) -> list[str]:
    """Every non-test `.py` file below `base`, in path order."""
    candidates = []
    for directory, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        candidates.extend(
            os.path.join(directory, f)
            for f in sorted(files)
            if f.endswith(".py") and not is_test_file(f)
        )
    return candidates


def iter_sources(
    root: Path | TreeScan, needle: Needle = None, under: str = "sglang"
) -> Iterator[tuple[str, str]]:
    """(path relative to root, text) of every non-test `.py` file below `root/under`
    (or that one file) whose bytes match `needle`, one of `needle` when a sequence, or
    every file when None; in path order."""
    needles = [needle] if isinstance(needle, re.Pattern) else list(needle or [])
    base = Path(root) / under
    scan = root if isinstance(root, TreeScan) else None
    hits = scan.hits(needle) if scan is not None and isinstance(needle, tuple) else None
    if base.is_file():
        candidates = [str(base)]
    elif hits is not None:
        # a walk of a subfolder lists its files in the order a walk of the tree does
        prefix = os.path.join(str(base), "")
        candidates, needles = [p for p in hits if p.startswith(prefix)], []
    else:
        candidates = _candidates(base)
    root_text = str(Path(root))
    for path in candidates:
        try:
            data = read_bytes(path)
        except OSError:
            continue
        if needles and not any(n.search(data) for n in needles):
            continue
        rel = os.path.relpath(path, root_text).replace(os.sep, "/")
        yield rel, data.decode("utf-8", errors="replace")


def parse(text: str, rel: str) -> ast.Module | None:
    """The module's tree, or None when it does not parse (a surface skips that file)."""
    tree = parse_module(text, rel)
    return tree if isinstance(tree, ast.Module) else None


def match_lines(data: bytes, needles: Sequence[re.Pattern[bytes]]) -> list[int]:
    """The 1-based lines where one of `needles` matches, sorted."""
    starts = sorted({m.start() for n in needles for m in n.finditer(data)})
    lines, line, previous = [], 1, 0
    for start in starts:
        line += data.count(b"\n", previous, start)
        previous = start
        lines.append(line)
    return sorted(set(lines))


# A top-level statement starts on a line that opens at column 0 with code: not blank,
# not a comment, not a closing bracket, not a clause that continues a compound statement.
_TOP_START_RE = re.compile(r"^(?![ \t#\n\r)\]}]|\Z|(?:else|elif|except|finally|case)\b)", re.M)
_HEADERS = ("def ", "async def ", "class ")
_CLOSERS = (")", "]", "}")


def parse_around(text: str, rel: str, lines: Sequence[int]) -> list[ast.Module]:
    """Trees of only the code around `lines`, with true line numbers: for a line inside
    a function or class, its innermost enclosing `def`/`class` (decorators included,
    dedented); for a module-level line, its top-level statement. A large module costs a
    fraction of a whole parse. A region that does not parse alone (a column-0 line in a
    triple-quoted string) falls back to its top-level statement, then to the whole
    module; [] when the module does not parse."""
    if not lines:
        return []
    source = text.splitlines(keepends=True)
    blocks: _Blocks | None = None
    tops: list[int] | None = None
    regions: set[tuple[int, int, int]] = set()
    for wanted in sorted(set(lines)):
        region = None
        if 0 < wanted <= len(source) and source[wanted - 1][:1] in (" ", "\t"):
            blocks = blocks or _Blocks(text, source)
            region = blocks.region(wanted)
        if region is None:
            tops = tops if tops is not None else _top_starts(text)
            region = _top_region(tops, wanted, len(source))
        if region is not None:
            regions.add(region)
    kept: list[tuple[int, int, int]] = []
    for region in sorted(regions, key=lambda r: (r[0], -r[1])):
        if kept and region[1] <= kept[-1][1] and region[0] >= kept[-1][0]:
            continue  # nested in a region already kept
        kept.append(region)
    trees = []
    for begin, end, indent in kept:
        tree = _parse_region(source, begin, end, indent, rel)
        if tree is None and indent:
            tops = tops if tops is not None else _top_starts(text)
            top = _top_region(tops, begin, len(source))
            tree = _parse_region(source, *top, rel) if top else None
        if tree is None:
            whole = parse(text, rel)
            return [whole] if whole is not None else []
        trees.append(tree)
    return trees


def _top_starts(text: str) -> list[int]:
    starts: list[int] = []
    line, previous = 1, 0
    decorator_pending = False
    for match in _TOP_START_RE.finditer(text):
        line += text.count("\n", previous, match.start())
        previous = match.start()
        if not decorator_pending:
            starts.append(line)
        decorator_pending = text.startswith("@", match.start())
    return starts


def _top_region(starts: list[int], line: int, count: int) -> tuple[int, int, int] | None:
    index = bisect.bisect_right(starts, line) - 1
    if index < 0:
        return None  # before the first statement: comments only
    end = starts[index + 1] if index + 1 < len(starts) else count + 1
    return starts[index], end, 0


# led by the newline, not `^` with re.M (tried at every offset; 3x slower): matched
# against "\n" + text, where a match starts at the offset its line has in `text`
_HEADER_RE = re.compile(r"\n([ \t]*)(@|(?:async[ \t]+)?def[ \t]|class[ \t])")


def _block_end_re(indent: int) -> re.Pattern[str]:
    """A line that opens with code at `indent` or less: where a block at `indent` ends
    (`re` keeps its compiled patterns)."""
    return re.compile(rf"^[ \t]{{0,{indent}}}(?=[^ \t\r\n#)\]}}])", re.M)


class _Blocks:
    """The innermost `def`/`class` block around a line, found from indentation alone:
    the headers and decorators are listed with one regex pass, a block's end is searched
    only when asked (continuation lines are deeper or closing brackets, so they never
    end a block)."""

    def __init__(self, text: str, source: list[str]) -> None:
        self.text = text
        self.source = source
        self.offsets: list[int] = []  # of each entry's line start
        self.lines: list[int] = []
        self.indents: list[int] = []
        self.decorator: list[bool] = []
        line, previous = 1, 0
        for match in _HEADER_RE.finditer("\n" + text):
            line += text.count("\n", previous, match.start())
            previous = match.start()
            self.offsets.append(match.start())
            self.lines.append(line)
            self.indents.append(len(match.group(1)))
            self.decorator.append(match.group(2) == "@")
        self._ends: dict[int, int] = {}

    def _begin(self, index: int) -> int:
        """First decorator line of the header at `index`."""
        first, indent = index, self.indents[index]
        while first > 0 and self.decorator[first - 1] and self.indents[first - 1] == indent:
            first -= 1
        return self.lines[first]

    def _end(self, index: int) -> int:
        if index not in self._ends:
            offset = self.offsets[index]
            start = self.text.find("\n", offset)
            end = len(self.source) + 1
            if start != -1:
                found = _block_end_re(self.indents[index]).search(self.text, start + 1)
                if found:
                    end = self.lines[index] + self.text.count("\n", offset, found.start())
            self._ends[index] = end
        return self._ends[index]

    def region(self, line: int) -> tuple[int, int, int] | None:
        if not 0 < line <= len(self.source):
            return None
        text = self.source[line - 1]
        code = text.lstrip()
        indent = len(text) - len(code)
        position = bisect.bisect_left(self.lines, line)
        if code.startswith("@"):  # a decorator: the block is the def it decorates
            for index in range(position, len(self.lines)):
                if self.indents[index] == indent and not self.decorator[index]:
                    if self._begin(index) <= line:
                        return self._region(index)
                    return None
                if self.indents[index] < indent:
                    return None
            return None
        if code.startswith(_HEADERS) and position < len(self.lines):
            if self.lines[position] == line:
                return self._region(position)
        for index in range(position - 1, -1, -1):
            if self.decorator[index] or self.indents[index] >= indent:
                continue
            if self._end(index) > line:
                return self._region(index)
        return None

    def _region(self, index: int) -> tuple[int, int, int]:
        return self._begin(index), self._end(index), self.indents[index]


def _parse_region(
    source: list[str], begin: int, end: int, indent: int, rel: str
) -> ast.Module | None:
    return parse_region("".join(source[begin - 1 : end - 1]), begin, bool(indent), rel)


def iter_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (function and class bodies, if/try/with/
    loop/match blocks), without descending into expressions: several times cheaper
    than `ast.walk` when only definitions and assignments matter."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        children: list[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                children.extend(block)
        for handler in getattr(stmt, "handlers", None) or []:
            children.extend(handler.body)
        for case in getattr(stmt, "cases", None) or []:
            children.extend(case.body)
        stack.extend(reversed(children))


def where(rel: str, line: int | None) -> str:
    return f"{rel}:{line}" if line else rel


def tail_name(node: ast.expr) -> str | None:
    """The last name of `a.b.C` or `C` (how a call or annotation names what it uses)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def unparse(node: ast.AST | None, limit: int = 200) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."
