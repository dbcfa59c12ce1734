"""The consumer audited against every release of a supported range (`--supports`, the
config's `supports`): the two compares of its ends (oldest -> newest and back, through
`pipeline.run_compare`), joined into one fact per place (`_ranged`), with the releases
each fails on (`history/failing.py`) and what fails on a release inside the range alone
(`_inside`, `history/inside.py`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.errors import DriftauditError
from driftaudit.findings import Finding
from driftaudit.findings_cache import FindingsCache, packs_digest
from driftaudit.packs import pack_directories
from driftaudit.pipeline import CompareResult, run_compare
from driftaudit.progress import step
from driftaudit.usage.files import ConsumerFiles

if TYPE_CHECKING:
    from collections.abc import Callable

    from driftaudit.history.timeline import Timeline


@dataclass
class SupportedResult(CompareResult):
    """A compare over a supported range: `old` its oldest release, `new` its newest,
    `releases` every release of it (oldest first)."""

    releases: list[str] = field(default_factory=list)
    timeline: Timeline | None = None  # the range's releases (None: one release)


def run_supported(
    consumer: Path,
    supports: str,
    cache_dir: Path,
    offline: bool = False,
    exclude: list[str] | None = None,
    pack_dirs: list[Path] | None = None,
    prefixes: list[str] | None = None,
    use_cache: bool = False,
    source: str = "command line",
) -> SupportedResult:
    """The consumer audited against every release in `supports` (a specifier set): the
    compare oldest -> newest finds what fails on the newer releases, the compare newest
    -> oldest what fails on the older ones (a name only the newest has); each finding
    says on which releases of the range it fails (`history/failing.py`). A fact the two
    directions both see (a default that differs) is kept once, as oldest -> newest sees
    it. The consumer's guards are judged in each direction against its target release
    (`match/guards.py`): a version branch for the newest, or a fallback the oldest has,
    stays silent; a fallback only the newest has is reported for the older ones."""
    from driftaudit.sources.releases import releases_in

    step(f"listing the sglang releases in {supports}")
    releases = releases_in(supports, cache_dir, offline)
    oldest, newest = releases[0], releases[-1]
    run = partial(
        run_compare,
        consumer,
        cache_dir=cache_dir,
        exclude=exclude,
        pack_dirs=pack_dirs,
        prefixes=prefixes,
        allow_paths=(False, False),
        use_cache=use_cache,
        sources=(source, source),
    )
    forward = run(old_spec=oldest, new_spec=newest)
    result = SupportedResult(**{f: getattr(forward, f) for f in forward.__dataclass_fields__})
    result.releases = releases
    if oldest == newest:
        result.findings = _covered_pins(forward.findings, forward.files, releases)
        return result
    backward = run(old_spec=newest, new_spec=oldest).findings
    from driftaudit.history.timeline import Timeline

    timeline = Timeline([result.old, *releases[1:-1], result.new], cache_dir)
    result.timeline = timeline
    inside = partial(
        _inside,
        forward,
        timeline,
        exclude=exclude,
        pack_dirs=pack_dirs,
        prefixes=prefixes,
        use_cache=use_cache,
        cache_dir=cache_dir,
    )
    result.findings = _ranged(forward.findings, backward, forward.files, timeline, inside)
    return result


def _ranged(
    forward: list[Finding],
    backward: list[Finding],
    files: ConsumerFiles | None,
    timeline: Timeline,
    inside: Callable[[list[Finding]], list[Finding]],
) -> list[Finding]:
    """The range's findings from its two compares' (oldest -> newest, newest -> oldest):
    each fact once, told in the range's order, with the releases it fails on; then what
    `inside(known)` finds on the releases between (`history/inside.py`)."""
    from driftaudit.history.failing import mark_failing
    from driftaudit.history.inside import amend

    releases = timeline.versions
    oldest, newest, last = releases[0], releases[-1], len(releases) - 1
    findings = _covered_pins(forward, files, releases)
    seen = {_fact_at(f) for f in findings}
    # the consumer's own input (DA0xx) is judged once, oldest -> newest
    backward = [f for f in backward if not f.code.code.startswith("DA0")]
    backward = [_backward(f, oldest, newest) for f in backward if _fact_at(f) not in seen]
    ranged = [f for f in findings if not f.code.code.startswith("DA0")]
    try:
        mark_failing(ranged, timeline, 0, last)
        mark_failing(backward, timeline, last, 0)
    except DriftauditError as exc:  # the findings stand; each fails on its target at least
        print(f"driftaudit: warning: releases of the range not read: {exc}", file=sys.stderr)
        for finding in ranged:
            finding.fails_on = [newest]
        for finding in backward:
            finding.fails_on = [oldest]
    known = findings + backward
    return sorted(known + amend(known, inside(known), releases), key=Finding.sort_key)


def _inside(
    forward: CompareResult,
    timeline: Timeline,
    known: list[Finding],
    exclude: list[str] | None,
    pack_dirs: list[Path] | None,
    prefixes: list[str] | None,
    use_cache: bool,
    cache_dir: Path,
) -> list[Finding]:
    """What fails on a release inside the range alone (`history/inside.py`), kept in the
    findings cache per consumer and every release of the range."""
    from driftaudit.history.inside import audit_inside

    if len(timeline.versions) < 3:
        return []
    files = forward.files or ConsumerFiles(forward.consumer, exclude)
    # a release's identity is its record's wheel sha256: a kept answer opens no tree
    timeline.fetch([i for i, known in enumerate(timeline.identities) if known is None])
    fingerprint = forward.fingerprint if use_cache else None
    cache, keys = None, ("", "")
    if fingerprint is not None and all(timeline.identities):
        directories = pack_directories(pack_dirs)
        slot = {
            "consumer": str(forward.consumer.resolve()),
            "inside": timeline.versions,
            "exclude": files.exclude,
            "prefixes": prefixes,
            "packs": [str(d) for d in directories],
        }
        inputs = {
            "files": fingerprint,
            "trees": timeline.identities,
            "packs": packs_digest(directories),
        }
        cache = FindingsCache(cache_dir)
        keys = cache.keys(slot, inputs)
        cached = cache.load(*keys)
        if cached is not None:
            return cached
    usages = forward.usages
    if forward.snapshots is None:  # the ends' findings came from the cache
        from driftaudit.usage import collect_usages

        if fingerprint is not None:
            from driftaudit.findings_cache import tool_digest
            from driftaudit.usage.file_cache import FileCache

            files.cache = files.cache or FileCache(cache_dir, forward.consumer, tool_digest())
        usages = collect_usages(files)
    from driftaudit.usage.surface_uses import scan_surfaces

    try:
        found = audit_inside(
            timeline, usages, scan_surfaces(files, prefixes), files, forward.consumer, known
        )
    except DriftauditError as exc:  # the ends' findings stand
        print(f"driftaudit: warning: releases inside the range not audited: {exc}", file=sys.stderr)
        return []
    if files.cache is not None:
        files.cache.flush()
    if cache is not None:
        cache.save(*keys, found)
    return found


def _fact_at(finding: Finding) -> tuple:
    return (finding.code.code, finding.symbol, finding.path, finding.line, finding.column)


def _backward(finding: Finding, oldest: str, newest: str) -> Finding:
    """A finding of the newest -> oldest compare, told in the range's order: its
    evidence's old side is the oldest release's."""
    return replace(
        finding,
        message=f"{finding.message}, seen from {newest} back to {oldest} (the range supports both)",
        old_location=finding.new_location,
        new_location=finding.old_location,
    )


def _covered_pins(
    findings: list[Finding], files: ConsumerFiles | None, releases: list[str]
) -> list[Finding]:
    """Without DA004's warnings about a separate environment's pin the range covers (a
    release of the range satisfies it): the range audits that environment too."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from driftaudit import codes
    from driftaudit.usage.pins import read_pins

    warned = [
        f for f in findings if f.code is codes.SGLANG_PINS_DISAGREE and f.severity == "warning"
    ]
    if not warned or files is None:
        return findings
    covered = set()
    for pin in read_pins(files):
        try:
            allowed = SpecifierSet(pin.specifier)
        except InvalidSpecifier:
            continue
        if pin.name == "sglang" and any(allowed.contains(v, prereleases=True) for v in releases):
            covered.add((pin.path, pin.line))
    dropped = {id(f) for f in warned if (f.path, f.line) in covered}
    return [f for f in findings if id(f) not in dropped]
