"""GitLab Code Quality: the JSON array GitLab reads from a `codequality` report artifact,
one issue per fact (`findings.group_facts`), at its lead place.

Each issue: `description`, `check_name` (the code), `fingerprint` (the baseline's, so it
survives lines moving; a repeat of the same fingerprint gets a numbered one, since GitLab
needs them unique), `severity` and `location` (`path` from the repository root,
`lines.begin`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from driftaudit.check.baseline import fingerprint
from driftaudit.findings import Finding, group_facts
from driftaudit.report.escape import json_text

if TYPE_CHECKING:
    from driftaudit.usage.files import ConsumerFiles

# GitLab's scale is blocker, critical, major, minor, info
SEVERITY = {"error": "critical", "warning": "major", "info": "info"}


def findings_gitlab(findings: list[Finding], files: ConsumerFiles, prefix: str = "") -> str:
    """`files`: the consumer's index (its lines make the fingerprints); `prefix`: its path
    from the repository root."""
    issues = []
    seen: dict[str, int] = {}
    for group in group_facts(findings):
        lead = group[0]
        print_ = fingerprint(lead, files)
        repeat = seen.get(print_, 0)
        seen[print_] = repeat + 1
        if repeat:
            print_ = hashlib.sha256(f"{print_}\0{repeat}".encode()).hexdigest()[:32]
        description = f"{lead.code.code} {lead.message}"
        if len(group) > 1:
            description += f" (and {len(group) - 1} more places)"
        issues.append(
            {
                "description": description,
                "check_name": lead.code.code,
                "fingerprint": print_,
                "severity": SEVERITY[lead.severity],
                "location": {"path": prefix + lead.path, "lines": {"begin": lead.line}},
            }
        )
    return json_text(issues)
