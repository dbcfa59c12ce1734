"""The CI gate: matched findings -> inline suppressions -> baseline -> what is reported.

Order matters: a suppressed finding never reaches the baseline, and the bookkeeping
findings (DA002 unused suppression, DA003 stale baseline entry) are reported but
never written to a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.check.baseline import Baseline
from driftaudit.check.suppressions import apply_suppressions, scan_consumer
from driftaudit.codes import STALE_BASELINE_ENTRY, UNUSED_SUPPRESSION
from driftaudit.findings import Finding
from driftaudit.usage.files import ConsumerFiles

_BOOKKEEPING = {UNUSED_SUPPRESSION.code, STALE_BASELINE_ENTRY.code}


@dataclass
class Gate:
    files: ConsumerFiles  # the consumer's index: its root, the lines fingerprints read
    findings: list[Finding]  # what to report and fail on
    accepted: list[Finding]  # what --update-baseline writes
    suppressed: list[Finding] = field(default_factory=list)
    known: list[Finding] = field(default_factory=list)  # matched a baseline entry
    baseline_path: Path | None = None

    def write_baseline(self) -> None:
        if self.baseline_path is not None:
            baseline = Baseline.of(self.accepted, self.files)
            baseline.write(self.baseline_path, self.files.root)


def triage(
    findings: list[Finding],
    files: ConsumerFiles,
    baseline_path: Path | None = None,
    baseline: Baseline | None = None,
) -> Gate:
    """`baseline`: the one at `baseline_path`, when the caller has read it already (to
    refuse a bad one before the run)."""
    kept, suppressed = apply_suppressions(findings, scan_consumer(files))
    accepted = [f for f in kept if f.code.code not in _BOOKKEEPING]
    gate = Gate(files, kept, accepted, suppressed, [], baseline_path)
    if baseline_path is None:
        return gate
    if baseline is None:
        baseline = Baseline.load(baseline_path, files.root)
    new, known, stale = baseline.split(kept, files)
    gate.findings = sorted(new + stale, key=Finding.sort_key)
    gate.known = known
    return gate
