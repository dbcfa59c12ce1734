"""Whose is a wrapped name read in Python (`args.sglang_x`, `cfg.sglang_x`): sglang's or
the consumer's own?

- sglang's: the dest of an option the consumer generated from sglang's own flags
  (`ServerArgs.add_cli_args(parser)`, possibly through a wrapper that prefixes each
  flag and dest). argparse derives the dest from sglang's flag, so when sglang renames
  the flag the dest follows, and every read of it must be renamed with it.
- the consumer's: a name it declares itself: a class field (a run config dataclass),
  `self.sglang_x = ...` in a method, the dest of its own `add_argument("--sglang-x")`.
  It is spelled again in the declaration, in constructor keywords and in every read, so
  one read is never renamed alone. What reaches sglang is the flag literal the consumer
  emits next to a read of it (`argv += ["--sglang-x", cfg.sglang_x]`): that literal is
  what needs the new flag, and its own finding respells it.

Project-wide, from the consumer's file index; only files that spell one of the names
asked about are parsed again.
"""

from __future__ import annotations

import ast
import os
import re
from collections import deque
from dataclasses import dataclass, field
from functools import partial

from driftaudit.astwalk import children, walk
from driftaudit.pysource import Columns, any_within, lines_spelling
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.surface_uses.dests import owned_dests

Place = tuple[str, int]  # (path, line)


@dataclass
class NameOwners:
    declared: list[Place] = field(default_factory=list)  # where the consumer declares it
    # (path, line, what): a flag literal (`--x`, `--x=...`) in a statement reading the name,
    # or the keyword or dict key its value is passed under (`dict(x=cfg.sglang_x)`)
    emitted: list[tuple[str, int, str]] = field(default_factory=list)


class DestOwners:
    def __init__(self, files: ConsumerFiles, names: set[str]):
        self.names: dict[str, NameOwners] = {name: NameOwners() for name in names}
        spelled = [_Spelled(group) for group in _by_head(names)]
        for file in files.python() if names else ():
            text = file.text
            present = sorted(n for group in spelled for n in group.present(text or ""))
            if not present:
                continue
            # per file content and the names it spells (`ConsumerFile.derived`)
            compute = partial(self._of_file, file, present)
            found = file.derived("dest-owners:" + ",".join(present), compute, dict)
            for name, (declared, emitted) in found.items():
                self.names[name].declared += declared
                self.names[name].emitted += emitted

    @classmethod
    def _of_file(cls, file, names: list[str]) -> dict[str, tuple[list, list]]:
        """What one file declares and emits of `names`."""
        tree = file.tree
        if tree is None:
            return {}
        one = cls.__new__(cls)
        one.names = {name: NameOwners() for name in names}
        # the lines spelling a name (or the option it is the dest of): the only lines
        # with something to find (`_scan` skips the subtrees that have none)
        spellings = [*names, *(n.replace("_", "-") for n in names)]
        one._lines = lines_spelling(file.text or "", spellings)
        one._scan(file.rel, tree)
        return {n: (o.declared, o.emitted) for n, o in one.names.items() if o.declared or o.emitted}

    def of(self, name: str) -> NameOwners:
        return self.names.get(name, NameOwners())

    def _scan(self, path: str, tree: ast.Module) -> None:
        nodes = list(self._walk_named(tree))
        calls = [n for n in nodes if isinstance(n, ast.Call)]
        for name in owned_dests(calls) & self.names.keys():
            line = next(c.lineno for c in calls if name in owned_dests([c]))
            self.names[name].declared.append((path, line))
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                if self._names_in(node):
                    self._class_fields(path, node)
            elif isinstance(node, ast.stmt) and not _compound(node):
                if self._names_in(node):
                    self._emitted(path, node, node)
            elif isinstance(node, ast.If) and self._names_in(node.test):
                for statement in node.body:  # if cfg.sglang_x: argv += ["--sglang-x"]
                    if not _compound(statement):
                        self._emitted(path, node.test, statement)

    def _names_in(self, node: ast.AST) -> bool:
        """Do the lines of `node` spell one of the names (else it reads none of them)?"""
        start = min([d.lineno for d in getattr(node, "decorator_list", ())] + [node.lineno])
        return any_within(self._lines, start, getattr(node, "end_lineno", None) or node.lineno)

    def _walk_named(self, tree: ast.Module):
        """`astwalk.walk` (breadth first), without the subtrees on lines that spell no
        name: the nodes it gives keep their order."""
        todo = deque([tree])
        while todo:
            node = todo.popleft()
            yield node
            for child in children(node):
                if getattr(child, "lineno", None) is None or self._names_in(child):
                    todo.append(child)

    def _class_fields(self, path: str, node: ast.ClassDef) -> None:
        for statement in node.body:
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            if isinstance(statement, ast.AnnAssign):
                targets = [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in self.names:
                    self.names[target.id].declared.append((path, target.lineno))
        for method in node.body:  # self.sglang_x = ... in a method
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = method.args.posonlyargs + method.args.args
            me = params[0].arg if params else None
            for sub in walk(method):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.ctx, ast.Store)
                    and sub.attr in self.names
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == me
                ):
                    self.names[sub.attr].declared.append((path, sub.lineno))

    def _emitted(self, path: str, reads: ast.AST, statement: ast.stmt) -> None:
        """The flag literals of `statement`, paired with the names `reads` reads."""
        read = {n.attr for n in walk(reads) if isinstance(n, ast.Attribute)} & set(self.names)
        if not read:
            return
        for node in walk(statement):
            if isinstance(node, ast.keyword) and node.arg:
                self._passed_under(path, node.arg, node.value, node.value.lineno)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        self._passed_under(path, key.value, value, key.lineno)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words = node.value.split("=", 1)[0].split()
                if len(words) == 1 and words[0].startswith("--") and len(words[0]) > 2:
                    for name in read:
                        self.names[name].emitted.append((path, node.lineno, words[0]))

    def _passed_under(self, path: str, key: str, value: ast.expr, line: int) -> None:
        for node in walk(value):
            if isinstance(node, ast.Attribute) and node.attr in self.names:
                self.names[node.attr].emitted.append((path, line, key))


_HEAD = 6  # names grouped by their first characters: one substring test rules a group out


def _by_head(names: set[str]) -> list[set[str]]:
    groups: dict[str, set[str]] = {}
    for name in names:
        groups.setdefault(name[:_HEAD], set()).add(name)
    return list(groups.values())


class _Spelled:
    """Which of a group of names a text spells. Every name spelled starts where the
    group's common prefix does and runs on in word characters: the prefixes of the runs
    starting at each of its occurrences (a lookahead: also one inside another's run) are
    what a text spells; one test of the prefix rules out most texts."""

    def __init__(self, names: set[str]):
        self.names = names
        self.common = os.path.commonprefix(sorted(names))
        words = all(re.fullmatch(r"\w+", name) for name in names)
        pattern = f"(?=({re.escape(self.common)}\\w*))"
        self.runs_of = re.compile(pattern).findall if words and self.common else None

    def present(self, text: str) -> set[str]:
        if not text or self.common not in text:
            return set()
        if self.runs_of is None:
            return {n for n in self.names if n in text}
        runs = set(self.runs_of(text))
        start = len(self.common)
        return {run[:end] for run in runs for end in range(start, len(run) + 1)} & self.names


def _compound(node: ast.stmt) -> bool:
    return hasattr(node, "body")  # if/for/while/with/try/def/class: their statements count


# calls that give the consumer's own parser an option (or subcommand): their names are
# the consumer's, never respelled (here and in `fix.codemods.replace_text`)
PARSER_DEFINITIONS = {"add_argument", "add_option", "add_parser", "option", "argument"}


def defines_own_flag(files: ConsumerFiles, path: str, line: int, column: int) -> bool:
    """Is the flag at `path:line:column` a name the consumer's own parser gives its own
    option (`parser.add_argument("--sglang-x")`)? Respelling it would change the
    consumer's CLI, not what reaches sglang (the codemods refuse it too)."""
    file = files.get(path) if path.endswith(".py") else None
    if file is None or file.text is None:
        return False
    spans = file.derived("own-options", lambda: _option_names(file), list)
    return any((s[0], s[1]) <= (line, column) < (s[2], s[3]) for s in spans)


def _option_names(file) -> list[tuple[int, int, int, int]]:
    """The spans of the string literals a parser definition in the file names."""
    tree = file.tree
    if tree is None:
        return []
    columns = Columns(file.text)
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in PARSER_DEFINITIONS:
            spans += [
                tuple(columns.span(arg))
                for arg in node.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
    return spans
