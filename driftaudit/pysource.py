"""Python source as `snapshot` (sglang trees) and `usage` (the consumer) both read it:
decoding bytes, parsing a whole module or only a region of it, and dotted names.

Neutral ground: it imports neither layer, so `snapshot` never reaches into `usage`.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import io
import os
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from driftaudit.astwalk import walk_statements

# What `ast.parse` raises on input it cannot take: a syntax error, a null byte
# (ValueError), nesting deeper than the parser's or the compiler's stack.
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def read_bytes(path: str | os.PathLike) -> bytes:
    """A file's bytes, read with one `os.read` of its size. Hand-written for speed: the
    tree-wide scans read thousands of small files, and `Path.read_bytes` (a Path and a
    buffered reader per file) took 0.41 s for the 4,719 files of sglang 0.5.23 against
    0.085 s here. Raises OSError as `open` does."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) != size:  # a short read, or a file whose size is not its length
            chunks = [data]
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Decoded:
    text: str  # newlines normalised to "\n"
    encoding: str  # the codec that decoded it ("utf-8", "utf-8-sig" with a BOM, a cookie's)
    newline: str  # the file's first line ending ("\n", "\r\n", "\r"), to write it back alike
    raw: str  # as decoded: every line ending as in the file, no BOM (what the fixer rewrites)
    digest: str  # sha256 of the bytes (the fixer refuses a file whose bytes changed since)


def decode_python(data: bytes) -> Decoded:
    """A Python file's text: a UTF-8 BOM or a PEP 263 coding cookie decides the codec, as
    the interpreter does. Raises SyntaxError for an unknown codec or undecodable bytes."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise SyntaxError(f"cannot decode the file: {exc}") from None
    return _normalised(text, encoding, data)


def decode_text(data: bytes) -> Decoded | None:
    """Any other file's text: UTF-8 (a BOM dropped); None for other bytes (binary data)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return _normalised(text, "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8", data)


def _normalised(text: str, encoding: str, data: bytes) -> Decoded:
    if text.startswith("\ufeff"):
        text = text[1:]
    raw, newline = text, "\n"
    at = text.find("\r")
    if at >= 0:
        newline = "\r\n" if text[at + 1 : at + 2] == "\n" else "\r"
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return Decoded(text, encoding, newline, raw, hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class ParseProblem:
    """Why a module could not be read, where (1-based)."""

    line: int
    column: int
    message: str


def parse_module(text: str, filename: str = "<unknown>") -> ast.Module | ParseProblem:
    """The module's tree, or where and why it does not parse."""
    try:
        return ast.parse(text, filename=filename)
    except PARSE_ERRORS as exc:
        return problem(exc)


def any_within(lines: list[int], first: int, last: int) -> bool:
    """Does the ascending list `lines` hold a number from `first` to `last`?"""
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last


def lines_spelling(text: str, words: list[str]) -> list[int]:
    """The 1-based numbers of the lines of `text` that spell one of `words`, ascending
    (`any_within` answers whether a node's lines hold one). Found with `str.find`, a line
    counted once: a large module spells a word on few of its lines."""
    if "" in words:  # the empty word is on every line
        return list(range(1, text.count("\n") + 2))
    found: set[int] = set()
    for word in words:
        line, previous = 1, 0
        at = text.find(word)
        while at != -1:
            line += text.count("\n", previous, at)
            previous = at
            found.add(line)
            end = text.find("\n", at)
            at = -1 if end == -1 else text.find(word, end)
    return sorted(found)


def problem(exc: BaseException) -> ParseProblem:
    if isinstance(exc, (RecursionError, MemoryError)):
        return ParseProblem(1, 1, "too deeply nested to analyse")
    line = getattr(exc, "lineno", None) or 1
    column = getattr(exc, "offset", None) or 1
    return ParseProblem(line, column, getattr(exc, "msg", None) or str(exc))


def parse_region(
    code: str, begin: int, indented: bool, filename: str = "<unknown>"
) -> ast.Module | None:
    """The tree of a region of a module (`code`: its lines from 1-based line `begin`),
    with the lines and columns it has in the module; None when it does not parse alone.

    Blank lines in front keep the line numbers (cheaper than `ast.increment_lineno`); an
    indented region is parsed under an `if 1:` on the line above, which keeps its columns
    and tolerates continuation lines and string content at any indentation, and the
    `if` is taken off again.
    """
    if indented:
        if begin < 2:
            return None
        padded = "\n" * (begin - 2) + "if 1:\n" + code
    else:
        padded = "\n" * (begin - 1) + code
    try:
        tree = ast.parse(padded, filename=filename)
    except PARSE_ERRORS:
        return None
    if indented:
        wrapper = tree.body[0]
        assert isinstance(wrapper, ast.If)  # the `if 1:` put in front
        tree.body = wrapper.body
    return tree


def statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement below `tree` at any depth (function and class bodies too; except
    handlers and match cases as well), in `ast.walk` order, without entering expressions:
    imports and definitions are statements, and walking every expression costs more.
    (`astwalk.walk_statements`, `tree` itself left out.)"""
    found = walk_statements(tree)
    next(found)
    yield from found


def is_none(node: ast.AST | None) -> bool:
    """The literal `None`."""
    return isinstance(node, ast.Constant) and node.value is None


# calls that never return: `if not hasattr(...): pytest.skip(...)` leaves like `raise`
_NO_RETURN = {"sys.exit", "exit", "quit", "os._exit", "pytest.skip", "pytest.fail", "pytest.exit"}


def leaves(statements: list[ast.stmt]) -> bool:
    """Does a block always leave (return, raise, continue, break, `sys.exit()`)? The
    code after an `if` whose body leaves runs only where its test failed."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        return dotted(last.value.func) in _NO_RETURN
    if isinstance(last, ast.If):
        return leaves(last.body) and leaves(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return leaves(last.body)
    return False


def dotted(node: ast.AST | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None for anything else (a call, a subscript)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Located(Protocol):
    """An ast node with a position: an expression, a statement, an argument, a keyword..."""

    lineno: int
    col_offset: int
    end_lineno: int | None
    end_col_offset: int | None


def end_of(node: Located) -> tuple[int, int]:
    """A parsed node's end: its line and byte column (`ast.parse` sets both on every node)."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    return node.end_lineno, node.end_col_offset


class Span(NamedTuple):
    """A token's place in a file: 1-based lines and 1-based character columns, the end
    exclusive (as SARIF regions and the report's `end_column` read it)."""

    line: int
    column: int
    end_line: int
    end_column: int


_WIDE = re.compile(r"[^\x00-\x7f]")


class Columns:
    """ast positions (0-based UTF-8 byte offsets) as report columns (1-based characters).

    The one conversion: every position taken from an `ast` node of a consumer file goes
    through here, so findings, baselines and the fixer's libcst positions agree. An ASCII
    file (nearly all) needs no arithmetic."""

    def __init__(self, text: str | None):
        self._ascii = text is None or text.isascii()
        self._lines = (text or "").split("\n")
        self._wide: dict[int, tuple[list[int], list[int]] | None] = {}  # line -> see _chars

    def column(self, line: int, byte_offset: int) -> int:
        if self._ascii or not 0 < line <= len(self._lines):
            return byte_offset + 1
        wide = self._chars(line)
        if wide is None:
            return byte_offset + 1
        starts, extra = wide  # bisect: re-encoding the line per node was quadratic
        byte_offset = min(byte_offset, len(self._lines[line - 1]) + extra[-1])  # its end
        index = bisect.bisect_left(starts, byte_offset)  # wide characters before the offset
        if (
            index
            and byte_offset
            < starts[index - 1] + extra[index - 1] - (extra[index - 2] if index > 1 else 0) + 1
        ):
            index -= 1  # inside a wide character: only the complete ones count
            return starts[index] - (extra[index - 1] if index else 0) + 1
        return byte_offset - (extra[index - 1] if index else 0) + 1

    def _chars(self, line: int) -> tuple[list[int], list[int]] | None:
        """A line's non-ASCII characters: the byte offset each starts at, and the extra
        bytes (UTF-8 length - 1) up to and including it; None for an ASCII line."""
        if line not in self._wide:
            text = self._lines[line - 1]
            starts: list[int] = []
            extra: list[int] = []
            total = 0
            for found in _WIDE.finditer(text):
                starts.append(found.start() + total)
                total += len(found.group().encode("utf-8", "surrogatepass")) - 1
                extra.append(total)
            self._wide[line] = (starts, extra) if starts else None
        return self._wide[line]

    def start(self, node: Located) -> tuple[int, int]:
        return node.lineno, self.column(node.lineno, node.col_offset)

    def span(self, node: Located) -> Span:
        end_line = node.end_lineno or node.lineno
        end = self.column(end_line, node.end_col_offset or 0)
        return Span(*self.start(node), end_line, end)

    def name_span(self, node: ast.Attribute) -> Span:
        """The attribute's own name in `a.b.c` (`c`), on the line where the chain ends."""
        end = self.span(node)
        return Span(end.end_line, end.end_column - len(node.attr), end.end_line, end.end_column)

    def def_name(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Span:
        """The name of a `def` or `class` (ast keeps only the keyword's position)."""
        line, column = self.start(node)
        text = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
        at = text.find(node.name, column - 1)
        column = at + 1 if at >= 0 else column
        return Span(line, column, line, column + len(node.name))

    def token(self, node: Located) -> Span:
        """The token a finding about `node` points at: an attribute's own name, a call's
        callee, an argument keyword's name (not its value), else the node itself."""
        if isinstance(node, ast.Attribute):
            return self.name_span(node)
        if isinstance(node, ast.Call):
            return self.token(node.func)
        if isinstance(node, ast.keyword) and node.arg:
            line, column = self.start(node)
            return Span(line, column, line, column + len(node.arg))
        return self.span(node)

    def arguments(self, call: ast.Call) -> dict[str, Span]:
        """Where each argument of a call is: by position ("0", "1"... up to the first
        `*args`, as `valuetypes.arguments` counts them) or by keyword name."""
        places = {}
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            places[str(index)] = self.span(arg)
        places.update((k.arg, self.token(k)) for k in call.keywords if k.arg)
        return places
