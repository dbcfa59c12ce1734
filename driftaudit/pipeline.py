"""The pipeline, end to end: resolve -> snapshot -> drift + usage -> match."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.cache import BlobStore
from driftaudit.drift import Change, Differ
from driftaudit.drift.serverargs import SERVER_ARGS, ServerArgsDrift
from driftaudit.drift.surfaces import surface_changes
from driftaudit.errors import DriftauditError
from driftaudit.findings import Finding
from driftaudit.match import match_usages
from driftaudit.match.behaviour import behaviour_findings
from driftaudit.match.patches import patch_findings
from driftaudit.packs import load_packs, rules_dirs
from driftaudit.snapshot import Snapshot
from driftaudit.sources import SourceTree, resolve_spec
from driftaudit.sources.pin import read_pin
from driftaudit.usage import UsageSet, collect_usages
from driftaudit.usage.patches import collect_patches
from driftaudit.usage.pins import read_pins
from driftaudit.usage.surfaces import scan_surfaces


@dataclass
class CompareResult:
    old: SourceTree
    new: SourceTree
    consumer: Path
    findings: list[Finding]
    usages: UsageSet
    timings: dict[str, float] = field(default_factory=dict)
    old_pin: str | None = None  # where --old came from, when read from the consumer


def open_snapshots(old_spec: str, new_spec: str, cache_dir: Path) -> tuple[Snapshot, Snapshot]:
    store = BlobStore(cache_dir / "snapshots.sqlite")
    old_tree = resolve_spec(old_spec, cache_dir)
    new_tree = resolve_spec(new_spec, cache_dir)
    return Snapshot(old_tree, store), Snapshot(new_tree, store)


def run_compare(
    consumer: Path,
    old_spec: str | None,
    new_spec: str,
    cache_dir: Path,
    exclude: list[str] | None = None,
    pack_dirs: list[Path] | None = None,
    prefixes: list[str] | None = None,
) -> CompareResult:
    if not consumer.exists():
        raise DriftauditError(f"consumer path {str(consumer)!r} does not exist")
    if not consumer.is_dir():
        raise DriftauditError(f"consumer path {str(consumer)!r} is not a directory")
    pin_location = None
    if old_spec is None:
        pin = read_pin(consumer)
        if pin is None:
            raise DriftauditError(
                "no --old given and no sglang pin found in pyproject.toml, "
                "requirements*.txt, setup.py or a Dockerfile"
            )
        old_spec, pin_location = pin
    timings: dict[str, float] = {}
    start = time.perf_counter()
    old, new = open_snapshots(old_spec, new_spec, cache_dir)
    timings["resolve"] = time.perf_counter() - start
    start = time.perf_counter()
    usages = collect_usages(consumer, exclude)
    surfaces = scan_surfaces(consumer, prefixes, exclude)
    pins = read_pins(consumer)
    patches = collect_patches(consumer, exclude)
    timings["usage"] = time.perf_counter() - start
    start = time.perf_counter()
    packs = []
    if old.tree.version and new.tree.version:
        packs = load_packs(rules_dirs(pack_dirs), old.tree.version, new.tree.version)
    differ = Differ(old, new)
    findings = match_usages(usages, differ, packs, consumer, surfaces, pins)
    findings += patch_findings(patches, differ)
    timings["match"] = time.perf_counter() - start
    start = time.perf_counter()
    findings += behaviour_findings(usages, old, new, consumer)
    findings.sort(key=Finding.sort_key)
    timings["behaviour"] = time.perf_counter() - start
    return CompareResult(old.tree, new.tree, consumer, findings, usages, timings, pin_location)


def _about_server_args_fields(change: Change, fields: set[str]) -> bool:
    if change.symbol == SERVER_ARGS:
        return True
    owner, _, name = change.symbol.rpartition(".")
    return owner == SERVER_ARGS and name in fields


def run_diff(
    old_spec: str, new_spec: str, cache_dir: Path, prefix: str | None
) -> tuple[Snapshot, Snapshot, list[Change]]:
    """The sglang-side changelog: API, ServerArgs and flags, surfaces, requirements."""
    old, new = open_snapshots(old_spec, new_spec, cache_dir)
    module_prefix = prefix if prefix and old.is_module(prefix) else None
    changes = list(Differ(old, new).all_changes(module_prefix))
    old_args, new_args = old.server_args(), new.server_args()
    if old_args and new_args:
        fields = set(old_args.fields)
        # the field model says it better than the class's synthesised constructor
        changes = [c for c in changes if not _about_server_args_fields(c, fields)]
        changes += ServerArgsDrift(old_args, new_args).all_changes()
    changes += surface_changes(old, new)
    return old, new, [c for c in changes if prefix is None or c.symbol.startswith(prefix)]


@dataclass
class FixResult:
    compare: CompareResult
    changes: list  # of driftaudit.fix.FileChange
    written: bool

    @property
    def fixed(self) -> int:
        return sum(len(c.applied) for c in self.changes if c.changed)

    def needs_a_human(self) -> list[Finding]:
        """Findings no edit took care of."""
        done = {(e.path, e.line, e.column, e.code) for c in self.changes for e in c.applied}
        return [
            f for f in self.compare.findings if (f.path, f.line, f.column, f.code.code) not in done
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
) -> FixResult:
    """Compare, turn the mechanical findings into edits, rewrite (only with apply)."""
    from driftaudit.fix import apply_edits, edits_from_findings  # libcst: only to fix
    from driftaudit.fix.apply import write_atomically

    compare = run_compare(consumer, old_spec, new_spec, cache_dir, exclude, pack_dirs, prefixes)
    edits = edits_from_findings(compare.findings, select, ignore)
    changes = apply_edits(consumer, edits)
    if apply:
        for change in changes:
            if change.changed:
                write_atomically(consumer / change.path, change.after)
    return FixResult(compare, changes, apply)
