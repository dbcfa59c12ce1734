"""TOML files -> flags, env vars, command lines (rules: `structured`).

Values come from `tomllib` (tomli before 3.11): tables, arrays of tables, multi-line
arrays and strings, escapes. tomllib gives no positions, so a line pass over the text
locates each key (`[table]` headers, `key = value` lines, dotted keys, inline-table keys)
and its value; array items and strings are then found in the text from their key on.
A file that tomllib rejects is not TOML and is left alone.
"""

from __future__ import annotations

import json
import re
import sys

from driftaudit.usage.surface_uses.sink import Sink
from driftaudit.usage.surface_uses.structured import Entry, Structured, flow_pairs, strip_comment

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$")
_KEY = re.compile(r"""^\s*([A-Za-z0-9_\-."' ]+?)\s*=\s*(.*)$""")

Path = tuple[str, ...]


def _parts(dotted: str) -> list[str]:
    parts = re.findall(r'"[^"]*"|\'[^\']*\'|[^.\s]+', dotted)
    return [p[1:-1] if p[:1] in "'\"" and p[-1:] == p[:1] and len(p) > 1 else p for p in parts]


class _Positions:
    """Where each key path is written: (key offset, value offset, the value as written on
    its line); a path written several times (arrays of tables) keeps every place, in order."""

    def __init__(self, text: str):
        self.places: dict[Path, list[tuple[int, int, str]]] = {}
        self.tables: dict[Path, list[int]] = {}
        header: list[str] = []
        offset = 0
        for raw in text.split("\n"):
            line_offset = offset
            offset += len(raw) + 1
            line = strip_comment(raw)
            m = _HEADER.match(line)
            if m:
                header = _parts(m.group(1))
                self.tables.setdefault(tuple(header), []).append(line_offset + m.start(1))
                continue
            m = _KEY.match(line)
            if not m:
                continue
            parts = header + _parts(m.group(1))
            if not parts:
                continue
            key_offset = line_offset + max(0, line.rfind(parts[-1], 0, m.end(1)))
            value, value_offset = m.group(2).strip(), line_offset + m.start(2)
            self.places.setdefault(tuple(parts), []).append((key_offset, value_offset, value))
            if value.startswith("{") and value.endswith("}"):
                for k, v, k_offset in flow_pairs(value, value_offset):
                    place = (k_offset, k_offset + len(k), v)
                    self.places.setdefault((*parts, k), []).append(place)

    def take(self, path: Path, fallback: int) -> tuple[int, int, str | None]:
        places = self.places.get(path)
        if places:
            return places.pop(0) if len(places) > 1 else places[0]
        tables = self.tables.get(path)
        if tables:
            at = tables.pop(0) if len(tables) > 1 else tables[0]
            return at, at, None
        return fallback, fallback, None


def scan_toml(sink: Sink) -> None:
    text = sink.text.text
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return
    _Walk(sink, _Positions(text)).table(data, (), None, 0)


class _Walk:
    def __init__(self, sink: Sink, positions: _Positions):
        self.sink = sink
        self.text = sink.text.text
        self.positions = positions
        self.structured = Structured(sink, "toml")

    def table(self, table: dict, path: Path, parent: Entry | None, offset: int) -> None:
        for key, value in table.items():
            self.value(key, value, (*path, key), parent, offset)
        if parent is None:
            self.structured.finish()

    def value(self, key: str, value, path: Path, parent: Entry | None, offset: int) -> None:
        key_offset, value_offset, written = self.positions.take(path, offset)
        entry = Entry(key, key_offset, parent, value_offset=value_offset)
        if isinstance(value, dict):
            self.table(value, path, entry, key_offset)
        elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            for item in value:  # an array of tables: each table under the same key
                if isinstance(item, dict):
                    self.table(item, path, entry, key_offset)
        elif isinstance(value, list):
            items, cursor = [], value_offset
            for item in map(_scalar, value):  # each item found in the text after the last
                at = self.text.find(item, cursor)
                at, cursor = (cursor, cursor) if at < 0 else (at, at + len(item))
                items.append((item, at))
            if any(t.startswith("--") for t, _ in items):
                self.structured.argv(items, launched=entry.under_section())
            else:
                self.structured.key(entry, written or json.dumps(value), leaf=True)
        else:
            scalar = _scalar(value) if isinstance(value, str) or not written else written
            self.structured.key(entry, scalar, leaf=True)
            if isinstance(value, str) and ("--" in value or "curl" in value):
                self.structured.argv_text(value_offset, value)


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
