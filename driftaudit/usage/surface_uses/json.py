"""JSON files -> flags, env vars, command lines (rules: `structured`). The standard
library's parser gives no positions: each key and string is found in the text in document
order, from a cursor.
"""

from __future__ import annotations

import json

from driftaudit.usage.surface_uses.sink import (
    ARGV_KEYS,
    LAUNCH_MODULES,
    LAUNCHER_TEXT,
    Sink,
)
from driftaudit.usage.surface_uses.structured import (
    Entry,
    Structured,
)


def scan_json(sink: Sink) -> None:
    text = sink.text.text
    try:
        data = json.loads(text)
    except ValueError:
        return
    structured = Structured(sink, "json")
    cursor = 0

    def find_key(key: str) -> int:
        nonlocal cursor
        encoded = json.dumps(key)
        at = text.find(encoded, cursor)
        while at >= 0:
            after = at + len(encoded)
            while after < len(text) and text[after] in " \t\r\n":
                after += 1
            if text[after : after + 1] == ":":
                cursor = after + 1
                return at + 1
            at = text.find(encoded, at + 1)
        return cursor

    def find_string(value: str) -> int:
        nonlocal cursor
        for encoded in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
            at = text.find(encoded, cursor)
            if at >= 0:
                cursor = at + len(encoded)
                return at + 1
        return cursor

    def scalar(value) -> str | None:
        if value is None:
            return None
        return json.dumps(value) if isinstance(value, bool) else str(value)

    def walk(value, parent: Entry | None) -> None:
        if isinstance(value, list):
            for child in value:
                if isinstance(child, (dict, list)):
                    walk(child, parent)
                elif isinstance(child, str):
                    at = find_string(child)
                    if " " in child and ("--" in child or "curl" in child):
                        structured.argv_text(at, child)
            return
        if not isinstance(value, dict):
            return
        launcher = any(
            isinstance(v, str) and (v in LAUNCH_MODULES or LAUNCHER_TEXT.search(v))
            for v in value.values()
        )
        for key, child in value.items():
            entry = Entry(str(key), find_key(str(key)), parent)
            if isinstance(child, dict):
                structured.key(entry, None, leaf=False)
                walk(child, entry)
            elif isinstance(child, list) and all(not isinstance(c, (dict, list)) for c in child):
                items = [(scalar(c) or "", find_string(c) if isinstance(c, str) else cursor)
                         for c in child]  # fmt: skip
                if any(t.startswith("--") for t, _ in items):
                    launched = entry.under_section() or (launcher and key.lower() in ARGV_KEYS)
                    structured.argv(items, launched)
                else:
                    structured.argv(items, launched=False)
                    structured.key(entry, items[0][0] if items else None, leaf=True)
            elif isinstance(child, list):
                structured.key(entry, None, leaf=False)
                walk(child, entry)
            else:
                if isinstance(child, str):
                    entry.value_offset = find_string(child)
                structured.key(entry, scalar(child), leaf=True)
                if isinstance(child, str) and ("--" in child or "curl" in child):
                    structured.argv_text(entry.value_offset, child)

    walk(data, None)
    structured.finish()
