"""What YAML, JSON and TOML share: a key with its parent chain (`Entry`) and the
rules (`Structured`) that make a key a flag, an env var or a command line.

A key is an sglang flag when it sits under a section named like `sglang`, `sglang_args`,
`server_args`, `sglang_config`, or carries a wrapping prefix (`sglang_tp_size:`). A section
that holds an `overrides`/`server_args`/`args`/`kwargs`/`engine_args` mapping contributes
only the keys inside it: its other keys describe the consumer's own deployment. Env vars:
keys named `SGLANG_*`, `- name: X` under an env section, `- X=1` items. A sequence holding
a launcher (`command: [python, -m, sglang.launch_server, ...]`) is an argv.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from driftaudit.usage.surface_uses.argv import FlagHit, argv_flags, has_launcher
from driftaudit.usage.surface_uses.shell import ShellScan
from driftaudit.usage.surface_uses.sink import (
    ENV_ASSIGN,
    ENV_NAME,
    ENV_SECTION,
    OVERRIDES,
    SECTION,
    Sink,
)


@dataclass
class Entry:
    """One key of a YAML/JSON/TOML document, with its parent chain."""

    key: str
    offset: int  # of the key in the file
    parent: Entry | None
    indent: int = 0
    value: str | None = None  # inline scalar; None for a parent
    value_offset: int = -1
    children: str = ""  # "map" | "seq"
    items: list[tuple[str, int]] = field(default_factory=list)  # sequence scalars

    def ancestors(self) -> Iterator[Entry]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def under_section(self) -> bool:
        return bool(SECTION.fullmatch(self.key)) or any(
            SECTION.fullmatch(a.key) for a in self.ancestors()
        )


class Structured:
    """What YAML, JSON and TOML share: sections, prefixed keys, env keys, argv lists."""

    def __init__(self, sink: Sink, context: str):
        self.sink = sink
        self.context = context
        self.candidates: list[Entry] = []  # keys that are flags if under a section

    def key(self, entry: Entry, value: str | None, leaf: bool) -> None:
        key = entry.key
        if ENV_NAME.fullmatch(key):
            self.sink.env(entry.offset, key, "set", self.context)
            return
        if key == "name" and value and ENV_NAME.fullmatch(value):
            if any(ENV_SECTION.fullmatch(a.key) for a in entry.ancestors()):
                self.sink.env(entry.value_offset, value, "set", self.context)
                return
        if not leaf:
            return
        if SECTION.fullmatch(key):
            if value and "--" in value:  # sglang_args: "--tp 2 --dp 1"
                self.argv_text(entry.value_offset, value, launched=True)
            return
        split = self.sink.prefixes.split_name(key)
        if split:
            self.sink.flag(entry.offset, FlagHit(0, split[0], key, split[1], value), self.context)
            return
        entry.value = value
        self.candidates.append(entry)

    def finish(self) -> None:
        """Keys under an sglang section; a section with an overrides mapping keeps only those."""
        with_overrides: set[int] = set()
        kept: list[tuple[Entry, Entry, bool]] = []
        for entry in self.candidates:
            section = None
            under_override = False
            for ancestor in entry.ancestors():
                if SECTION.fullmatch(ancestor.key):
                    section = ancestor
                    break
                if OVERRIDES.fullmatch(ancestor.key):
                    under_override = True
            if section is None:
                continue
            if under_override:
                with_overrides.add(id(section))
            kept.append((entry, section, under_override))
        for entry, section, under_override in kept:
            if id(section) in with_overrides and not under_override:
                continue
            key = entry.key
            flag = key if key.startswith("--") else "--" + key.replace("_", "-")
            if re.fullmatch(r"--[A-Za-z][A-Za-z0-9-]*", flag):
                hit = FlagHit(0, flag, key, None, entry.value)
                self.sink.flag(entry.offset, hit, self.context)

    def argv(self, items: list[tuple[str, int]], launched: bool) -> None:
        tokens = [text for text, _ in items]
        launched = launched and not has_launcher(tokens)
        for hit in argv_flags(tokens, self.sink.prefixes, launched):
            text, offset = items[hit.index]
            self.sink.flag(offset + max(0, text.find(hit.written)), hit, self.context)
        for text, offset in items:
            m = ENV_ASSIGN.match(text)
            if m:
                self.sink.env(offset, m.group(1), "set", self.context)
            elif " " in text and ("--" in text or "SGL" in text or "curl" in text):
                self.argv_text(offset, text)

    def argv_text(self, offset: int, value: str, launched: bool = False) -> None:
        """A scalar that is a command line, scanned as shell over its span in the file."""
        at = self.sink.text.text.find(value, max(offset, 0))
        if offset >= 0 and at >= 0:
            ShellScan(self.sink, self.context).scan(at, at + len(value), launched)


FLOW_ITEM = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^,\[\]{}]+?)\s*(?:,|$)""")
FLOW_PAIR = re.compile(r"""([\w.-]+|"[^"]*"|'[^']*')\s*[:=]\s*("[^"]*"|'[^']*'|[^,}]*)""")


def strip_comment(line: str) -> str:
    if "#" not in line:
        return line.rstrip()
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"" and (i == 0 or line[i - 1] in " \t:-[{,="):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def flow_items(value: str, offset: int) -> list[tuple[str, int]]:
    items = []
    for m in FLOW_ITEM.finditer(value[1:-1]):
        raw = m.group(1)
        if raw.strip():
            text = unquote(raw)
            start = offset + 1 + m.start(1) + (1 if text != raw.strip() else 0)
            items.append((text, start))
    return items


def flow_pairs(value: str, offset: int) -> list[tuple[str, str, int]]:
    return [
        (unquote(m.group(1)), unquote(m.group(2)), offset + 1 + m.start(1))
        for m in FLOW_PAIR.finditer(value[1:-1])
    ]
