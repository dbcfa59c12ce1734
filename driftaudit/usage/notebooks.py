"""Jupyter notebooks (`.ipynb`): their code cells, read as one Python module.

A notebook is nbformat 4 JSON, read with `json`. Its code cells, in order, are the lines
of one module (`Notebook.code`); each cell is parsed alone, so a cell that does not parse
is a DA001 finding and the others are still audited. A notebook whose kernel is not
Python (`metadata.kernelspec.language`, `metadata.language_info.name`) is not read.

IPython syntax: only a cell that does not parse as it is gets its magics taken out. A
line magic, a shell escape or a help request (`%time f()`, `!pip install x`,
`files = !ls`, `obj?`) becomes `pass` at its indentation (what it runs is not audited);
a cell magic's body is Python for `%%time`, `%%timeit`, `%%capture`, `%%prun`, and
left out for every other (`%%bash`, `%%writefile`: not code that runs here).

Positions: a finding in a notebook points where its code is stored in the `.ipynb`
file: the line of the file that holds the JSON string of that code line (nbformat writes
one per line) and the column in that line of the file. So the reports (SARIF regions,
GitHub annotations, `path:line:column`), inline suppressions (`# driftaudit: ignore`
in a cell) and baseline fingerprints all read the notebook file as it is. `json` keeps
no positions, so the strings of each cell's `source` are located with a small scan of
the file's text (hand-written: `json.decoder.scanstring` reads each string, in C).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from dataclasses import dataclass, field
from json import decoder

from driftaudit.pysource import PARSE_ERRORS, ParseProblem, problem

_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
# a line IPython rewrites: `%magic`, `!shell`, `x = !shell`, `x = %magic`, `obj?`, `?obj`
_MAGIC_LINE = re.compile(r"^\s*(?:[%!?]|[\w.]+\s*=\s*[%!])|\?\s*$")


@dataclass
class Notebook:
    code: str  # the code cells' lines, one after another, "\n"-separated
    cells: list[tuple[int, int]]  # (first, last) 1-based line of `code`, per code cell
    # per line of `code`, its pieces: (0-based column in the line, where the JSON string
    # holding it starts and ends in the file's text, the piece's offset in that string)
    pieces: list[list[tuple[int, int, int, int]]] = field(default_factory=list)
    text: str = ""  # the file's text
    line_starts: list[int] = field(default_factory=list)  # offsets of the file's lines

    def parse(self, filename: str) -> tuple[ast.Module, ParseProblem | None]:
        """One module of every cell that parses (each at its lines in `code`), and the
        first problem of one that does not."""
        lines = self.code.split("\n")
        body: list[ast.stmt] = []
        found = None
        for first, last in self.cells:
            source = "\n" * (first - 1) + "\n".join(lines[first - 1 : last])
            try:
                body += ast.parse(source, filename=filename).body
            except PARSE_ERRORS as exc:
                found = found or problem(exc)
        return ast.Module(body=body, type_ignores=[]), found

    def place(self, line: int, column: int) -> tuple[int, int]:
        """(line, column) of the file for 1-based (line, column) of `code`."""
        if not self.pieces:
            return line, column
        index = min(max(line, 1), len(self.pieces)) - 1
        pieces = self.pieces[index]
        at = max(column - 1, 0)
        if not pieces:
            pieces = self._nearest(index)
            if not pieces:
                return 1, 1
            at = pieces[0][0]
        chosen = pieces[0]
        for piece in pieces:
            if piece[0] <= at:
                chosen = piece
        start_column, start, end, offset = chosen
        count = offset + max(at - start_column, 0)
        return self._file_position(_raw_offset(self.text, start, end, count))

    def _nearest(self, index: int) -> list[tuple[int, int, int, int]]:
        """The pieces of the closest line above (else below) that has any: where a
        blank or magic line's finding (a cell that does not parse) is shown."""
        for pieces in (*reversed(self.pieces[:index]), *self.pieces[index:]):
            if pieces:
                return pieces[:1]
        return []

    def _file_position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1


def read_notebook(text: str) -> Notebook | ParseProblem | str:
    """The notebook's code; a ParseProblem when it is not a notebook (DA001); a reason
    (str) when it is one of another language."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParseProblem(exc.lineno, exc.colno, f"not a notebook: {exc.msg}")
    except (ValueError, RecursionError, MemoryError):
        return ParseProblem(1, 1, "not a notebook: nested too deeply to read")
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return ParseProblem(1, 1, "not a notebook (nbformat 4): no list of cells")
    language = _language(data.get("metadata"))
    if language is not None and language != "python":
        return f"a notebook in {language}, not Python"
    try:
        strings = _source_strings(text)
    except (ValueError, IndexError):  # pragma: no cover - json.loads accepted the text
        strings = {}
    return _assemble(text, cells, strings)


def _language(metadata: object) -> str | None:
    if not isinstance(metadata, dict):
        return None
    for key, name in (("kernelspec", "language"), ("language_info", "name")):
        table = metadata.get(key)
        value = table.get(name) if isinstance(table, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return None


def _assemble(text: str, cells: list[dict], strings: dict[int, list[tuple[int, int]]]):
    lines: list[str] = []
    pieces: list[list[tuple[int, int, int, int]]] = []
    ranges: list[tuple[int, int]] = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        parts = [source] if isinstance(source, str) else source
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            continue  # a malformed cell: no code
        located = strings.get(index, [])
        if len(located) != len(parts):
            located = []  # the scan disagrees with json: no positions for this cell
        cell_lines, cell_pieces = _cell_lines(parts, located)
        cell_lines = _without_magics(cell_lines)
        first = len(lines) + 1
        lines += cell_lines
        pieces += cell_pieces
        ranges.append((first, len(lines)))
    line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
    return Notebook("\n".join(lines), ranges, pieces, text, line_starts)


_LINE_END = re.compile(r"\r\n|\r|\n")  # what ends a line for Python's tokenizer


def _cell_lines(parts: list[str], located: list[tuple[int, int]]):
    """The lines of one cell's source and, per line, where its pieces are in the file:
    (column in the line, start and end of the JSON string, offset in that string)."""
    lines: list[str] = []
    pieces: list[list[tuple[int, int, int, int]]] = []
    current: list[str] = []
    current_pieces: list[tuple[int, int, int, int]] = []
    length = 0
    for number, part in enumerate(parts):
        start, end = located[number] if located else (-1, -1)
        offset = 0
        while True:
            newline = _LINE_END.search(part, offset)
            chunk = part[offset:] if newline is None else part[offset : newline.start()]
            if chunk and start >= 0:
                current_pieces.append((length, start, end, offset))
            current.append(chunk)
            length += len(chunk)
            if newline is None:
                break
            lines.append("".join(current))
            pieces.append(current_pieces)
            current, current_pieces, length = [], [], 0
            offset = newline.end()
    lines.append("".join(current))
    pieces.append(current_pieces)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the source ended with a newline: no line after it
        pieces.pop()
    return lines, pieces


def _without_magics(lines: list[str]) -> list[str]:
    """The cell as Python (see the module docstring); a cell that parses is kept."""
    if not any(_MAGIC_LINE.search(line) for line in lines):
        return lines
    try:
        ast.parse("\n".join(lines))
        return lines
    except PARSE_ERRORS:
        pass
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in _PYTHON_CELL_MAGICS:
            return [""] * len(lines)
        lines = [*lines[:first], "", *lines[first + 1 :]]
    return [_as_pass(line) if _MAGIC_LINE.search(line) else line for line in lines]


def _as_pass(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "pass"


def _raw_offset(text: str, start: int, end: int, count: int) -> int:
    """The offset in `text` of the character `count` characters into the JSON string
    whose content starts at `start` (and ends at `end`, its closing quote), escapes
    counted as the one character they stand for."""
    if start < 0:
        return max(start, 0)
    escape = text.find("\\", start, end)
    if escape == -1 or escape >= start + count:
        return min(start + count, end)
    at, seen = start, 0
    while seen < count and at < end:
        if text[at] == "\\":
            if text[at + 1] == "u":
                high = int(text[at + 2 : at + 6], 16)
                at += 6
                if 0xD800 <= high < 0xDC00 and text.startswith("\\u", at):
                    at += 6  # a surrogate pair: one character
            else:
                at += 2
        else:
            at += 1
        seen += 1
    return at


_scanstring = decoder.scanstring  # type: ignore[attr-defined]  # json's own, in C
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _source_strings(text: str) -> dict[int, list[tuple[int, int]]]:
    """cell index -> (start, end) in `text` of each string of its `source`: a walk of
    the JSON without recursion, keeping only the strings at cells[i].source[j] (or a
    source that is one string)."""
    found: dict[int, list[tuple[int, int]]] = {}
    # per open container: [is an object, its current key or index, expecting a key]
    stack: list[list] = []
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char in " \t\r\n:":
            at += 1
        elif char == "{":
            stack.append([True, None, True])
            at += 1
        elif char == "[":
            stack.append([False, 0, False])
            at += 1
        elif char in "}]":
            stack.pop()
            at += 1
        elif char == ",":
            top = stack[-1]
            if top[0]:
                top[2] = True
            else:
                top[1] += 1
            at += 1
        elif char == '"':
            value, end = _scanstring(text, at + 1)
            if stack and stack[-1][0] and stack[-1][2]:
                top = stack[-1]
                top[1], top[2] = value, False
            else:
                cell = _source_cell(stack)
                if cell is not None:
                    found.setdefault(cell, []).append((at + 1, end - 1))
            at = end
        else:
            match = _SCALAR.match(text, at)
            if match is None:
                raise ValueError(f"unexpected {char!r} at {at}")
            at = match.end()
    return found


def _source_cell(stack: list[list]) -> int | None:
    """The cell index when the string being read is (part of) a cell's source."""
    if len(stack) not in (3, 4) or not stack[0][0] or stack[0][1] != "cells":
        return None
    cells, cell = stack[1], stack[2]
    if cells[0] or not cell[0] or cell[1] != "source":
        return None
    if len(stack) == 4 and stack[3][0]:
        return None
    return cells[1]
