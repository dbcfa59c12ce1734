"""One fact, one finding: a setting named twice on one line is reported once.

A wrapped ServerArgs field is seen by two routes (the class field or dict key that sets
it, and the `sglang_<field>` / `--sglang-<flag>` spelling read as a flag), and a shell
line may both set and read one env var. Such findings share a line and a symbol; the
most specific stays (the error, then the field over the flag, then one with an edit,
then the first column) and takes the others' evidence, and their edits (each a step at
its own place: `args.sglang_x or getattr(args, "sglang_x")` is renamed twice).
"""

from __future__ import annotations

from driftaudit.findings import Finding

# codes about one named setting (a ServerArgs field, a CLI flag, an env var)
_SETTINGS = ("DA401", "DA402", "DA403", "DA406", "DA404", "DA405", "DA504")
_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def _rank(finding: Finding) -> tuple:
    no_edit = not (finding.fix and finding.fix.edit)
    code = _SETTINGS.index(finding.code.code)
    return (_SEVERITY[finding.severity], code, no_edit, finding.column)


def merge_repeats(findings: list[Finding]) -> tuple[list[Finding], int]:
    """The findings with each line's repeats about one setting merged; and how many were
    merged away."""
    groups: dict[tuple, list[Finding]] = {}
    kept: list[Finding] = []
    for finding in findings:
        if finding.code.code in _SETTINGS and finding.symbol:
            groups.setdefault((finding.path, finding.line, finding.symbol), []).append(finding)
        else:
            kept.append(finding)
    merged = 0
    for group in groups.values():
        group.sort(key=_rank)
        first = group[0]
        for other in group[1:]:
            merged += 1
            _take_evidence(first, other)
        kept.append(first)
    return kept, merged


def _take_evidence(kept: Finding, other: Finding) -> None:
    explanation = other.message.partition(": ")[2] or other.message
    if explanation not in kept.message:
        kept.message += f"; also {other.message}"
    kept.old_location = kept.old_location or other.old_location
    kept.new_location = kept.new_location or other.new_location
    if kept.fix is None:
        kept.fix = other.fix
    elif kept.fix.edit and other.fix and other.fix.edit and kept.fix_at != other.fix_at:
        if kept.fix.applicability == other.fix.applicability and "steps" not in other.fix.edit:
            steps = kept.fix.edit.get("steps") or [{**kept.fix.edit, "at": list(kept.fix_at)}]
            kept.fix.edit = {"steps": [*steps, {**other.fix.edit, "at": list(other.fix_at)}]}
    if kept.details is None:
        kept.details = other.details
