"""TOML files -> flags, env vars, command lines (rules: `structured`)."""

from __future__ import annotations

import re

from driftaudit.usage.surfaces.sink import (
    Sink,
)
from driftaudit.usage.surfaces.structured import (
    Entry,
    Structured,
    flow_items,
    flow_pairs,
    strip_comment,
    unquote,
)

_TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$")
_TOML_KEY = re.compile(r"""^\s*([A-Za-z0-9_\-."' ]+?)\s*=\s*(.*)$""")


def _toml_parts(dotted: str) -> list[str]:
    return [unquote(part) for part in re.findall(r'"[^"]*"|\'[^\']*\'|[^.\s]+', dotted)]


def scan_toml(sink: Sink) -> None:
    structured = Structured(sink, "toml")
    header: list[str] = []
    offset = 0
    for raw in sink.text.text.split("\n"):
        line_offset = offset
        offset += len(raw) + 1
        line = strip_comment(raw)
        m = _TOML_HEADER.match(line)
        if m:
            header = _toml_parts(m.group(1))
            continue
        m = _TOML_KEY.match(line)
        if not m:
            continue
        parts = header + _toml_parts(m.group(1))
        if not parts:
            continue
        parent = None
        for part in parts[:-1]:
            parent = Entry(part, line_offset, parent)
        key_offset = line_offset + max(0, line.rfind(parts[-1], 0, m.end(1)))
        entry = Entry(parts[-1], key_offset, parent, value_offset=line_offset + m.start(2))
        value = m.group(2).strip()
        if value.startswith("{") and value.endswith("}"):
            for k, v, k_offset in flow_pairs(value, entry.value_offset):
                structured.key(Entry(k, k_offset, entry, value=v), v or None, leaf=bool(v))
        elif value.startswith("["):
            items = flow_items(value, entry.value_offset) if value.endswith("]") else []
            if any(t.startswith("--") for t, _ in items):
                structured.argv(items, launched=entry.under_section())
            else:
                structured.key(entry, value, leaf=True)
        else:
            scalar = unquote(value)
            structured.key(entry, scalar, leaf=True)
            if "--" in scalar or "curl" in scalar:
                structured.argv_text(entry.value_offset, scalar)
    structured.finish()
