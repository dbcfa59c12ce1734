"""Walk a consumer: find the files that can reach sglang, then collect their usages.

Only files that import sglang (or name it in a string: `importlib`, `mock.patch`)
are parsed, plus files that import a consumer module re-exporting sglang names
(found by a text match on the module's name in an import line, then confirmed on
the parsed imports), repeated until no new re-exporter appears.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from driftaudit.pysource import Columns, statements
from driftaudit.usage.exports import ConsumerExports, absolute_module, summary_names
from driftaudit.usage.files import ConsumerFile, ConsumerFiles
from driftaudit.usage.installs import installed_classes
from driftaudit.usage.usages import ParseFailure, UsageSet
from driftaudit.usage.visitor import UsageVisitor

# An import of sglang (at any indentation: lazy imports too) or a string naming it.
_REACHES_SGLANG = re.compile(
    r"""^[ \t]*(?:from|import)[ \t]+sglang\b|['"]sglang[.'"]|['"]meta_info['"]""", re.M
)


_IMPORT_LINE = re.compile(r"^[ \t]*(?:from|import)[ \t][^\n]*", re.M)
_WORD = re.compile(r"\w+")


class _File:
    def __init__(self, entry: ConsumerFile):
        self.entry = entry
        self.rel = entry.rel
        self.module = entry.module
        self.is_package = entry.is_package
        self.text = entry.text or ""
        self.summary: _Summary | None = None  # None: not read yet, or it does not parse
        # substring tests first: the regex alone costs ~0.5 s on a large consumer
        self.reaches_sglang = ("sglang" in self.text or "meta_info" in self.text) and bool(
            _REACHES_SGLANG.search(self.text)
        )
        self._import_words: frozenset[str] | None = None

    @property
    def import_words(self) -> frozenset[str]:
        """The words of its import lines (their first lines), read once: each round of
        `_mentioning` asks it of every file not read yet (3 x 50 ms on miles otherwise)."""
        if self._import_words is None:
            lines = " ".join(_IMPORT_LINE.findall(self.text))
            self._import_words = frozenset(_WORD.findall(lines))
        return self._import_words


# What a module contributes to the export table (its bindings, its star imports, its
# classes with bases: (bases, the names the body defines)), the modules each of its
# import statements may name (to tell whether it imports a re-exporter), the star
# import's bound names, and what its top-level names stand for in a test.
_Summary = tuple[dict, list, dict, list, frozenset | None, dict]


def _summarize(file: _File) -> _Summary | None:
    """The file's `_Summary`, from its tree alone (None: it does not parse)."""
    tree = file.entry.tree
    if tree is None:
        return None
    part = ConsumerExports()
    part.add_module(file.module, tree, file.is_package)
    classes = {
        name: (bases, summary_names(node))
        for name, (bases, node) in part.classes.get(file.module, {}).items()
    }
    imports = []
    for node in statements(tree):
        if isinstance(node, ast.ImportFrom):
            source = absolute_module(file.module, file.is_package, node.level, node.module)
            imports.append([source] + [f"{source}.{a.name}" for a in node.names])
        elif isinstance(node, ast.Import):
            imports.append([a.name for a in node.names])
    bindings, stars = part.bindings.get(file.module, {}), part.stars.get(file.module, [])
    conditions = part.conditions.get(file.module, {})
    return bindings, stars, classes, imports, part.bound.get(file.module), conditions


def _add(exports: ConsumerExports, file: _File, summary: _Summary) -> None:
    """`exports.add_module` from the summary (the class bodies' names stand for the class
    nodes: all the table reads of them)."""
    bindings, stars, classes, _, bound, conditions = summary
    exports.modules.add(file.module)
    if conditions:
        exports.conditions[file.module] = conditions
    if bound is not None:
        exports.bound[file.module] = bound
    exports.bindings.setdefault(file.module, {}).update(bindings)
    if stars:
        exports.stars.setdefault(file.module, []).extend(stars)
    if classes:
        exports.classes.setdefault(file.module, {}).update(classes)


def _installed(entry) -> set[str]:
    """The classes this file puts in an sglang object's place (`usage.installs`)."""

    def compute() -> set[str]:
        return installed_classes(entry.tree, entry.text) if entry.tree is not None else set()

    return entry.derived("installed-classes", compute, set)


def collect_usages(root: Path | ConsumerFiles, exclude: list[str] | None = None) -> UsageSet:
    """What the consumer's Python files touch of sglang (`root`: a folder or its index).

    With a cache on the index (`ConsumerFiles.cache`), an unchanged file is not parsed
    and its usages are reused while the export table is what it was (`file_cache`)."""
    index = root if isinstance(root, ConsumerFiles) else ConsumerFiles(root, exclude)
    cache = index.cache
    files = [_File(entry) for entry in index.python()]
    result = UsageSet(str(index.root), files_total=len(files))
    exports = ConsumerExports()
    for file in files:
        exports.modules.add(file.module)

    visit: list[_File] = []
    pending = [f for f in files if f.reaches_sglang]
    parsed: set[str] = set()
    while pending:
        for file in pending:
            parsed.add(file.rel)
            file.summary = file.entry.derived(
                "exports-summary", lambda file=file: _summarize(file), tuple
            )
            if file.summary is not None:
                _add(exports, file, file.summary)
        visit += [
            f
            for f in pending
            if f.summary is not None and (f.reaches_sglang or _imports_reexport(f.summary, exports))
        ]
        reexporters = {f.module for f in visit if exports.exports_sglang(f.module)}
        pending = _mentioning(reexporters, [f for f in files if f.rel not in parsed])

    if cache is not None:
        cache.use_exports(exports)
    scanned = 0
    for file in visit:
        found = cache.load_usages(file.entry) if cache is not None else None
        if found is not None:
            scanned += 1
            result.usages.extend(found[0])
            result.defined_names |= found[1]
            result.fields.update(found[2])
            result.installed |= _installed(file.entry)
            continue
        columns = Columns(file.text)
        visitor = UsageVisitor(file.rel, file.module, file.is_package, exports, columns)
        try:
            usages = visitor.run(file.entry.tree)
        except (RecursionError, MemoryError) as exc:  # nesting deeper than the visitor's stack
            index.fail(file.entry, exc)
            continue
        if cache is not None:
            cache.save_usages(file.entry, usages, visitor.defined_names, visitor.fields)
        scanned += 1
        result.usages.extend(usages)
        result.defined_names |= visitor.defined_names
        result.fields.update(visitor.fields)
        result.installed |= _installed(file.entry)
    result.files_scanned = scanned
    result.failures = failures(index)
    return result


def failures(index: ConsumerFiles) -> list[ParseFailure]:
    """The Python files that could not be analysed so far, in path order."""
    return [
        ParseFailure(rel, found.line, found.column, found.message)
        for rel, found in sorted(index.failures.items())
    ]


def _mentioning(modules: set[str], files: list[_File]) -> list[_File]:
    """Files with an import line naming one of `modules` (by its last segment)."""
    words = {module.rpartition(".")[2] for module in modules}
    if not words:
        return []
    if all(_WORD.fullmatch(word) for word in words):  # whole words: one set test a file
        return [f for f in files if not words.isdisjoint(f.import_words)]
    alternatives = "|".join(sorted(map(re.escape, words)))
    pattern = re.compile(rf"^[ \t]*(?:from|import)[ \t][^\n]*\b(?:{alternatives})\b", re.M)
    # a substring test first (in C): the regex tries every line start of every file
    return [f for f in files if any(w in f.text for w in words) and pattern.search(f.text)]


def _imports_reexport(summary: _Summary, exports: ConsumerExports) -> bool:
    """Does this file import a consumer module that re-exports sglang names?"""
    return any(exports.exports_sglang(m) for names in summary[3] for m in names)
