"""The consumer's files: walked once, each read and decoded once, each Python file parsed
once, shared by usage collection, the surface scanners, rule-pack text patterns and the
fixer.

What is walked: every regular file below the root, outside the `--exclude`/config globs
and what the consumer's `.gitignore` files ignore (both with gitignore semantics, via
`pathspec`: `tests/` and `tests/**` cover nested files). Hidden folders (`.git`, `.venv`,
`.tox`), `__pycache__` and `node_modules` are never walked. Other folders are known by
what they hold, never by their name (a consumer package may be called `env` or `build`),
and left out with a note in `skipped`: a virtualenv (`pyvenv.cfg`), a conda environment
(`conda-meta/`), installed packages (a `*.dist-info` folder: site-packages, a `pip install
--target` folder), setuptools' build output (only `lib*/`, `bdist.*/`, `temp.*/`,
`scripts-*/` folders) and built distributions (only wheels and sdists). Folder symlinks
are not followed; a file symlink is read only when it points inside the tree. What is
left out on the way (a dangling or looping symlink, a FIFO or device, a file over
`MAX_FILE_BYTES`, one that cannot be read or vanished during the run) is listed in
`skipped`; a Python file or notebook among them cannot be audited and is a parse failure
(DA001).

Jupyter notebooks (`*.ipynb`) are Python files here: their text is the code of their code
cells and their tree the cells' (`usage.notebooks`); `to_file_positions` moves what is
found in them to where the code stands in the `.ipynb` file, and drops the edits: the
fixer never rewrites a notebook, `fix` lists its findings for a human.
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
from typing import TYPE_CHECKING, TypeVar

import pathspec

from driftaudit.pysource import ParseProblem, decode_python, decode_text, parse_module, problem
from driftaudit.usage.notebooks import Notebook, read_notebook

if TYPE_CHECKING:
    from driftaudit.findings import Finding
    from driftaudit.usage.file_cache import FileCache

SKIP_DIRS = {"__pycache__", "node_modules"}  # and every hidden folder
T = TypeVar("T")
MAX_FILE_BYTES = 4_000_000  # larger files are data (or generated), not read
MAX_NOTEBOOK_BYTES = 32_000_000  # a notebook keeps its outputs (images): its code is small
NOTEBOOK_SUFFIX = ".ipynb"
_BUILD_FOLDER = re.compile(r"lib|lib\..+|bdist\..+|temp\..+|scripts-.+")
_DISTRIBUTION = (".whl", ".tar.gz", ".zip", ".egg", ".tar.bz2", ".tar.xz")


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
        self.is_notebook = rel.endswith(NOTEBOOK_SUFFIX)
        self.is_python = rel.endswith(".py") or self.is_notebook
        self.notebook: Notebook | None = None  # a notebook's code, once read
        self.encoding = "utf-8"  # how to write it back (the fixer)
        self.newline = "\n"
        self.raw: str | None = None  # Python files: the text with the file's own line ends
        self.digest: str | None = None  # and the sha256 of the bytes read
        self._text: str | None = None
        self._data: bytes | None = None  # the bytes `ConsumerFiles.fingerprint` read
        self._tree: ast.Module | None = None
        self._lines: list[str] | None = None
        self._read = self._parsed = False

    @property
    def module(self) -> str:
        name = module_name(self._files.root, self.path)
        return f"{name}:ipynb" if self.is_notebook else name  # imported by no module

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
        if self.is_notebook:
            return self._load_notebook(data)
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

    def _load_notebook(self, data: bytes) -> str | None:
        decoded = decode_text(data)
        found = (
            read_notebook(decoded.text)
            if decoded is not None
            else ParseProblem(1, 1, "not a notebook: not UTF-8")
        )
        if isinstance(found, ParseProblem):
            self._files.fail(self, found)
            return None
        if isinstance(found, str):  # another language
            self._files.skipped.append(Skipped(self.rel, found))
            return None
        self.notebook = found
        return found.code

    def lines(self) -> list[str]:
        """The file's lines as they stand in it (a notebook's JSON, not its code), for
        the reports' snippets, regions and fingerprints; read once, [] when unreadable."""
        if self._lines is None:
            self.text  # noqa: B018 - a Python file's raw text comes with its first read
            if self.raw is not None:
                self._lines = self.raw.splitlines()
            elif self._text is not None and self.notebook is None:
                self._lines = self._text.splitlines()
            else:  # a notebook, or a file that did not decode as source
                try:
                    data = _read_regular(self.path)
                except OSError:
                    data = b""
                self._lines = data.decode("utf-8", errors="replace").splitlines()
        return self._lines

    def place(self, line: int, column: int) -> tuple[int, int]:
        """Where (line, column) of `text` is in the file: itself, but in a notebook."""
        if self.notebook is None:
            return line, column
        return self.notebook.place(line, column)

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
            if self.notebook is not None:
                self._tree, found = self.notebook.parse(self.rel)
                if found is not None:
                    self._files.fail(self, found)
            elif text is not None:
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


# What reading a file sets (`ConsumerFile._load`): a copy of the index shares it
_READ_STATE = ("_read", "_text", "_data", "encoding", "newline", "raw", "digest", "notebook")


class ConsumerFiles:
    """The index of one consumer tree (see the module docstring)."""

    def __init__(self, root: Path, exclude: list[str] | None = None):
        self.root = Path(root)
        self.exclude = list(exclude or [])
        self.skipped: list[Skipped] = []
        self.failures: dict[str, ParseProblem] = {}  # Python files that could not be read
        self.cache: FileCache | None = None  # per-file results by content
        self._excluded = Ignore(self.exclude)
        self.files: list[ConsumerFile] = list(self._walk())
        self.by_rel = {f.rel: f for f in self.files}

    def __iter__(self) -> Iterator[ConsumerFile]:
        return iter(self.files)

    def python(self) -> list[ConsumerFile]:
        return [f for f in self.files if f.is_python]

    def get(self, rel: str) -> ConsumerFile | None:
        return self.by_rel.get(rel)

    def line(self, rel: str, number: int) -> str:
        """Line `number` (1-based) of the file at `rel` as it stands; '' when the index
        holds no such file (a path from a baseline entry is the consumer's word) or line."""
        file = self.by_rel.get(rel)
        lines = file.lines() if file is not None else []
        return lines[number - 1] if 0 < number <= len(lines) else ""

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

    def with_bytes(self, contents: dict[str, bytes]) -> ConsumerFiles:
        """This index with the files of `contents` (rel -> bytes) read as those bytes, and
        every other file as this index read it (not from disk again: a file edited since
        is still the one audited): the fixer's re-audit of its output, before (or
        without) writing it."""
        files = object.__new__(ConsumerFiles)
        files.root, files.exclude, files._excluded = self.root, self.exclude, self._excluded
        files.skipped, files.cache = list(self.skipped), None
        files.failures = {rel: p for rel, p in self.failures.items() if rel not in contents}
        files.files = []
        for file in self.files:
            copy = ConsumerFile(files, file.rel, file.size)
            if file.rel in contents:
                copy._data = contents[file.rel]
                copy.size = len(copy._data)
            else:
                for name in _READ_STATE:
                    setattr(copy, name, getattr(file, name))
            files.files.append(copy)
        files.by_rel = {f.rel: f for f in files.files}
        return files

    def release_trees(self) -> None:
        """Drop the parsed trees once every scanner has read them: millions of nodes kept
        alive make every later garbage collection (and the exit) slower."""
        for file in self.files:
            file._tree, file._parsed = None, False

    def skip(self, file: ConsumerFile | str, reason: str) -> None:
        rel = file if isinstance(file, str) else file.rel
        self.skipped.append(Skipped(rel, reason))
        if rel.endswith((".py", NOTEBOOK_SUFFIX)):
            self.failures.setdefault(rel, ParseProblem(1, 1, f"not read: {reason}"))

    def fail(self, file: ConsumerFile, found: ParseProblem | BaseException) -> None:
        """A Python file that could not be analysed (first reason kept)."""
        if isinstance(found, BaseException):
            found = problem(found)
        self.failures.setdefault(file.rel, found)

    def to_file_positions(self, findings: list[Finding]) -> None:
        """Findings in notebooks: moved from the line and column of their code to the
        place in the `.ipynb` file where that code stands, and left without an edit (the
        fixer does not rewrite notebooks; the fix's description stays)."""
        for finding in findings:
            file = self.by_rel.get(finding.path)
            if file is None or file.notebook is None:
                continue
            finding.line, finding.column = file.place(finding.line, finding.column)
            end_line, end_column = finding.end_line or finding.line, finding.end_column
            finding.end_line, finding.end_column = file.place(end_line, end_column or 1)
            if finding.anchor is not None:
                finding.anchor = file.place(*finding.anchor)
            if finding.fix is not None:
                finding.fix.edit = None
                finding.fix.covered_by = None

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
            kind = _not_source(entries) if rel_dir else None  # the root: the user's word
            if kind is not None:
                self.skipped.append(Skipped(rel_dir + "/", kind))
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
        limit = MAX_NOTEBOOK_BYTES if rel.endswith(NOTEBOOK_SUFFIX) else MAX_FILE_BYTES
        if info.st_size > limit:
            self.skip(rel, f"larger than {limit // 1_000_000} MB")
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


def _not_source(entries: list[os.DirEntry]) -> str | None:
    """What a folder is when it holds no consumer source (see the module docstring),
    judged by its entries; None for any other folder."""
    folders: list[str] = []
    files: list[str] = []
    for entry in entries:
        if entry.name.startswith("."):  # a .gitignore, a .DS_Store: says nothing
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        (folders if is_dir else files).append(entry.name)
    if "pyvenv.cfg" in files:
        return "a virtualenv: it holds pyvenv.cfg"
    if "conda-meta" in folders:
        return "a conda environment: it holds conda-meta/"
    installed = next((name for name in folders if name.endswith(".dist-info")), None)
    if installed is not None:
        return f"installed packages: it holds {installed}/"
    if folders and not files and all(_BUILD_FOLDER.fullmatch(name) for name in folders):
        return "setuptools build output: only lib/, bdist.*/, temp.*/ folders"
    if files and not folders and all(name.endswith(_DISTRIBUTION) for name in files):
        return "built distributions: only wheels and sdists"
    return None


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
