"""YAML files -> flags, env vars, command lines (rules: `structured`)."""

from __future__ import annotations

import re

from driftaudit.usage.surfaces.argv import has_launcher
from driftaudit.usage.surfaces.shell import ShellScan
from driftaudit.usage.surfaces.sink import (
    ARGV_KEYS,
    LAUNCHER_TEXT,
    OVERRIDES,
    SECTION,
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

_YAML_LINE = re.compile(r"^( *)((?:- +)*)(.*)$")
_YAML_KEY = re.compile(
    r"""^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"\[\]{},&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?)"""
    r"""\s*:(?:\s+(.*))?$"""
)
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*")


def scan_yaml(sink: Sink) -> None:
    text = sink.text.text
    structured = Structured(sink, "yaml")
    stack: list[Entry] = []
    seqs: list[Entry] = []
    block: tuple[int, int] | None = None  # (indent, start offset) of a block scalar
    offset = 0

    def end_block(at: int) -> None:
        chunk = text[block[1] : at]
        if "--" in chunk or "SGL" in chunk or "curl" in chunk:
            ShellScan(sink, "yaml").scan(block[1], at)

    for raw in text.split("\n"):
        line_offset = offset
        offset += len(raw) + 1
        if block is not None:
            if not raw.strip() or len(raw) - len(raw.lstrip(" ")) > block[0]:
                continue
            end_block(line_offset)
            block = None
        if raw.startswith(("---", "...")):
            stack.clear()
            continue
        line = strip_comment(raw)
        if not line.strip():
            continue
        m = _YAML_LINE.match(line)
        indent, dashes, rest = len(m.group(1)), m.group(2), m.group(3)
        key_indent = indent + len(dashes)
        if dashes:  # a list item belongs to the deepest entry indented less (or a list owner)
            while stack and (
                stack[-1].indent > indent
                or (stack[-1].indent == indent and not (
                    stack[-1].value is None and stack[-1].children in ("", "seq")))
            ):  # fmt: skip
                stack.pop()
            if stack:
                stack[-1].children = stack[-1].children or "seq"
        km = _YAML_KEY.match(rest)
        if km:
            if not dashes:
                while stack and stack[-1].indent >= key_indent:
                    stack.pop()
                if stack:
                    stack[-1].children = stack[-1].children or "map"
            else:  # `- key: value` opens a mapping: one entry per list item
                owner = stack[-1] if stack else None
                stack.append(Entry("-", line_offset + indent, owner, indent, children="map"))
            parent = stack[-1] if stack else None
            entry = Entry(unquote(km.group(1)), line_offset + key_indent, parent, key_indent)
            stack.append(entry)
            value = (km.group(2) or "").strip()
            if not value:
                continue
            entry.value = value
            entry.value_offset = line_offset + line.find(value, key_indent + len(km.group(1)))
            if _BLOCK_SCALAR.fullmatch(value):
                block = (key_indent, offset)
            elif value.startswith("[") and value.endswith("]"):
                entry.items = flow_items(value, entry.value_offset)
                seqs.append(entry)
                structured.key(entry, value, leaf=True)
            elif value.startswith("{") and value.endswith("}"):
                for k, v, k_offset in flow_pairs(value, entry.value_offset):
                    child = Entry(k, k_offset, entry, key_indent + 1, v or None)
                    structured.key(child, v or None, leaf=bool(v))
            else:
                scalar = unquote(value)
                structured.key(entry, scalar, leaf=True)
                if "--" in scalar or "SGL" in scalar or "curl" in scalar:
                    structured.argv_text(entry.value_offset, scalar)
        elif dashes and stack:
            item = rest.strip()
            if _BLOCK_SCALAR.fullmatch(item):
                block = (indent, offset)
                continue
            if item[:1] in "[{":
                continue
            value = unquote(item)
            owner = stack[-1]
            if not owner.items:
                seqs.append(owner)
            owner.items.append((value, line_offset + key_indent + (value != item)))
    if block is not None:
        end_block(len(text))

    owners_with_launcher = {
        id(e.parent) for e in seqs if has_launcher([t for t, _ in e.items])
    } | {id(e.parent) for e in seqs if any(LAUNCHER_TEXT.search(t) for t, _ in e.items)}
    for entry in seqs:
        tokens = [t for t, _ in entry.items]
        if any(t.startswith("--") for t in tokens):
            is_section = SECTION.fullmatch(entry.key) is not None
            launched = (
                (id(entry.parent) in owners_with_launcher and entry.key.lower() in ARGV_KEYS)
                or is_section
                or (OVERRIDES.fullmatch(entry.key) is not None and entry.under_section())
            )
            structured.argv(entry.items, launched)
        else:
            structured.argv(entry.items, launched=False)
            if entry.value is None and not SECTION.fullmatch(entry.key):
                structured.key(entry, tokens[0] if tokens else None, leaf=True)
    structured.finish()
