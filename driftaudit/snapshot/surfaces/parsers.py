"""The tool-call and reasoning parser names an sglang tree registers (the values
`--tool-call-parser` / `--reasoning-parser` accept).

Every release from 0.5.2 to 0.5.23 registers them in class-level dict literals:
`FunctionCallParser.ToolCallParserEnum` (sglang/srt/function_call/function_call_parser.py)
and `ReasoningParser.DetectorMap` (sglang/srt/parser/reasoning_parser.py). The
registry is found by its name wherever it lives (module or class level, annotated or
not), and `Registry["name"] = ...` and `Registry.update({...})` add names to it.
Since 0.5.22 the names are also listed in dependency-free modules
(`function_call/parser_names.py: TOOL_CALL_PARSER_NAMES`,
`parser/reasoning_parser_names.py: REASONING_PARSER_NAMES`) for the CLI choices; a
name found only there is added with that location, so a release that keeps only the
list (or builds the dict another way) still yields its names.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.astwalk import walk
from driftaudit.snapshot.surfaces._files import (
    const_str,
    dotted,
    iter_sources,
    match_lines,
    parse_around,
    prefilter,
    where,
)

TOOL_CALL_REGISTRIES = ("ToolCallParserEnum",)
REASONING_REGISTRIES = ("DetectorMap",)
TOOL_CALL_LISTS = ("TOOL_CALL_PARSER_NAMES",)
REASONING_LISTS = ("REASONING_PARSER_NAMES",)
_NEEDLE = prefilter(
    re.compile(rb"ToolCallParserEnum"),
    re.compile(rb"DetectorMap"),
    re.compile(rb"_PARSER_NAMES"),
)


@dataclass
class Parsers:
    tool_call: dict[str, str] = field(default_factory=dict)  # name -> "file:line"
    reasoning: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"tool_call": dict(self.tool_call), "reasoning": dict(self.reasoning)}

    @classmethod
    def from_json(cls, data: dict) -> Parsers:
        return cls(dict(data.get("tool_call") or {}), dict(data.get("reasoning") or {}))


def extract_parsers(root: Path) -> Parsers:
    tool_call: dict[str, str] = {}
    reasoning: dict[str, str] = {}
    tool_list: dict[str, str] = {}
    reasoning_list: dict[str, str] = {}
    for rel, text in iter_sources(root, _NEEDLE, under="sglang/srt"):
        trees = parse_around(text, rel, match_lines(text.encode(), _NEEDLE))
        nodes = (node for tree in trees for node in walk(tree))
        for node in nodes:
            for target, names in _registrations(node, rel):
                if target in TOOL_CALL_REGISTRIES:
                    _add(tool_call, names)
                elif target in REASONING_REGISTRIES:
                    _add(reasoning, names)
                elif target in TOOL_CALL_LISTS:
                    _add(tool_list, names)
                elif target in REASONING_LISTS:
                    _add(reasoning_list, names)
    _add(tool_call, tool_list)
    _add(reasoning, reasoning_list)
    return Parsers(dict(sorted(tool_call.items())), dict(sorted(reasoning.items())))


def _add(into: dict[str, str], names: dict[str, str]) -> None:
    for name, location in names.items():
        into.setdefault(name, location)


def _registrations(node: ast.AST, rel: str) -> list[tuple[str, dict[str, str]]]:
    """(registry name, {parser name: location}) for one statement or call."""
    out = []
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                out.append((target.id, _names(node.value, rel)))
            elif isinstance(target, ast.Subscript):  # Registry["name"] = Detector
                name = const_str(target.slice)
                registry = (dotted(target.value) or "").rsplit(".", 1)[-1]
                if name is not None and registry:
                    out.append((registry, {name: where(rel, target.lineno)}))
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("update", "extend", "append")
        and node.args
    ):
        registry = (dotted(node.func.value) or "").rsplit(".", 1)[-1]
        if registry:
            value = node.args[0]
            if node.func.attr == "append":
                value = ast.List(elts=[value])
            out.append((registry, _names(value, rel)))
    return out


def _names(value: ast.AST, rel: str) -> dict[str, str]:
    """The string keys of a dict literal, or the strings of a list/tuple/set literal."""
    names: dict[str, str] = {}
    if isinstance(value, ast.Dict):
        for key in value.keys:
            name = const_str(key)
            if name is not None:
                names.setdefault(name, where(rel, key.lineno))
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        for element in value.elts:
            name = const_str(element)
            if name is not None:
                names.setdefault(name, where(rel, element.lineno))
    return names
