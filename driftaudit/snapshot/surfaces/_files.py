"""Shared file walking for the surface extractors: which source files to read, and
a cheap byte-level pre-filter before `ast.parse`.

A release holds thousands of modules (0.5.23: 4,700 files, 68 MB); reading them all
takes a fraction of a second, parsing them all with `ast` about 20 s. Each extractor
therefore names byte patterns its constructs cannot occur without, and only the files
that contain one are parsed. Keep each pattern led by a literal (`@`, `.add_`, `SGL`):
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

_SKIP_DIRS = {"__pycache__", "test", "tests"}

Needle = re.Pattern[bytes] | Sequence[re.Pattern[bytes]] | None


def is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def iter_sources(
    root: Path, needle: Needle = None, under: str = "sglang"
) -> Iterator[tuple[str, str]]:
    """(path relative to root, text) of every non-test `.py` file below `root/under`
    (or that one file) whose bytes match `needle`, one of `needle` when a sequence, or
    every file when None; in path order."""
    needles = [needle] if isinstance(needle, re.Pattern) else list(needle or [])
    base = Path(root) / under
    if base.is_file():
        candidates = [str(base)]
    else:
        candidates = []
        for directory, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            candidates.extend(
                os.path.join(directory, f)
                for f in sorted(files)
                if f.endswith(".py") and not is_test_file(f)
            )
    root_text = str(Path(root))
    for path in candidates:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        if needles and not any(n.search(data) for n in needles):
            continue
        rel = os.path.relpath(path, root_text).replace(os.sep, "/")
        yield rel, data.decode("utf-8", errors="replace")


def parse(text: str, rel: str) -> ast.Module | None:
    """The module's tree, or None when it does not parse (a surface skips that file)."""
    try:
        return ast.parse(text, filename=rel)
    except (SyntaxError, ValueError):
        return None


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
_TOP_START_RE = re.compile(
    r"^(?![ \t#\n\r)\]}]|\Z|(?:else|elif|except|finally|case)\b)", re.M
)


def parse_around(text: str, rel: str, lines: Sequence[int]) -> list[ast.Module]:
    """Trees of only the top-level statements (decorators included) that span one of
    `lines`, with their true line numbers: a few times cheaper than parsing a large
    module whole. Falls back to the whole module when a region does not parse alone
    (a column-0 line inside a triple-quoted string); [] when the module does not parse."""
    if not lines:
        return []
    starts: list[int] = []
    line, previous = 1, 0
    decorator_pending = False
    for match in _TOP_START_RE.finditer(text):
        line += text.count("\n", previous, match.start())
        previous = match.start()
        if not decorator_pending:
            starts.append(line)
        decorator_pending = text.startswith("@", match.start())
    source = text.splitlines(keepends=True)
    regions: list[tuple[int, int]] = []
    for wanted in sorted(set(lines)):
        index = bisect.bisect_right(starts, wanted) - 1
        if index < 0:
            continue  # before the first statement: comments only
        begin = starts[index]
        end = starts[index + 1] if index + 1 < len(starts) else len(source) + 1
        if not regions or regions[-1] != (begin, end):
            regions.append((begin, end))
    trees = []
    for begin, end in regions:
        # blank lines in front keep the true line numbers (cheaper than increment_lineno)
        code = "\n" * (begin - 1) + "".join(source[begin - 1 : end - 1])
        try:
            tree = ast.parse(code, filename=rel)
        except (SyntaxError, ValueError):
            whole = parse(text, rel)
            return [whole] if whole is not None else []
        trees.append(tree)
    return trees


def iter_parsed(
    root: Path, needle: Needle = None, under: str = "sglang"
) -> Iterator[tuple[str, ast.Module]]:
    for rel, text in iter_sources(root, needle, under):
        tree = parse(text, rel)
        if tree is not None:
            yield rel, tree


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


def const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def unparse(node: ast.AST | None, limit: int = 200) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."
