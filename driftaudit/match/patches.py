"""Do the consumer's sglang patches still apply to the new tree?

Hunks are placed the way `git apply` places them, so that the verdict agrees with
`git apply --check`: every line of a hunk's pre-image (context and removed lines)
must match exactly, no fuzz, no context reduction; the hunk may move (an offset),
searched from its expected line outwards (nearest first, below before above); a hunk
starting at line 1 (or 0) must match at the beginning of the file, a hunk without
trailing context at its end. Hunks of a file apply in order on the image the earlier
ones left; a hunk that fails is skipped and the next ones still tried (as
`git apply --reject` does), so each failing hunk is reported, not only the first.

Only drift is reported: a patch that does not apply to the old tree either was not
written for that release (a fork, another version) and is left alone.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from driftaudit import codes
from driftaudit.drift import Differ
from driftaudit.findings import Finding, Fix
from driftaudit.snapshot import Snapshot
from driftaudit.usage.patch_files import (
    ConsumerPatches,
    FilePatch,
    Hunk,
    PatchFile,
    SourceAnchor,
    pinned_commit,
    unpinned_name,
)

FILE_MISSING = "file missing"
FILE_EXISTS = "the new release already has this file, with other content"
CONTEXT_NOT_FOUND = "context not found"
ALREADY_APPLIED = "already applied (the new release has the change)"


@dataclass
class HunkResult:
    hunk: Hunk
    at: int | None  # 1-based line of the tree file where it applies; None: it does not
    reason: str = ""  # why it does not apply
    detail: str = ""  # the closest place and the first line that differs there
    near: int | None = None  # 1-based line of that closest place
    line: int | None = None  # where it applies in the unpatched file (`at` counts the
    # lines that earlier hunks added or removed, as git's report does)

    @property
    def applies(self) -> bool:
        return self.at is not None


def read_lines(path: Path) -> list[str] | None:
    """The lines of a file as `git apply` compares them (exact bytes, no line end)."""
    if not path.is_file():
        return None
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def check_file(patch: FilePatch, root: Path) -> list[HunkResult]:
    """Each hunk of `patch` placed on `root / patch.path`, in order."""
    lines = read_lines(root / patch.path)
    if patch.added:
        if lines is None:
            return [HunkResult(h, 1, line=1) for h in patch.hunks]
        reason = ALREADY_APPLIED if _postimage(patch) == lines else FILE_EXISTS
        return [HunkResult(h, None, reason) for h in patch.hunks]
    if lines is None:
        reason = ALREADY_APPLIED if patch.removed else FILE_MISSING  # deleted upstream too
        return [HunkResult(h, None, reason) for h in patch.hunks]
    results = []
    shifts: list[tuple[int, int]] = []  # (where, lines added) of the hunks applied
    for hunk in patch.hunks:
        at = place(hunk, lines)
        if at is None:
            result = _why_not(hunk, lines)
            if result.near:  # in the unpatched file too
                result.near -= sum(added for where, added in shifts if where < result.near)
            results.append(result)
            continue
        lines[at : at + len(hunk.before)] = hunk.after
        unpatched = at + 1 - sum(added for where, added in shifts if where <= at)
        shifts.append((at, len(hunk.after) - len(hunk.before)))
        results.append(HunkResult(hunk, at + 1, line=unpatched))
    return results


def _postimage(patch: FilePatch) -> list[str]:
    return [line for hunk in patch.hunks for line in hunk.after]


def place(hunk: Hunk, lines: list[str]) -> int | None:
    """Where `git apply` puts the hunk's pre-image (0-based), or None."""
    before = hunk.before
    at_start = hunk.old_start <= 1
    at_end = hunk.trailing == 0
    if at_start:
        start = 0
    elif at_end:
        start = len(lines) - len(before)
    else:
        start = hunk.new_start - 1 if hunk.new_start else 0
    start = min(max(start, 0), len(lines))
    for at in _outwards(start, len(lines)):
        if at_start and at != 0:
            continue
        if at_end and at + len(before) != len(lines):
            continue
        if before and (at >= len(lines) or lines[at] != before[0]):
            continue  # cheap test first: most places differ at once
        if lines[at : at + len(before)] == before:
            return at
    return None


def _outwards(start: int, last: int):
    """start, start+1, start-1, start+2, ... within [0, last], as git's find_pos."""
    yield start
    below, above = start, start
    while below < last or above > 0:
        if below < last:
            below += 1
            yield below
        if above > 0:
            above -= 1
            yield above


def _why_not(hunk: Hunk, lines: list[str]) -> HunkResult:
    after, before = hunk.after, hunk.before
    if after and any(votes == len(after) for votes in _aligned(after, lines).values()):
        return HunkResult(hunk, None, ALREADY_APPLIED)
    votes = _aligned(before, lines)
    elsewhere = sorted(at + 1 for at, count in votes.items() if count == len(before))
    if elsewhere:  # found, but a hunk at the start or the end of a file may not move
        edge = "start" if hunk.old_start <= 1 else "end"
        detail = (
            f"its lines are at line {elsewhere[0]}, but a hunk at the {edge} of the file "
            f"must match at the {edge} of the file"
        )
        return HunkResult(hunk, None, CONTEXT_NOT_FOUND, detail, elsewhere[0])
    if not votes:
        return HunkResult(hunk, None, CONTEXT_NOT_FOUND, "none of its lines is in the file")
    best_at = min(votes, key=lambda at: (-votes[at], at))
    window = lines[best_at : best_at + len(before)]
    index = next(i for i, expected in enumerate(before) if window[i] != expected)
    detail = (
        f"closest at line {best_at + 1}: line {best_at + index + 1} is {_show(window[index])}, "
        f"the hunk expects {_show(before[index])}"
    )
    return HunkResult(hunk, None, CONTEXT_NOT_FOUND, detail, best_at + 1)


def _aligned(pattern: list[str], lines: list[str]) -> dict[int, int]:
    """For each start in the file where the pattern fits, how many of its lines match there
    (one pass over the file, instead of comparing a window at every line)."""
    wanted: dict[str, list[int]] = {}
    for index, line in enumerate(pattern):
        wanted.setdefault(line, []).append(index)
    last = len(lines) - len(pattern)
    votes: dict[int, int] = {}
    for position, line in enumerate(lines):
        for index in wanted.get(line, ()):
            at = position - index
            if 0 <= at <= last:
                votes[at] = votes.get(at, 0) + 1
    return votes


def _show(line: str) -> str:
    text = line.strip()
    return f"`{text[:60]}{'...' if len(text) > 60 else ''}`" if text else "a blank line"


def module_of(path: str) -> str:
    name = path[: -len(".py")] if path.endswith(".py") else path
    name = name.replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


# ---- findings ---------------------------------------------------------------------


def patch_findings(patches: ConsumerPatches, differ: Differ) -> list[Finding]:
    old_root, new_root = differ.old.tree.root, differ.new.tree.root
    findings = [
        Finding(codes.PARSE_ERROR, f.path, f.line, f.column, "", f"does not parse: {f.message}")
        for f in patches.failures
    ]
    new_release = _release(differ.new.tree.version)
    on_old = {patch.path: [check_file(file, old_root) for file in patch.files]
              for patch in patches.patches}  # fmt: skip
    # `git apply` takes all or nothing: a patch that fails on the old release is not for it
    fits_old = {
        path: all(result.applies for results in found for result in results)
        for path, found in on_old.items()
    }
    for patch in patches.patches:
        if not fits_old[patch.path]:
            continue
        on_new = [check_file(file, new_root) for file in patch.files]
        pinned = patch.pinned
        if pinned is not None and new_release is not None and pinned != new_release:
            findings += _pinned_finding(patch, pinned, on_new, patches, differ)
            continue  # filed under another release: it never meets the new one
        for file, old, new in zip(patch.files, on_old[patch.path], on_new, strict=True):
            findings += _file_findings(patch.path, file, old, new)
    for anchor in patches.anchors:
        finding = _anchor_finding(anchor, differ.old, differ.new)
        if finding is not None:
            findings.append(finding)
    return findings


def _release(version: str | None) -> Version | None:
    try:
        return Version(version) if version else None
    except InvalidVersion:
        return None


def _pinned_finding(
    patch: PatchFile,
    pinned: Version,
    on_new: list[list[HunkResult]],
    patches: ConsumerPatches,
    differ: Differ,
) -> list[Finding]:
    """At most one warning for a patch its path pins to another release.

    The consumer picks such a patch by release (`COPY patch/${SGLANG_VERSION}/...`), so its
    hunks are not errors against the new release; but the upgrade needs its counterpart
    (a to-do, not a break). Said once, as a warning, only when the patch
    is the old release's, some hunk fails on the new one, and no patch of the same name
    will meet the new release: one filed under the new release, or one whose path names
    no release and no commit (`latest/`: checked hunk by hunk on its own).
    """
    if pinned != _release(differ.old.tree.version):
        return []  # a patch of some other release the consumer keeps: none of our business
    failing = sum(not result.applies for results in on_new for result in results)
    if not failing:
        return []
    name = unpinned_name(patch.path)
    new_release = _release(differ.new.tree.version)
    for other in patches.patches:
        if other is not patch and unpinned_name(other.path) == name:
            if other.pinned == new_release or (
                other.pinned is None and pinned_commit(other.path) is None
            ):
                return []  # the new release has its own patch (`latest/`), checked on its own
    total = sum(len(results) for results in on_new)
    details = "\n".join(
        f"{file.written}: `{result.hunk.header}` (line {result.hunk.line}): {result.reason}"
        for file, results in zip(patch.files, on_new, strict=True)
        for result in results
        if not result.applies
    )
    message = (
        f"this patch is filed under sglang {pinned} (its path names the release) and has "
        f"no counterpart for {new_release} yet; as it is, {failing} of its {total} hunks "
        f"no longer apply"
    )
    fix = Fix(f"Add a patch for {new_release}, regenerated against it.")
    first = patch.files[0]
    return [
        Finding(codes.PATCH_HUNK_FAILS, patch.path, first.line, 1, module_of(first.path),
                message, None, None, fix, severity="warning", details=details)
    ]  # fmt: skip


def _file_findings(
    where: str, file: FilePatch, old: list[HunkResult], new: list[HunkResult]
) -> list[Finding]:
    symbol = module_of(file.path)
    drifted = [(o, n) for o, n in zip(old, new, strict=True) if o.applies and not n.applies]
    if not drifted:
        return []
    if drifted[0][1].reason == FILE_MISSING:
        message = f"patches `{file.written}`, which the new release no longer has"
        fix = Fix("Port the patch to the module that replaced it, or drop it.")
        return [
            Finding(codes.PATCH_FILE_MISSING, where, file.line, 1, symbol, message,
                    f"{file.path}:{drifted[0][0].line}", None, fix)
        ]  # fmt: skip
    findings = []
    for before, after in drifted:
        hunk = after.hunk
        message = f"hunk `{hunk.header}` of `{file.written}` no longer applies: {after.reason}"
        if after.detail:
            message += f" ({after.detail})"
        fix = Fix(
            "Drop the hunk: the new release already contains the change."
            if after.reason == ALREADY_APPLIED
            else "Rebase the hunk on the new release (regenerate the patch against it)."
        )
        findings.append(
            Finding(
                codes.PATCH_HUNK_FAILS,
                where,
                hunk.line,
                1,
                symbol,
                message,
                None if file.added else f"{file.path}:{before.line}",
                f"{file.path}:{after.near}" if after.near else None,
                fix,
            )
        )
    return findings


# ---- runtime anchors ----------------------------------------------------------------


def _anchor_finding(anchor: SourceAnchor, old: Snapshot, new: Snapshot) -> Finding | None:
    old_source = getsource_of(old, anchor.symbol)
    new_source = getsource_of(new, anchor.symbol)
    if old_source is None or new_source is None:
        return None  # a name that is gone is reported where it is referenced (DA103, DA301)
    before, old_at = _count(anchor.anchor, old_source[0]), old_source[1]
    after, new_at = _count(anchor.anchor, new_source[0]), new_source[1]
    shown = _show(anchor.anchor.strip().splitlines()[0] if anchor.anchor.strip() else "")
    name = anchor.symbol.rpartition(".")[2]
    if before >= 1 and after == 0:
        code = codes.SOURCE_ANCHOR_MISSING
        message = (
            f"the source of `{name}` no longer contains {shown}: "
            + ("the replacement silently does nothing" if anchor.how == "replace" else
               "the check now fails")
        )  # fmt: skip
    elif before == 1 and after > 1:
        code = codes.SOURCE_ANCHOR_AMBIGUOUS
        message = (
            f"{shown} now occurs {after} times in the source of `{name}` (once before): "
            + ("`.replace` rewrites every one" if anchor.how == "replace" else
               "the check no longer pins the place")
        )  # fmt: skip
    else:
        return None
    fix = Fix("Re-anchor the patch on the new source of the function (or patch it another way).")
    return Finding(
        code, anchor.path, anchor.line, anchor.column, anchor.symbol, message, old_at, new_at, fix
    )


def _count(anchor: str, source: str) -> int:
    """Occurrences in the source as `getsource` gives it, or dedented."""
    return max(source.count(anchor), textwrap.dedent(source).count(anchor))


def getsource_of(snapshot: Snapshot, symbol: str) -> tuple[str, str] | None:
    """What `inspect.getsource` returns for an sglang callable, and its file:line."""
    found = snapshot.resolve(symbol)
    if found is None or found.module is None or found.opaque:
        return None
    module = found.module
    if not found.canonical.startswith(module.name + "."):
        return None
    path = snapshot.tree.root / module.file
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    node = _definition(tree, found.canonical[len(module.name) + 1 :].split("."))
    if node is None:
        return None
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = text.splitlines(keepends=True)[start - 1 : node.end_lineno]
    return "".join(lines), f"{module.file}:{start}"


def _definition(tree: ast.Module, qualname: list[str]):
    scope, node = tree.body, None
    for part in qualname:
        node = None
        for child in scope:  # the last definition wins, as at run time
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if child.name == part:
                    node = child
        if node is None:
            return None
        scope = node.body
    return node
