"""The consumer's files: walked once, each read and decoded once, each Python file parsed
once, shared by usage collection, the surface scanners, rule-pack text patterns and the
fixer.

What is walked: every regular file below the root, outside virtualenvs, caches and
hidden folders (`SKIP_DIRS`), outside the `--exclude`/config globs and what the
consumer's `.gitignore` files ignore (both with gitignore semantics, via `pathspec`:
`tests/` and `tests/**` cover nested files). Folder symlinks are not followed; a file
symlink is read only when it points inside the tree. What is left out on the way (a
dangling or looping symlink, a FIFO or device, a file over `MAX_FILE_BYTES`, one that
cannot be read or vanished during the run) is listed in `skipped`; a Python file among
them cannot be audited and is a parse failure (DA001).
"""

from __future__ import annotations

import ast
import errno
import functools
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pathspec

from driftaudit.pysource import ParseProblem, decode_python, decode_text, parse_module, problem

SKIP_DIRS = {
    ".git",
    ".hg",
    ".venv",
    "venv",
    "env",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
    ".tox",
    ".nox",
    ".eggs",
    "site-packages",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}
T = TypeVar("T")
MAX_FILE_BYTES = 4_000_000  # larger files are data (or generated), not read


class Ignore:
    """Gitignore-style patterns (pathspec). Without negations (`!x`), a path is ignored
    when any pattern matches, and one regex made of them all answers that: pathspec
    tries each pattern in turn, a hundred searches per path for a common .gitignore.
    The patterns are translated with pathspec and compiled once, together; pathspec's
    own spec (a regex per pattern: 10 ms for a 200-line .gitignore) is made only when a
    negation needs it."""

    def __init__(self, lines: list[str]):
        self._lines = lines
        self._spec: pathspec.GitIgnoreSpec | None = None
        self.any: re.Pattern[str] | None = None
        alternatives: list[str] | None = []
        try:
            translate = _pattern_class().pattern_to_regex
            for line in lines:
                regex, include = translate(line)
                if include is None or regex is None:
                    continue  # a comment or a blank line
                if not include:
                    alternatives = None  # a negation: pathspec decides
                    break
                alternatives.append(_GROUP_NAME.sub("(?:", regex))
        except ValueError:  # a pattern pathspec refuses: its spec says so, as before
            alternatives = None
        if alternatives is not None:
            try:
                self.any = re.compile("|".join(f"(?:{a})" for a in alternatives) or "(?!)")
            except re.error:  # a pattern form this does not know: pathspec decides
                self.any = None
        if self.any is None:
            self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def match(self, rel: str) -> bool:
        if self.any is not None:
            return self.any.search(rel) is not None
        assert self._spec is not None
        return self._spec.match_file(rel)


@functools.cache
def _pattern_class() -> type:
    """The pattern class `GitIgnoreSpec` compiles lines with (it differs across pathspec
    releases)."""
    return type(pathspec.GitIgnoreSpec.from_lines(["x"]).patterns[0])


_GROUP_NAME = re.compile(r"\(\?P<\w+>")


@dataclass(frozen=True)
class Skipped:
    rel: str
    reason: str


class ConsumerFile:
    """One file of the consumer: its text and, for Python, its tree, read on first use."""

    reads = 0  # files opened, all indexes together (a benchmark figure)

    def __init__(self, files: ConsumerFiles, rel: str, size: int):
        self._files = files
        self.rel = rel
        self.path = files.root / rel
        self.size = size
        self.is_python = rel.endswith(".py")
        self.encoding = "utf-8"  # how to write it back (the fixer)
        self.newline = "\n"
        self.raw: str | None = None  # Python files: the text with the file's own line ends
        self.digest: str | None = None  # and the sha256 of the bytes read
        self._text: str | None = None
        self._data: bytes | None = None  # the bytes `ConsumerFiles.fingerprint` read
        self._tree: ast.Module | None = None
        self._read = self._parsed = False

    @property
    def module(self) -> str:
        return module_name(self._files.root, self.path)

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def text(self) -> str | None:
        """The decoded text with "\\n" newlines; None when unreadable or not text."""
        if not self._read:
            self._read = True
            self._text = self._load()
        return self._text

    def _load(self) -> str | None:
        data, self._data = self._data, None
        if data is None:
            ConsumerFile.reads += 1
            try:
                data = _read_regular(self.path)
            except OSError as exc:
                self._files.skip(self, _reason(exc))
                return None
        if self.is_python:
            try:
                decoded = decode_python(data)
            except SyntaxError as exc:
                self._files.fail(self, ParseProblem(1, 1, str(exc)))
                return None
        else:
            decoded = decode_text(data)
            if decoded is None:
                return None  # binary: nothing to audit
        self.encoding, self.newline = decoded.encoding, decoded.newline
        if self.is_python:  # what the fixer rewrites and checks, without reading again
            self.raw, self.digest = decoded.raw, decoded.digest
        return decoded.text

    @property
    def parsed(self) -> bool:
        """Has the tree been asked for already (it then costs nothing)?"""
        return self._parsed

    @property
    def tree(self) -> ast.Module | None:
        """The module's tree (Python files); None, and a failure recorded, when it does
        not parse."""
        if not self._parsed:
            self._parsed = True
            text = self.text
            if text is not None:
                parsed = parse_module(text, self.rel)
                if isinstance(parsed, ParseProblem):
                    self._files.fail(self, parsed)
                else:
                    self._tree = parsed
        return self._tree

    def derived(self, name: str, compute: Callable[[], T], kind: type | None = None) -> T:
        """`compute()`, a pure function of this file (its text, tree, path and module:
        nothing of another file), named `name`; cached by the file's content when the
        index has a cache (`ConsumerFiles.cache`, see `usage.file_cache`), so an
        unchanged file is neither parsed nor analysed again. `kind`: what the value is
        (a stored value of another type is computed again)."""
        cache = self._files.cache
        if cache is None or self.text is None:
            return compute()
        return cache.derived(self, name, compute, kind)


class ConsumerFiles:
    """The index of one consumer tree (see the module docstring)."""

    def __init__(self, root: Path, exclude: list[str] | None = None):
        self.root = Path(root)
        self.exclude = list(exclude or [])
        self.skipped: list[Skipped] = []
        self.failures: dict[str, ParseProblem] = {}  # Python files that could not be read
        self.cache = None  # a `usage.file_cache.FileCache`: per-file results by content
        self._excluded = Ignore(self.exclude)
        self.files: list[ConsumerFile] = list(self._walk())
        self.by_rel = {f.rel: f for f in self.files}

    def __iter__(self) -> Iterator[ConsumerFile]:
        return iter(self.files)

    def python(self) -> list[ConsumerFile]:
        return [f for f in self.files if f.is_python]

    def get(self, rel: str) -> ConsumerFile | None:
        return self.by_rel.get(rel)

    def fingerprint(self) -> str | None:
        """A digest of everything the walk found: each file's path and bytes, and what
        it left out. The bytes read here are the ones every stage then reads (so findings
        computed later belong to this digest). None when a file cannot be read."""
        digest = hashlib.sha256()
        for item in self.skipped:
            digest.update(f"skipped\0{item.rel}\0{item.reason}\n".encode())
        for file in self.files:
            if file._read:  # a .gitignore, read by the walk: what it read counts
                data = b"text\0" + (file.text or "").encode("utf-8", "surrogatepass")
            elif file._data is not None:
                data = file._data
            else:
                ConsumerFile.reads += 1
                try:
                    data = file._data = _read_regular(file.path)
                except OSError:
                    return None
            digest.update(f"{file.rel}\0{len(data)}\n".encode())
            digest.update(data)
        return digest.hexdigest()

    def release_trees(self) -> None:
        """Drop the parsed trees once every scanner has read them: millions of nodes kept
        alive make every later garbage collection (and the exit) slower."""
        for file in self.files:
            file._tree, file._parsed = None, False

    def skip(self, file: ConsumerFile | str, reason: str) -> None:
        rel = file if isinstance(file, str) else file.rel
        self.skipped.append(Skipped(rel, reason))
        if rel.endswith(".py"):
            self.failures.setdefault(rel, ParseProblem(1, 1, f"not read: {reason}"))

    def fail(self, file: ConsumerFile, found: ParseProblem | BaseException) -> None:
        """A Python file that could not be analysed (first reason kept)."""
        if isinstance(found, BaseException):
            found = problem(found)
        self.failures.setdefault(file.rel, found)

    # ---- the walk --------------------------------------------------------------------

    def _walk(self) -> Iterator[ConsumerFile]:
        real_root = os.path.realpath(self.root)
        stack: list[tuple[str, list[tuple[str, Ignore]]]] = [("", [])]
        while stack:  # depth first, a folder's files before its subfolders, all sorted
            rel_dir, ignores = stack.pop()
            directory = os.path.join(self.root, rel_dir) if rel_dir else str(self.root)
            try:
                with os.scandir(directory) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            except OSError as exc:
                self.skip(rel_dir or ".", _reason(exc))
                continue
            gitignore = next((e for e in entries if e.name == ".gitignore"), None)
            ignore_file = None
            if gitignore is not None:
                rel = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
                ignore_file = self._regular(gitignore, rel, real_root)
                ignores = ignores + self._gitignore(ignore_file, rel_dir)
            folders = []
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if entry is gitignore:
                    if ignore_file is not None and not self._ignored(rel, ignores):
                        yield ignore_file
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.name in SKIP_DIRS or entry.name.startswith("."):
                        continue
                    if not self._ignored(rel + "/", ignores):
                        folders.append(rel)
                    continue
                if self._ignored(rel, ignores):
                    continue
                found = self._regular(entry, rel, real_root)
                if found is not None:
                    yield found
            stack.extend((rel, ignores) for rel in reversed(folders))

    def _regular(self, entry: os.DirEntry, rel: str, real_root: str) -> ConsumerFile | None:
        try:
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if os.path.isdir(target):
                    self.skipped.append(Skipped(rel, "symbolic link to a folder, not followed"))
                    return None
                if os.path.commonpath([real_root, target]) != real_root:
                    self.skip(rel, "symbolic link out of the tree, not followed")
                    return None
            info = entry.stat()  # follows a symlink: ELOOP, ENOENT for a bad one
        except OSError as exc:
            self.skip(rel, _reason(exc))
            return None
        except ValueError:  # commonpath across drives
            self.skip(rel, "symbolic link out of the tree, not followed")
            return None
        if not stat.S_ISREG(info.st_mode):
            self.skip(rel, "not a regular file")
            return None
        if info.st_size > MAX_FILE_BYTES:
            self.skip(rel, f"larger than {MAX_FILE_BYTES // 1_000_000} MB")
            return None
        return ConsumerFile(self, rel, info.st_size)

    def _gitignore(self, file: ConsumerFile | None, rel_dir: str) -> list[tuple[str, Ignore]]:
        """A folder's `.gitignore`, read through its index entry (read once)."""
        if file is None or file.text is None:
            return []
        return [(rel_dir, Ignore(file.text.splitlines()))]

    def _ignored(self, rel: str, ignores: list[tuple[str, Ignore]]) -> bool:
        if self.exclude and self._excluded.match(rel):
            return True
        for base, spec in ignores:
            inner = rel[len(base) + 1 :] if base else rel
            if spec.match(inner):
                return True
        return False


def _read_regular(path: Path) -> bytes:
    """The file's bytes; never blocks on a FIFO put in place of a file after the walk."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        with os.fdopen(handle, "rb", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(handle)


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno == errno.ENOENT:
        return "dangling symbolic link or deleted during the run"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


def module_name(root: Path, path: Path) -> str:
    """Dotted module name of a consumer file (a `src/` layout is looked through)."""
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
