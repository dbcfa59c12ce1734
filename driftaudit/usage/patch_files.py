"""Source patches a consumer carries against sglang.

Two kinds: unified diffs (`*.patch`, `*.diff`) whose files lie under `sglang/` or
`python/sglang/`, applied to the installed tree at build time; and runtime patches
that take `inspect.getsource(<sglang function>)`, `.replace()` an anchor string in it
(or assert `anchor in src`) and `exec` the result. Both break silently when sglang
rewrites the code around them, so the anchors and hunks are recorded here, with
their positions, and checked against the new tree in `match/patches.py`.

Diffs are parsed with `unidiff` (maintained, keeps each line's number in the patch
and in both images); the consumer's imports are resolved by the usage visitor.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from driftaudit.usage.exports import ConsumerExports, dotted
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.usages import ParseFailure, Usage
from driftaudit.usage.visitor import UsageVisitor

PATCH_SUFFIXES = (".patch", ".diff")


@dataclass
class Hunk:
    """One `@@ -a,b +c,d @@` block: what it expects (`before`) and what it writes."""

    header: str  # the `@@ ... @@` line as written
    line: int  # of the header, in the patch file (1-based)
    old_start: int
    old_length: int
    new_start: int
    new_length: int
    before: list[str]  # context and removed lines, without their newline
    after: list[str]  # context and added lines
    leading: int  # context lines before the first change
    trailing: int  # context lines after the last change


@dataclass
class FilePatch:
    """The hunks of one file of a diff, with the file named as the sglang tree has it."""

    path: str  # sglang/srt/x.py (a `python/` prefix removed)
    written: str  # the path as the patch writes it: python/sglang/srt/x.py
    line: int  # of its `---` (or `diff --git`) header in the patch file
    added: bool = False  # `--- /dev/null`: the patch creates it
    removed: bool = False  # `+++ /dev/null`: the patch deletes it
    hunks: list[Hunk] = field(default_factory=list)


@dataclass
class PatchFile:
    path: str  # relative to the consumer root
    files: list[FilePatch] = field(default_factory=list)  # only files of sglang

    @property
    def pinned(self) -> Version | None:
        """The sglang release the patch's path names, if any (see `pinned_release`)."""
        return pinned_release(self.path)


# A release in a path component: `v0.5.2-cu129`, `sglv0.5.0rc0`, `sglang-0.5.3.post1.patch`.
# Three numbers at least, so that `py3.10` or `cu12.4` are not read as releases.
_RELEASE = re.compile(
    r"(?:^|[-_.+]|sgl(?:ang)?)v?(\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?)(?=$|[-_.+])"
)


def pinned_release(path: str) -> Version | None:
    """The sglang release a patch is filed under, by its directory or file name.

    Consumers that keep one patch per release (`patch/v0.5.2-cu129/sglang.patch`,
    `sglang-0.5.2.patch`) pick the one of the release they build; such a patch never
    meets another release. The innermost component naming a release wins; None for an
    unversioned path (`patch/latest/sglang.patch`), which is applied to every release.
    """
    for part in reversed(path.split("/")):
        for match in _RELEASE.finditer(part):
            try:
                return Version(match.group(1))
            except InvalidVersion:
                continue
    return None


# A commit in a path component: `kimi-k3-f8493a4/` (hex, 7 to 40 characters, a digit and a
# letter among them, so that words such as `decade` or numbers are not read as commits).
_COMMIT = re.compile(r"(?:^|[-_.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])([0-9a-f]{7,40})(?=$|[-_.])")


def pinned_commit(path: str) -> str | None:
    """The sglang commit (a fork's build) a patch's directory or file name names, if any:
    such a patch, like one filed under a release, is not the one every release gets."""
    for part in reversed(path.split("/")):
        match = _COMMIT.search(part)
        if match:
            return match.group(1)
    return None


def unpinned_name(path: str) -> str:
    """A patch's file name without the release it names: `sglang-v0.5.2.patch` and
    `v0.5.2/sglang.patch` are both `sglang.patch`, the patch one release replaces."""
    return _RELEASE.sub("", path.rpartition("/")[2])


@dataclass
class SourceAnchor(Usage):
    """A string a runtime patch expects in `inspect.getsource(symbol)`.

    `symbol` is the sglang callable; the place is the string literal's.
    """

    anchor: str = ""
    how: str = "replace"  # replace | in (a membership test or assertion)


@dataclass
class ConsumerPatches:
    patches: list[PatchFile] = field(default_factory=list)
    anchors: list[SourceAnchor] = field(default_factory=list)
    failures: list[ParseFailure] = field(default_factory=list)


def sglang_path(written: str) -> str | None:
    """The file in an sglang tree that a patch path names, or None.

    `sglang/srt/x.py` (the package), `python/sglang/srt/x.py` (the repository), also
    below a folder (`sglang/python/sglang/...`, `.../site-packages/sglang/...`).
    """
    parts = written.split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == "sglang" and (index == 0 or parts[index - 1] in _PACKAGE_PARENTS):
            inside = parts[index:]
            if any(part in ("", ".", "..") or "\0" in part for part in inside):
                return None  # `sglang/../../etc/passwd` names no file of the tree
            return "/".join(inside)
    return None


_PACKAGE_PARENTS = {"python", "site-packages", "dist-packages"}


def read_patch(rel: str, text: str) -> PatchFile | ParseFailure | None:
    """The sglang part of one diff; None when it touches no sglang file."""
    if "sglang/" not in text:
        return None
    from unidiff import PatchSet  # only when a diff touches sglang
    from unidiff.errors import UnidiffParseError

    try:
        parsed = PatchSet(text)
    except (UnidiffParseError, ValueError) as exc:
        line = _broken_hunk(text)
        where = f" (the hunk at line {line} does not match its header)" if line else ""
        return ParseFailure(rel, line or 1, 1, f"not a unified diff: {exc}{where}")
    result = PatchFile(rel)
    lines = text.split("\n")
    for patched in parsed:
        named = patched.target_file if patched.is_added_file else patched.source_file
        written = _strip_prefix(named)
        tree_path = sglang_path(written)
        if tree_path is None:
            continue
        hunks = [_hunk(h, lines) for h in patched]
        first = hunks[0].line if hunks else 1
        header = max(1, first - 2)  # the `---` line sits two lines above the first `@@`
        result.files.append(
            FilePatch(
                tree_path,
                written,
                header,
                added=patched.is_added_file,
                removed=patched.is_removed_file,
                hunks=hunks,
            )
        )
    return result if result.files else None


_HUNK_HEADER = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _broken_hunk(text: str) -> int | None:
    """The line of the first hunk whose body does not have the lengths its header gives
    (unidiff's error says what, not where)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # no line after the final newline
    for index, line in enumerate(lines):
        header = _HUNK_HEADER.match(line)
        if not header:
            continue
        old = int(header.group(1) or 1)
        new = int(header.group(2) or 1)
        for body in lines[index + 1 :]:
            if old <= 0 and new <= 0:
                break
            if body.startswith("\\"):
                continue
            kind = body[:1]
            if kind not in (" ", "", "-", "+"):
                break
            old -= kind != "+"
            new -= kind != "-"
        if old != 0 or new != 0:
            return index + 1
    return None


def _strip_prefix(name: str) -> str:
    for prefix in ("a/", "b/"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _hunk(hunk, lines: list[str]) -> Hunk:
    before, after = [], []
    leading = trailing = 0
    changed = False
    for line in hunk:
        text = line.value[:-1] if line.value.endswith("\n") else line.value
        if line.is_context:
            before.append(text)
            after.append(text)
            leading += not changed
            trailing += 1
        elif line.is_removed:
            before.append(text)
            changed, trailing = True, 0
        elif line.is_added:
            after.append(text)
            changed, trailing = True, 0
    first = next((line.diff_line_no for line in hunk), None)
    header_line = (first - 1) if first else 1
    header = lines[header_line - 1].rstrip("\r")
    return Hunk(
        header,
        header_line,
        hunk.source_start,
        hunk.source_length,
        hunk.target_start,
        hunk.target_length,
        before,
        after,
        leading,
        trailing,
    )


# ---- runtime patches: inspect.getsource + replace ------------------------------------


class _GetsourceVisitor(UsageVisitor):
    """The usage visitor, noting what each `getsource(x)` call names (its scopes resolve
    `x` exactly as every other usage is resolved)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.sources: dict[int, str] = {}  # id of the getsource call -> sglang path

    def visit_Call(self, node: ast.Call) -> None:
        if (dotted(node.func) or "").rpartition(".")[2] == "getsource" and node.args:
            symbol = self.resolve_expr(node.args[0])
            if symbol is not None:
                self.sources[id(node)] = symbol
        super().visit_Call(node)


def find_anchors(relpath: str, module: str, is_package: bool, tree: ast.Module):
    """The anchors of one file: strings replaced in, or tested against, sglang source."""
    visitor = _GetsourceVisitor(relpath, module, is_package, ConsumerExports())
    visitor.run(tree)
    if not visitor.sources:
        return []
    anchors: list[SourceAnchor] = []
    for scope in _scopes(tree):
        anchors += _ScopeAnchors(relpath, visitor.sources).run(scope)
    return anchors


def _scopes(tree: ast.Module):
    """The module and each function: a variable holding source lives in one of them."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


class _ScopeAnchors:
    """Follows `src = getsource(f)` (through `dedent`, `.replace` chains and
    reassignment) in one scope, in source order, and collects the anchors."""

    def __init__(self, relpath: str, sources: dict[int, str]):
        self.relpath = relpath
        self.sources = sources
        self.names: dict[str, str] = {}  # variable -> sglang callable its source came from
        self.found: list[SourceAnchor] = []

    def run(self, scope) -> list[SourceAnchor]:
        for node in _own_nodes(scope):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                symbol = self.source_of(node.value)
                if isinstance(target, ast.Name):
                    if symbol is not None:
                        self.names[target.id] = symbol
                    else:
                        self.names.pop(target.id, None)
            self._anchor(node)
        return self.found

    def source_of(self, node: ast.expr) -> str | None:
        """The sglang callable whose source this expression holds."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Call):
            if id(node) in self.sources:
                return self.sources[id(node)]
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("replace", "strip", "lstrip"):
                return self.source_of(func.value)
            if (dotted(func) or "").rpartition(".")[2] == "dedent" and node.args:
                return self.source_of(node.args[0])
        return None

    def _anchor(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "replace" and node.args:
                symbol = self.source_of(node.func.value)
                self._add(symbol, node.args[0], "replace")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.In, ast.NotIn)):
                self._add(self.source_of(node.comparators[0]), node.left, "in")

    def _add(self, symbol: str | None, literal: ast.expr, how: str) -> None:
        if symbol is None or not isinstance(literal, ast.Constant):
            return
        if not isinstance(literal.value, str) or not literal.value:
            return
        self.found.append(
            SourceAnchor(
                self.relpath,
                literal.lineno,
                literal.col_offset + 1,
                symbol,
                anchor=literal.value,
                how=how,
            )
        )


def _own_nodes(scope):
    """The nodes of a scope in source order, without those of nested functions."""
    body = scope.body
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if isinstance(node, ast.ClassDef):
                stack.extend(reversed(node.body))
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def collect_patches(files: ConsumerFiles) -> ConsumerPatches:
    """Diffs against sglang and `getsource` anchors, from the consumer's file index."""
    result = ConsumerPatches()
    for file in files:
        if not file.rel.endswith(PATCH_SUFFIXES) or file.text is None:
            continue
        found = read_patch(file.rel, file.text)
        if isinstance(found, ParseFailure):
            result.failures.append(found)
        elif found is not None:
            result.patches.append(found)
    for file in files.python():
        text = file.text
        if text is None or "getsource" not in text or "sglang" not in text:
            continue
        result.anchors += file.derived("anchors", lambda file=file: _anchors(file), list)
    return result


def _anchors(file) -> list:
    tree = file.tree
    if tree is None:
        return []  # reported as DA001 by the usage collector
    return find_anchors(file.rel, file.module, file.is_package, tree)
