"""The functions of an sglang module as normalised token lists (see `similarity`), for
finding consumer copies of them. Built per module on first use and cached in the
snapshot store, keyed by the file's content digest like the API model: a warm run reads
them back, and releases that share a file share its entry.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property

from driftaudit.similarity import MIN_TOKENS, function_tokens, functions, name_bag
from driftaudit.store import Entry, Json

FINGERPRINTS_VERSION = "1"


@dataclass
class FunctionPrint:
    module: str
    qualname: str
    lineno: int  # of the `def` (decorators excluded)
    start: int  # first line, decorators included
    end: int
    tokens: list[str]
    lines: list[int]

    @property
    def symbol(self) -> str:
        return f"{self.module}.{self.qualname}"

    @cached_property
    def bag(self) -> frozenset[str]:
        return name_bag(self.tokens)

    def to_json(self) -> list:
        return [self.qualname, self.lineno, self.start, self.end, self.tokens, self.lines]

    @classmethod
    def from_json(cls, module: str, data: list) -> FunctionPrint:
        return cls(module, *data)


def extract_prints(
    module: str, code: str, min_tokens: int = MIN_TOKENS, only: str | None = None
) -> list[FunctionPrint]:
    """Every function or method of `code` with at least `min_tokens` tokens (`only`: just
    the one of that qualified name; tokenising is most of the cost)."""
    return _extract_prints(module, code, min_tokens, only)


def _extract_prints(module: str, code: str, min_tokens: int, only: str | None):
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return prints_of_tree(module, tree, min_tokens, only)


def prints_of_tree(
    module: str, tree: ast.Module, min_tokens: int = MIN_TOKENS, only: str | None = None
) -> list[FunctionPrint]:
    """`extract_prints` of a module already parsed."""
    prints = []
    for qualname, fn in functions(tree):
        if only is not None and qualname != only:
            continue
        if min_tokens and (fn.end_lineno or fn.lineno) - fn.lineno < min_tokens // 40:
            continue  # too short to reach min_tokens (a line is rarely over 40 tokens)
        tokens, lines = function_tokens(fn)
        if len(tokens) >= min_tokens:
            start = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
            end = fn.end_lineno or fn.lineno
            prints.append(FunctionPrint(module, qualname, fn.lineno, start, end, tokens, lines))
    return prints


def prints_codec(module: str) -> Json:
    """The codec of a module's fingerprints (its entries are also written by the parse of
    its model: `entries.extract_module_entries`)."""
    return Json(
        lambda data: [FunctionPrint.from_json(module, item) for item in data],
        lambda prints: [p.to_json() for p in prints],
    )


def prints_entry(snapshot, module: str, digest: str) -> Entry[list[FunctionPrint]]:
    """The fingerprints of one module of a snapshot, kept by content."""
    from driftaudit.snapshot.entries import prints_key

    return Entry(
        prints_key(module, digest),
        lambda: extract_prints(module, snapshot.source(module) or ""),
        prints_codec(module),
    )


def module_prints(snapshot, module: str) -> list[FunctionPrint]:
    """The fingerprints of one module of a snapshot (kept by content)."""
    digest = snapshot.file_digest(module)
    if digest is None:
        return []
    return snapshot.store.get(prints_entry(snapshot, module, digest))


def find_function(code: str, qualname: str) -> FunctionPrint | None:
    """One function of a module's source by qualified name, whatever its size."""
    for found in extract_prints("", code, min_tokens=0, only=qualname):
        if found.qualname == qualname:
            return found
    return None
