"""Guarded code: drop or lower a finding the consumer already handles.

A usage carries the guards around it (`usage/consumer_guards.py`); a finding at its place is

- dropped when the code cannot run on the new release (a version branch for other
  releases, a `hasattr(mod, "x")` branch for the release that has, or lacks, `mod.x`
  when the two releases differ on it; after an early exit alike), when a
  `hasattr`/`getattr(..., default)` test or a `try/except AttributeError` covers the
  missing name, when it reads `obj.x` after the consumer set
  `obj.x` itself (the assignment is reported; a pack entry on the read, with its
  rewrite, still is), or when it is an import in an `except ImportError` fallback whose
  `try` imports resolve in the new release (not merely "unchanged": an import that fails
  on both releases leaves the fallback running), or when it is an import inside such a
  `try` whose fallback binds the same name from a module the new release has, and every
  call of that name in the file binds to the fallback's new signature (the consumer
  wrote the fallback for this release);
- lowered to info when such a fallback exists but a call of the name does not fit it
  (the message names the fallback);
- dropped, for a change of behaviour since the old release (a default, a type, what a
  call reaches), when the usage sits on a branch the old release never takes and the
  new one does: written for the new release, it is judged against it alone.

The matcher applies it to its findings, the pipeline to the behaviour checks' (DA70x).
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import InvalidVersion, Version

from driftaudit.drift import Differ
from driftaudit.drift.differ import callable_signature
from driftaudit.findings import Finding
from driftaudit.match.calls import bind, call_params
from driftaudit.usage import CallUsage, ImportUsage, UsageSet

TRY_NOTE = " (inside try/except ImportError: the except branch runs instead)"
_MISSING = {"DA101", "DA102", "DA103", "DA104", "DA301", "DA302"}  # a name is absent
# only a handler of the error itself: `except Exception` around a whole worker is error
# handling (log, re-raise), not a fallback for a missing name
_ATTRIBUTE = {"AttributeError"}
_IMPORT = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
# a difference from the old release's behaviour, not a failure on the new one: nothing to
# code that never ran on the old release
_SINCE_OLD = {"DA205", "DA206", "DA402", "DA403", "DA701", "DA702", "DA902"}
_COMPARE = {
    "<": Version.__lt__,
    "<=": Version.__le__,
    ">": Version.__gt__,
    ">=": Version.__ge__,
    "==": Version.__eq__,
    "!=": Version.__ne__,
}


def apply_guards(findings: list[Finding], usages: UsageSet, differ: Differ) -> list[Finding]:
    places: dict[tuple, list] = {}
    for usage in usages.usages:
        if usage.guards or isinstance(usage, ImportUsage):
            places.setdefault((usage.path, usage.line, usage.column), []).append(usage)
    fallbacks = _fallback_imports(usages, differ)
    version = _version(differ.new.tree.version)
    old_version = _version(differ.old.tree.version)
    kept = []
    for finding in findings:
        # the usage's own place: a finding may point at a token inside it (its anchor)
        at = places.get((finding.path, *finding.fix_at), [])
        if any(_drops(finding, u, differ, version) for u in at):
            continue
        if finding.code.code in _SINCE_OLD and any(
            _new_only(u, old_version, version, differ) for u in at
        ):
            continue
        imports = [u for u in at if isinstance(u, ImportUsage) and u.guarded]
        cover = next((fallbacks.get((u.path, u.line)) for u in imports), None)
        if cover is not None and finding.code.code in _MISSING:
            line, module, what, compatible = cover
            if compatible:
                continue  # the fallback is this release's import
            finding = replace(
                finding,
                severity="info",
                message=finding.message.replace(TRY_NOTE, "")
                + f" (the `except ImportError` fallback at line {line} imports {what} "
                f"from `{module}`, which the new release has, but a call here does not fit "
                "its signature)",
            )
        kept.append(finding)
    return kept


def _drops(finding: Finding, usage, differ: Differ, version: Version | None) -> bool:
    code = finding.code.code
    name = finding.symbol.rpartition(".")[2]
    for guard in usage.guards:
        kind = guard[0]
        if kind in ("has", "lacks") and _present(differ, guard[3]) == (kind == "lacks"):
            return True  # a feature test the new release fails: the branch never runs
        if kind == "version" and version is not None:
            try:
                if not _COMPARE[guard[1]](version, Version(guard[2])):
                    return True  # a branch for other releases
            except InvalidVersion:
                continue
        elif kind in ("has", "own") and code in _MISSING and guard[1] == name:
            return True  # checked for, or the consumer's own value (a pack still fires)
        elif kind == "except" and code in _MISSING and not isinstance(usage, ImportUsage):
            if guard[1] & _ATTRIBUTE:
                return True
        elif kind == "fallback" and isinstance(usage, ImportUsage) and code in _MISSING:
            if all(_resolves(differ, path) for _, path in guard[1]):
                return True  # the `try` imports work on the new release: never runs
    return False


def _present(differ: Differ, path: str | None, release: str = "new") -> bool | None:
    """Does the release have `path` (`hasattr` true there)? Decided only where the two
    releases differ on it: a name neither model sees may be set at run time."""
    if path is None:
        return None
    old, new = differ.old.resolve(path) is not None, differ.new.resolve(path) is not None
    if old == new:
        return None
    return new if release == "new" else old


def _new_only(usage, old: Version | None, new: Version | None, differ: Differ) -> bool:
    """Does the usage sit on a branch the new release takes and the old does not (a
    version test, or a feature test the releases answer differently)?"""
    features = [g for g in usage.guards if g[0] in ("has", "lacks") and g[3] is not None]
    for guard in features:
        wanted = guard[0] == "has"
        if _present(differ, guard[3]) == wanted and _present(differ, guard[3], "old") != wanted:
            return True
    if old is None or new is None:
        return False
    tests = [g for g in usage.guards if g[0] == "version"]
    try:
        holds = [
            (_COMPARE[g[1]](old, Version(g[2])), _COMPARE[g[1]](new, Version(g[2]))) for g in tests
        ]
    except InvalidVersion:
        return False
    return bool(holds) and all(n for _, n in holds) and not all(o for o, _ in holds)


def _resolves(differ: Differ, path: str) -> bool:
    """Does an import of `path` succeed on the new release (unchanged, and there)?"""
    return differ.reference_change(path) is None and differ.new.resolve(path) is not None


def _fallback_imports(usages: UsageSet, differ: Differ) -> dict[tuple, tuple]:
    """(path, line of a guarded import) -> (line, module, what, compatible) of a fallback
    import binding the same name that the new release has; compatible: every call of the
    name in the file binds to the fallback's new signature."""
    present: dict[tuple, tuple[int, str, str]] = {}  # (path, try line, name) -> fallback
    for usage in usages.usages:
        if not isinstance(usage, ImportUsage):
            continue
        for guard in usage.guards:
            if guard[0] == "fallback" and differ.reference_change(usage.symbol) is None:
                if differ.new.resolve(usage.symbol) is not None:
                    module, _, name = usage.symbol.rpartition(".")
                    # keyed by the name bound: `import get_local_ip_auto as get_ip`
                    # covers `import get_ip`
                    present[(usage.path, guard[2], usage.bound or name)] = (
                        usage.line,
                        module,
                        name,
                    )
    covered = {}
    for usage in usages.usages:
        if isinstance(usage, ImportUsage) and usage.guarded:
            name = usage.bound or usage.symbol.rpartition(".")[2]
            for guard in usage.guards:
                if guard[0] == "except" and guard[1] & _IMPORT:
                    found = present.get((usage.path, guard[2], name))
                    if found is not None:
                        line, module, other = found
                        same = other == usage.symbol.rpartition(".")[2]
                        what = "it" if same else f"`{other} as {name}`"
                        fits = _calls_fit(usages, usage, f"{module}.{other}", differ)
                        covered[(usage.path, usage.line)] = (line, module, what, fits)
    return covered


def _calls_fit(usages: UsageSet, imported: ImportUsage, fallback: str, differ: Differ) -> bool:
    """Does every call in the file of the name `imported` binds (recorded under either
    import's path) bind to the new signature of `fallback`?"""
    found = differ.new.resolve(fallback)
    if found is None or found.opaque:
        return False
    function = callable_signature(found.obj, differ.new)
    for usage in usages.usages:
        if (
            isinstance(usage, CallUsage)
            and usage.path == imported.path
            and usage.symbol in (imported.symbol, fallback)
        ):
            if function is None or not bind(call_params(function, False), usage).ok:
                return False
    return True


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None
