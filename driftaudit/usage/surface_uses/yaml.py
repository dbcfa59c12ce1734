"""YAML files -> flags, env vars, command lines (rules: `structured`).

Read with PyYAML's `compose` (the libyaml loader when installed): its nodes carry the
position of every key and value. A file that does not parse as YAML (a Helm or Jinja
template: `{{ .Values.x }}`, `{% if %}`) is read by a line scanner instead, which knows
block mappings and sequences, single-line flow collections and block scalars.

Block scalars (`run: |`) are shell; a mapping, or a sequence of mappings, is walked once
however many aliases point at it.
"""

from __future__ import annotations

import re

import yaml

from driftaudit.usage.surface_uses.argv import has_launcher
from driftaudit.usage.surface_uses.shell import ShellScan
from driftaudit.usage.surface_uses.sink import (
    ARGV_KEYS,
    LAUNCHER_TEXT,
    OVERRIDES,
    SECTION,
    Sink,
)
from driftaudit.usage.surface_uses.structured import (
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


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_QUOTED = ('"', "'")
_BLOCK_STYLES = ("|", ">")


def scan_yaml(sink: Sink) -> None:
    try:
        documents = list(yaml.compose_all(sink.text.text, Loader=_LOADER))
    except (yaml.YAMLError, RecursionError, ValueError):
        _scan_lines(sink)
        return
    _Nodes(sink).scan(documents)


def _shell_lines(sink: Sink, start: int, end: int) -> None:
    """The lines of a block scalar, read as shell when they may hold a command line."""
    chunk = sink.text.text[start:end]
    if "--" in chunk or "SGL" in chunk or "curl" in chunk:
        ShellScan(sink, "yaml").scan(start, end)


class _Nodes:
    """The composed documents -> `Structured` keys and argv sequences."""

    def __init__(self, sink: Sink):
        self.sink = sink
        self.text = sink.text.text
        self.structured = Structured(sink, "yaml")
        self.seqs: list[Entry] = []
        self.seen: set[int] = set()  # collections walked already (aliases)

    def scan(self, documents: list[yaml.Node]) -> None:
        for node in documents:
            if isinstance(node, yaml.MappingNode):
                self.mapping(node, None)
            elif isinstance(node, yaml.SequenceNode):
                self.sequence(node, None)
        _finish(self.structured, self.seqs)

    def once(self, node: yaml.Node) -> bool:
        if id(node) in self.seen:
            return False
        self.seen.add(id(node))
        return True

    def block(self, node: yaml.ScalarNode) -> None:
        start = self.text.find("\n", node.start_mark.index) + 1  # below the `|` indicator
        if start > 0:
            _shell_lines(self.sink, start, node.end_mark.index)

    def mapping(self, node: yaml.MappingNode, parent: Entry | None) -> None:
        if not self.once(node):
            return
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            mark = key.start_mark
            entry = Entry(key.value, mark.index, parent, mark.column)
            if isinstance(value, yaml.ScalarNode):
                self.scalar(entry, value)
            elif isinstance(value, yaml.SequenceNode):
                entry.children = "seq"
                if value.flow_style:
                    raw = self.text[value.start_mark.index : value.end_mark.index]
                    entry.value, entry.value_offset = raw, value.start_mark.index
                    entry.items = [_item(c) for c in value.value if isinstance(c, yaml.ScalarNode)]
                    self.seqs.append(entry)
                    self.structured.key(entry, raw, leaf=True)
                else:
                    self.sequence(value, entry)
            elif isinstance(value, yaml.MappingNode):
                entry.children = "map"
                if value.flow_style:
                    self.flow_mapping(value, entry)
                else:
                    self.mapping(value, entry)

    def scalar(self, entry: Entry, value: yaml.ScalarNode) -> None:
        if value.style in _BLOCK_STYLES:
            entry.value = value.style
            self.block(value)
            return
        if not value.value and not value.style:
            return  # `key:` with nothing after it
        entry.value, entry.value_offset = value.value, value.start_mark.index
        self.structured.key(entry, value.value, leaf=True)
        if "--" in value.value or "SGL" in value.value or "curl" in value.value:
            self.structured.argv_text(entry.value_offset, value.value)

    def flow_mapping(self, node: yaml.MappingNode, entry: Entry) -> None:
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode):
                child = Entry(key.value, key.start_mark.index, entry, value=value.value or None)
                self.structured.key(child, value.value or None, leaf=bool(value.value))

    def sequence(self, node: yaml.SequenceNode, owner: Entry | None) -> None:
        if not self.once(node):
            return
        for item in node.value:
            if isinstance(item, yaml.ScalarNode) and owner is not None:
                if item.style in _BLOCK_STYLES:
                    self.block(item)
                else:
                    if not owner.items:
                        self.seqs.append(owner)
                    owner.items.append(_item(item))
            elif isinstance(item, yaml.MappingNode) and not item.flow_style:
                # `- key: value` opens a mapping: one entry per list item
                self.mapping(item, Entry("-", item.start_mark.index, owner, children="map"))


def _item(node: yaml.ScalarNode) -> tuple[str, int]:
    """A sequence scalar and the offset of its first character (inside the quotes)."""
    return node.value, node.start_mark.index + (1 if node.style in _QUOTED else 0)


def _finish(structured: Structured, seqs: list[Entry]) -> None:
    """Sequences: argv lists (launched when a sibling names the launcher, or under an
    sglang section), or plain values of their key."""
    owners_with_launcher = {id(e.parent) for e in seqs if has_launcher([t for t, _ in e.items])} | {
        id(e.parent) for e in seqs if any(LAUNCHER_TEXT.search(t) for t, _ in e.items)
    }
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


def _scan_lines(sink: Sink) -> None:
    """The fallback for YAML that does not parse (templates): line by line."""
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

    _finish(structured, seqs)
