"""The pipeline, end to end: resolve -> snapshot -> drift + usage -> match.

The stages are imported where they run: a warm run whose findings are cached (see
`findings_cache`) never imports griffe, networkx or the matchers.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.errors import DriftauditError
from driftaudit.findings import Finding
from driftaudit.findings_cache import FindingsCache, packs_digest, tree_digest
from driftaudit.findings_cache import enabled as cache_enabled
from driftaudit.packs import pack_directories
from driftaudit.progress import step
from driftaudit.sources import SourceTree, resolve_spec
from driftaudit.sources.tree import Provenance, unversioned_warning
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.usages import UsageSet

if TYPE_CHECKING:
    from driftaudit.drift import Change
    from driftaudit.forked import Parallelism
    from driftaudit.history.timeline import Timeline
    from driftaudit.snapshot import Snapshot
    from driftaudit.store import Entry, Store


@dataclass
class CompareResult:
    old: SourceTree
    new: SourceTree
    consumer: Path
    findings: list[Finding]
    usages: UsageSet
    timings: dict[str, float] = field(default_factory=dict)
    files: ConsumerFiles | None = None  # the consumer's files, read once (the fixer reuses them)
    snapshots: tuple[Snapshot, Snapshot] | None = None  # opened, unless the findings were cached
    fingerprint: str | None = None  # the consumer's files as the run read them (use_cache)

    @property
    def old_pin(self) -> str | None:
        """'file:line' of the pin --old was read from, if it was."""
        return self.old.provenance.where if self.old.provenance else None


def open_snapshots(
    old_spec: str,
    new_spec: str,
    cache_dir: Path,
    allow_paths: tuple[bool, bool] = (True, True),
    consumer: Path | None = None,
) -> tuple[Snapshot, Snapshot]:
    """`allow_paths`: whether each spec may name a directory or git repository (False
    for a spec read from the consumer's config; see sources.resolve_spec)."""
    old_tree = resolve_spec(old_spec, cache_dir, allow_paths[0], consumer)
    new_tree = resolve_spec(new_spec, cache_dir, allow_paths[1], consumer)
    return _snapshots(old_tree, new_tree, cache_dir)


def _snapshots(
    old: SourceTree,
    new: SourceTree,
    cache_dir: Path,
    imported: list[str] | None = None,
    pairs: bool = True,
) -> tuple[Snapshot, Snapshot]:
    """The two trees' snapshots over one store (what a file both trees share gives is
    computed once). `imported`: the sglang modules the consumer imports: their models
    come with their call data (DA702 walks both trees) and the old tree's function
    fingerprints (DA701 looks for copies there) from the same parse, whichever process
    extracts them. `pairs`: keep the answers of the two trees together (drift/pairs.py)."""
    from driftaudit.drift.pairs import NAMESPACE
    from driftaudit.snapshot import Snapshot
    from driftaudit.store import Store
    from driftaudit.store.db import BlobStore

    off = () if pairs and cache_enabled() else (NAMESPACE,)
    store = Store(BlobStore(cache_dir / "snapshots.sqlite"), off)
    imported = imported or []
    return (
        Snapshot(old, store, dict.fromkeys(imported, ("calls", "prints"))),
        Snapshot(new, store, dict.fromkeys(imported, ("calls",))),
    )


def _build_ahead(
    store: Store, snapshots: tuple[Snapshot, Snapshot], imported: list[str], env_names: set[str]
) -> list[list[tuple[Entry, str]]]:
    """Per tree, the entries a cold run builds ahead (those not kept yet) with their
    policies (store/ahead.py): ServerArgs and the name index, the models of the modules
    the consumer imports (a guess), then the surfaces: the order a run asks for them.
    One child per tree: the trees' entries are independent, and one child building both
    was the critical path of a cold run on miles (3.5 s of work, while the other
    processes waited for it)."""
    work = []
    for snapshot in snapshots:
        wide = snapshot.tree_entries(env_names)
        guessed = [e for name in imported if (e := snapshot.module_entry(name)) is not None]
        ordered = wide[:2] + guessed + wide[2:]
        jobs = [(e, _policy(e.namespace)) for e in ordered if not store.has(e.key)]
        if jobs:
            work.append(jobs)
    return work


def _policy(namespace: str) -> str:
    if namespace == "module":
        return "guess"  # a guess: a lookup never waits for one
    if namespace in ("surface", "envnames"):
        return "share"  # the child reads the tree once for all of them
    return "wait"


def run_compare(
    consumer: Path,
    old_spec: str | None,
    new_spec: str,
    cache_dir: Path,
    exclude: list[str] | None = None,
    pack_dirs: list[Path] | None = None,
    prefixes: list[str] | None = None,
    allow_paths: tuple[bool, bool] = (True, True),
    use_cache: bool = False,
    sources: tuple[str, str] = ("command line", "command line"),
) -> CompareResult:
    """`use_cache`: reuse (and store) the findings of an earlier run on exactly these
    inputs (see `driftaudit.findings_cache`). `sources`: where each spec was written
    ("command line" or "config"); --old read from the consumer's pin says so itself."""
    if not consumer.exists():
        raise DriftauditError(f"consumer path {str(consumer)!r} does not exist")
    if not consumer.is_dir():
        raise DriftauditError(f"consumer path {str(consumer)!r} is not a directory")
    old_from = Provenance(sources[0])
    files = ConsumerFiles(consumer, exclude)  # walked once, each file read once, lazily
    fingerprint = files.fingerprint() if use_cache and cache_enabled() else None
    pins = None  # read when needed: not on a cache hit with --old given
    if old_spec is None:
        # packaging's markers: not on a warm run with --old given
        from driftaudit.usage.pins import pin_version, read_pins, sglang_pin

        pins = read_pins(files)
        pin = sglang_pin(pins)
        if pin is None:
            raise DriftauditError(
                "no --old given and no sglang pin found in pyproject.toml, "
                "requirements*.txt, setup.py or a Dockerfile"
            )
        old_spec, old_from = pin_version(pin), Provenance("pin", pin.path, pin.line)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    step(f"resolving sglang {old_spec} and {new_spec}")
    old_tree = resolve_spec(old_spec, cache_dir, allow_paths[0], consumer)
    new_tree = resolve_spec(new_spec, cache_dir, allow_paths[1], consumer)
    old_tree = replace(old_tree, provenance=old_from)
    new_tree = replace(new_tree, provenance=Provenance(sources[1]))
    for tree in (old_tree, new_tree):
        warning = unversioned_warning(tree)
        if warning:  # said on every run, from the cache too
            print(f"driftaudit: warning: {warning}", file=sys.stderr)
    cache, keys = None, ("", "")
    if fingerprint is not None:
        cache, keys = _cache_keys(
            cache_dir, consumer, files, fingerprint, old_tree, new_tree, pack_dirs, prefixes
        )
    if fingerprint is not None:  # per-file results by content (and a report's fixes)
        from driftaudit.findings_cache import tool_digest
        from driftaudit.usage.file_cache import FileCache

        files.cache = FileCache(cache_dir, consumer, tool_digest())
    if cache is not None:
        cached = cache.load(*keys)
        if cached is not None:
            timings["resolve"] = time.perf_counter() - start
            usages = UsageSet(str(consumer))  # not collected: the findings were stored
            return CompareResult(
                old_tree, new_tree, consumer, cached, usages, timings, files, None, fingerprint
            )
    from driftaudit.forked import Parallelism
    from driftaudit.store.ahead import Ahead
    from driftaudit.usage.imported import imported_modules
    from driftaudit.usage.surface_uses.scan import env_names_spelled

    imported = imported_modules(f.text for f in files.python())
    old, new = _snapshots(old_tree, new_tree, cache_dir, imported, fingerprint is not None)
    work = _build_ahead(old.store, (old, new), imported, env_names_spelled(files))
    # once, for every stage that forks
    parallel = Parallelism.decide(bool(work), max(len(old.files), len(new.files)))
    if parallel.children:
        if any(e.namespace == "module" for jobs in work for e, _ in jobs):
            # griffe (0.18 s to import, with griffecli, ctypes, email...) once, here: the
            # children inherit it, and so does the behaviour child forked later
            import driftaudit.snapshot.extract  # noqa: F401
        for jobs in work:  # built in a child per tree while usage runs
            old.store.building(Ahead(old.store, jobs))
    timings["resolve"] = time.perf_counter() - start
    if pins is None:
        from driftaudit.usage.pins import read_pins

        pins = read_pins(files)
    findings, usages = _audit(
        consumer, old, new, files, pins, pack_dirs, prefixes, timings, parallel
    )
    if files.cache is not None:
        files.cache.flush()
    if cache is not None:
        cache.save(*keys, findings)
    return CompareResult(
        old.tree, new.tree, consumer, findings, usages, timings, files, (old, new), fingerprint
    )


def _cache_keys(
    cache_dir: Path,
    consumer: Path,
    files: ConsumerFiles,
    fingerprint: str,
    old: SourceTree,
    new: SourceTree,
    pack_dirs: list[Path] | None,
    prefixes: list[str] | None,
) -> tuple[FindingsCache | None, tuple[str, str]]:
    """The findings cache and the keys of this run's entry (None: not cacheable, a file
    of a tree could not be read)."""
    digests = tree_digest(old), tree_digest(new)
    if None in digests:
        return None, ("", "")
    directories = pack_directories(pack_dirs)
    slot = {
        "consumer": str(consumer.resolve()),
        "old": old.describe(),
        "new": new.describe(),
        "exclude": files.exclude,
        "prefixes": prefixes,
        "packs": [str(d) for d in directories],
    }
    inputs = {"files": fingerprint, "trees": digests, "packs": packs_digest(directories)}
    cache = FindingsCache(cache_dir)
    return cache, cache.keys(slot, inputs)


def _audit(
    consumer: Path,
    old: Snapshot,
    new: Snapshot,
    files: ConsumerFiles,
    pins: list,
    pack_dirs: list[Path] | None,
    prefixes: list[str] | None,
    timings: dict[str, float],
    parallel: Parallelism | None = None,
) -> tuple[list[Finding], UsageSet]:
    """usage -> drift -> match: the findings, sorted, and the usages collected (with
    `files.cache`, per-file results are reused where the files did not change)."""
    from driftaudit.drift import Differ
    from driftaudit.match import match_usages
    from driftaudit.match.behaviour import behaviour_later
    from driftaudit.match.bypass import bypass_findings
    from driftaudit.match.guards import apply_guards
    from driftaudit.match.patches import patch_findings
    from driftaudit.packs import load_packs
    from driftaudit.usage import collect_usages
    from driftaudit.usage.bypass_uses import collect_bypasses
    from driftaudit.usage.collect import failures
    from driftaudit.usage.patch_files import collect_patches
    from driftaudit.usage.surface_uses import scan_surfaces
    from driftaudit.versions import parse_version

    start = time.perf_counter()
    step(f"reading {consumer}")
    usages = collect_usages(files)
    # the behaviour checks need the usages alone: on a cold run, forked now, alongside
    behaviour = behaviour_later(usages, old, new, files, parallel is not None and parallel.children)
    surfaces = scan_surfaces(files, prefixes)
    patches = collect_patches(files)
    reaching = {u.path for u in usages.usages}  # a bypass imports sglang: it has usages
    bypasses = collect_bypasses(files, reaching)
    usages.failures = failures(files)  # the surface scanners may have found more
    timings["usage"] = time.perf_counter() - start
    start = time.perf_counter()
    packs = []
    if old.tree.version and new.tree.version:
        for tree in (old.tree, new.tree):  # packs select entries by version: must parse
            parse_version(tree.version, f"sglang version of {tree.spec!r}")
        packs = load_packs(pack_directories(pack_dirs), old.tree.version, new.tree.version)
    step(
        f"matching {len(usages.usages)} uses of sglang in {len(reaching)} files "
        "(parsing the sglang modules reached, once)"
    )
    differ = Differ(old, new)
    findings = match_usages(usages, differ, packs, consumer, surfaces, pins, files)
    findings += patch_findings(patches, differ)
    behaving = bypass_findings(bypasses, differ, usages)
    timings["match"] = time.perf_counter() - start
    start = time.perf_counter()
    behaving += behaviour()
    # a behaviour finding at a use on a branch the new release does not take is none
    findings += apply_guards(behaving, usages, differ)
    files.to_file_positions(findings)  # notebooks: where the code is in the .ipynb file
    files.release_trees()  # every stage has read them
    findings.sort(key=Finding.sort_key)
    timings["behaviour"] = time.perf_counter() - start
    return findings, usages


def _about_server_args_fields(change: Change, fields: set[str]) -> bool:
    from driftaudit.drift.serverarg_changes import SERVER_ARGS

    if change.symbol == SERVER_ARGS:
        return True
    owner, _, name = change.symbol.rpartition(".")
    return owner == SERVER_ARGS and name in fields


def run_diff(
    old_spec: str, new_spec: str, cache_dir: Path, prefix: str | None
) -> tuple[Snapshot, Snapshot, list[Change]]:
    """The sglang-side changelog: API, ServerArgs and flags, surfaces, requirements."""
    from driftaudit.drift import Differ
    from driftaudit.drift.serverarg_changes import ServerArgsDrift
    from driftaudit.drift.surface_changes import surface_additions, surface_changes

    step(f"resolving sglang {old_spec} and {new_spec}")
    old, new = open_snapshots(old_spec, new_spec, cache_dir)
    step("diffing (parsing every sglang module, once)")
    module_prefix = prefix if prefix and old.is_module(prefix) else None
    changes = list(Differ(old, new).all_changes(module_prefix))
    server_args = ServerArgsDrift.between(old, new)
    if server_args is not None:
        fields = set(server_args.old.fields)
        # the field model says it better than the class's synthesised constructor
        changes = [c for c in changes if not _about_server_args_fields(c, fields)]
        changes += server_args.all_changes()
    changes += surface_changes(old, new) + surface_additions(old, new)
    return old, new, [c for c in changes if prefix is None or c.symbol.startswith(prefix)]


@dataclass
class FixResult:
    compare: CompareResult
    changes: list  # of driftaudit.fix.FileChange
    written: bool
    unsafe_held: list[Finding] = field(default_factory=list)  # fixes that need --unsafe-fixes
    suppressed: list[Finding] = field(default_factory=list)  # silenced inline: not fixed
    known: list[Finding] = field(default_factory=list)  # accepted in the baseline: not fixed
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why): nothing written
    swept: list[Path] = field(default_factory=list)  # leftovers of a killed run, removed
    # a supported range: findings whose fix the re-audit held back, as it breaks a release
    range_held: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def fixed(self) -> int:
        return sum(len(c.applied) for c in self.changes if c.changed)

    def needs_a_human(self) -> list[Finding]:
        """Findings no edit took care of (unsafe fixes held back included); not those
        the team silenced or accepted, nor those another edit covers (`Fix.covered_by`)."""
        done = {(e.path, *e.position, e.code) for c in self.changes for e in c.applied}
        left = {id(f) for f in [*self.suppressed, *self.known]}
        return [
            f
            for f in self.compare.findings
            if (f.path, *f.fix_at, f.code.code) not in done
            and id(f) not in left
            and not (f.fix and f.fix.covered_by)
        ]

    def covered(self) -> list[Finding]:
        """Findings that need no edit of their own: another one's edit takes care of them."""
        left = {id(f) for f in [*self.suppressed, *self.known]}
        return [
            f for f in self.compare.findings if f.fix and f.fix.covered_by and id(f) not in left
        ]


def run_fix(
    consumer: Path,
    old_spec: str | None,
    new_spec: str,
    cache_dir: Path,
    apply: bool = False,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    exclude: list[str] | None = None,
    pack_dirs: list[Path] | None = None,
    prefixes: list[str] | None = None,
    unsafe_fixes: bool = False,
    per_file_ignores: list[tuple[str, list[str]]] | None = None,
    allow_paths: tuple[bool, bool] = (True, True),
    use_cache: bool = False,
    baseline: Path | None = None,
    sources: tuple[str, str] = ("command line", "command line"),
    supports: str | None = None,
    offline: bool = False,
) -> FixResult:
    """Compare, turn the mechanical findings into edits, re-audit the fixed files and keep
    the fixes the re-audit confirms, rewrite (only with apply: every changed file or
    none, see `driftaudit.fix.write`). A finding silenced inline (`# driftaudit:
    ignore[...]`) or accepted in the `baseline` is not fixed, as `check` does not report
    it, nor one its file's `per_file_ignores` (glob, codes) leave out. With `supports` (a
    range, in place of old and new): the findings of every release in it, each fix made
    to work on all of them or held back (`fix/range_fixes.py`), and re-audited on all."""
    from driftaudit.check import triage
    from driftaudit.check.selection import Selection
    from driftaudit.fix import (  # libcst: only to fix
        WriteRefused,
        apply_edits,
        edits_from_findings,
        fixable,
        sweep_stale,
        write_all,
    )
    from driftaudit.fix.verify import Fix
    from driftaudit.supported import SupportedResult, run_supported

    scanned_at = time.time_ns()  # a file written after this may not match its findings
    compare: CompareResult
    if supports is not None:
        compare = run_supported(
            consumer,
            supports,
            cache_dir,
            offline,
            exclude,
            pack_dirs,
            prefixes,
            use_cache,
            sources[1],
        )
    else:
        compare = run_compare(
            consumer,
            old_spec,
            new_spec,
            cache_dir,
            exclude,
            pack_dirs,
            prefixes,
            allow_paths,
            use_cache,
            sources,
        )
    files = compare.files or ConsumerFiles(consumer, exclude)
    gate = triage(compare.findings, files, baseline)
    known = {id(f) for f in [*gate.suppressed, *gate.known]}
    wanted = [f for f in compare.findings if id(f) not in known]
    wanted = Selection(per_file=per_file_ignores or []).apply(wanted)
    fixes = [Fix(f, edits_from_findings([f], select, ignore, unsafe_fixes)) for f in wanted]
    fixes = [fix for fix in fixes if fix.edits]
    if isinstance(compare, SupportedResult):
        from driftaudit.fix.range_fixes import range_fixes

        fixes = range_fixes(fixes, compare.releases, partial(_everywhere, compare.timeline))
    held = (
        []
        if unsafe_fixes
        else [f for f in fixable(wanted, select, ignore) if f.fix_applicability != "safe"]
    )
    changes = apply_edits(files, [e for fix in fixes for e in fix.edits], scanned_at)
    audit = partial(_audit_contents, compare, files, cache_dir, pack_dirs, prefixes, use_cache)
    changes, last = _reaudit(compare.findings, fixes, changes, audit)
    result = FixResult(compare, changes, False, held, gate.suppressed, gate.known)
    if isinstance(compare, SupportedResult):
        from driftaudit.fix.range_fixes import why_held

        skipped = {id(e): why for c in changes for e, why in c.skipped}
        for fix in fixes:
            reasons = [skipped[id(e)] for e in fix.edits if id(e) in skipped]
            why = why_held(fix.finding, compare.releases, reasons[0]) if reasons else None
            if why is not None:
                result.range_held.append((fix.finding, why))
    if apply:
        result.swept = sweep_stale(consumer)
        new_files = [(c.path, c.data(), c.source.digest) for c in changes if c.changed]
        try:
            write_all(consumer, new_files)
            result.written = True
        except WriteRefused as exc:
            result.refused = exc.problems
        if result.written and last is not None and last.files.cache is not None:
            last.files.cache.flush()  # the written files' per-file results: the next run's
    return result


def _everywhere(timeline: Timeline | None, names: list[str]) -> set[str]:
    """The sglang names every release of a range has (its timeline's states)."""
    if timeline is None:
        return set(names)
    try:
        states = timeline.states(names)
    except DriftauditError:
        return set()
    return {name for name, row in states.items() if all(state.present for state in row)}


# A re-audit holds back at least one fix per round; past this many rounds, every fix
# still in question is held back (a cascade no round settled).
_MAX_ROUNDS = 4


@dataclass
class _Reaudit:
    files: ConsumerFiles  # the consumer with the fixed files' new contents
    findings: list[Finding]


def _reaudit(
    before: list[Finding], fixes: list, changes: list, audit
) -> tuple[list, _Reaudit | None]:
    """Audit the fixed files again (the same pipeline on their new contents; with the
    file cache, only they are parsed and analysed again) and hold back each fix whose
    finding is still reported or that brings a finding the first audit did not have:
    its edits are listed as not made, with the reason, and its finding needs a human.
    `audit(changed)`: the `_Reaudit` of the changed files' new contents. Returns the
    changes and the last re-audit (None when nothing changed)."""
    from driftaudit.fix import rewrite
    from driftaudit.fix.verify import blame

    by_file: dict[str, list] = {}
    for fix in fixes:
        by_file.setdefault(fix.path, []).append(fix)
    reasons: dict[int, str] = {}  # id(fix) -> why it is held back
    last = None
    for round_ in range(_MAX_ROUNDS + 1):
        changed = {c.path: c for c in changes if c.changed}
        if not changed:
            return changes, None
        last = audit(changed)
        applied = {id(e) for c in changed.values() for e in c.applied}
        live = [f for f in fixes if id(f) not in reasons and any(id(e) in applied for e in f.edits)]
        texts = {path: (c.before, c.after) for path, c in changed.items()}
        found = blame(live, before, last.findings, texts)
        if not found:
            break
        if round_ == _MAX_ROUNDS:  # not settled: nothing in question is kept
            found = {
                id(f): found.get(id(f), "held back: the re-audit did not settle") for f in live
            }
        reasons.update(found)
        for path in {f.path for f in live if id(f) in found}:
            kept = [e for f in by_file[path] if id(f) not in reasons for e in f.edits]
            change = next(c for c in changes if c.path == path)
            redone = rewrite(path, change.source, kept) if change.source else change
            held_edits = [
                (e, reasons[id(f)]) for f in by_file[path] if id(f) in reasons for e in f.edits
            ]
            redone.skipped = [*redone.skipped, *held_edits]
            changes = [redone if c.path == path else c for c in changes]
    return changes, last


def _audit_contents(
    compare: CompareResult,
    files: ConsumerFiles,
    cache_dir: Path,
    pack_dirs: list[Path] | None,
    prefixes: list[str] | None,
    use_cache: bool,
    changed: dict,
) -> _Reaudit:
    """The findings of the consumer with the `changed` files (path -> FileChange) read as
    their new contents: the same trees, packs and settings as `compare` (a supported
    range: every release of it); with `use_cache`, the unchanged files' per-file results
    come from the file cache."""
    from driftaudit.supported import SupportedResult, _ranged
    from driftaudit.usage.pins import read_pins

    contents = {path: change.data() for path, change in changed.items()}
    after_files = files.with_bytes(contents)
    if compare.snapshots is None:  # the first audit came from the findings cache
        compare.snapshots = _snapshots(compare.old, compare.new, cache_dir)
    old, new = compare.snapshots
    if use_cache and cache_enabled():
        from driftaudit.findings_cache import tool_digest
        from driftaudit.usage.file_cache import FileCache

        # flushed only once the fixed files are written (`run_fix`)
        after_files.cache = FileCache(cache_dir, compare.consumer, tool_digest())
    pins = read_pins(after_files)
    findings, usages = _audit(
        compare.consumer, old, new, after_files, pins, pack_dirs, prefixes, {}
    )
    timeline = compare.timeline if isinstance(compare, SupportedResult) else None
    if timeline is not None:  # a range: every release of it, as `run_supported` audits
        from driftaudit.history.inside import audit_inside
        from driftaudit.usage.surface_uses import scan_surfaces

        backward, _ = _audit(compare.consumer, new, old, after_files, pins, pack_dirs, prefixes, {})
        surfaces = scan_surfaces(after_files, prefixes)
        inside = partial(audit_inside, timeline, usages, surfaces, after_files, compare.consumer)
        findings = _ranged(findings, backward, after_files, timeline, inside)
    return _Reaudit(after_files, findings)


def _dated_range(old: SourceTree, new: SourceTree) -> bool:
    """Both trees are releases of the index (a directory or git ref is not one of the
    range whatever version it states)."""
    return all(t.origin == "index" and t.version for t in (old, new))


def date_findings(
    findings: list[Finding], old: SourceTree, new: SourceTree, cache_dir: Path, offline: bool
) -> None:
    """Each finding's `introduced` and `deprecated` (history/dating.py), from the
    releases between old and new; nothing when a side is not a release of the index."""
    if not findings or not _dated_range(old, new):
        return
    from driftaudit.history.dating import date_findings as dating
    from driftaudit.history.timeline import Timeline

    try:
        dating(findings, Timeline.between(old, new, cache_dir, offline))
    except DriftauditError as exc:  # the findings stand without their dates
        print(f"driftaudit: warning: no introduced/deprecated releases: {exc}", file=sys.stderr)


@dataclass
class HistoryResult:
    name: str
    old: SourceTree
    new: SourceTree
    rows: list  # of history.timeline.Row, oldest first


# `history` without --old: this many releases up to --new
HISTORY_SPAN = 10


def run_history(
    name: str, old_spec: str | None, new_spec: str, cache_dir: Path, offline: bool
) -> HistoryResult:
    """`name`'s state in every release from old (default: the last `HISTORY_SPAN`
    releases up to new) to new (see history/states.py for how a name is spelled). An
    error when no release of the range has it."""
    from driftaudit.history.states import spelling_kind
    from driftaudit.history.timeline import Timeline
    from driftaudit.sources.index import looks_like_version, release_version
    from driftaudit.sources.latest import resolve_latest
    from driftaudit.sources.releases import releases_between

    if spelling_kind(name) is None:
        raise DriftauditError(
            f"cannot read {name!r} as a name: expected sglang.x.y, sglang.x.f(param), "
            "--flag, an ENV_VAR, a /route or a distribution name"
        )
    from packaging.version import Version

    from driftaudit.sources.releases import listed_releases

    specs = [resolve_latest(s, cache_dir, offline) for s in (old_spec, new_spec)]
    for spec in specs:
        if spec is not None and not looks_like_version(spec):
            raise DriftauditError(f"history reads releases: {spec!r} is not a version")
    high = release_version(specs[1] or new_spec)
    if specs[0] is None:
        earlier = [v for v in listed_releases(cache_dir, offline) if Version(v) <= Version(high)]
        specs[0] = earlier[-HISTORY_SPAN:][0] if earlier else high
    low = release_version(specs[0])
    step(f"listing sglang releases from {low} to {high}")
    versions = releases_between(low, high, cache_dir, offline, include_old=True)
    timeline = Timeline(list(versions), cache_dir)
    rows = timeline.rows(name)
    if not any(row.state.present for row in rows):
        raise DriftauditError(
            f"{name!r} is found in no sglang release from {low} to {high} "
            f"({len(rows)} releases read)"
        )
    return HistoryResult(name, timeline.resolved(0), timeline.resolved(-1), rows)


_NOT_A_RELEASE = {
    "directory": "a directory",
    "git": "a git ref",
    "installed": "the installed sglang",
}


def plan_upgrade(
    findings: list[Finding],
    old: SourceTree,
    new: SourceTree,
    cache_dir: Path,
    offline: bool,
    compare: CompareResult | None = None,
):
    """The steps of the upgrade old -> new for the reported findings (history/plan.py),
    dated over every release between; an error when a side is not a release of the
    index or the releases between cannot be read. With the `compare` the findings come
    from, each stop between old and new is audited for what fails there alone."""
    from driftaudit.history.dating import date_findings as dating
    from driftaudit.history.plan import build_plan
    from driftaudit.history.timeline import Timeline

    for side, tree in (("--old", old), ("--new", new)):
        if not _dated_range(tree, tree):
            what = _NOT_A_RELEASE.get(tree.origin, "a release without a version")
            raise DriftauditError(
                f"plan needs two releases of the index: {side} {tree.spec} is {what}"
            )
    if old.version == new.version:
        raise DriftauditError(f"plan needs two releases: --old and --new are both {old.version}")
    timeline = Timeline.between(old, new, cache_dir, offline)
    if findings:
        dating(findings, timeline)
    plan = build_plan(findings, timeline.versions)
    stops = [s.stop for s in plan.steps if s.stop not in (timeline.versions[0], new.version)]
    if compare is not None and stops:
        from driftaudit.history.inside import audit_inside
        from driftaudit.history.plan import add_transient
        from driftaudit.usage import collect_usages
        from driftaudit.usage.surface_uses import scan_surfaces

        files = compare.files or ConsumerFiles(compare.consumer)
        usages = compare.usages if compare.snapshots is not None else collect_usages(files)
        at_stops = Timeline([old, *stops, new], cache_dir)
        try:
            found = audit_inside(
                at_stops, usages, scan_surfaces(files), files, compare.consumer, findings
            )
        except DriftauditError as exc:
            print(f"driftaudit: warning: the plan's stops not audited: {exc}", file=sys.stderr)
            found = []
        seen = {(f.symbol, f.path, f.line, f.column) for f in findings}
        add_transient(plan, [f for f in found if (f.symbol, f.path, f.line, f.column) not in seen])
    return plan
