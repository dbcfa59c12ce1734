"""GitHub Actions workflow commands: one `::error file=...,line=...::message` line per
finding, which GitHub shows as an annotation on the pull request's diff.

Escaping follows the Actions runner (`toolkit/packages/core/src/command.ts`): in the
message `%`, CR and LF; in property values also `:` and `,` (`escape.py`). Consumer text
(the file, the message, the fix) is shown `visible`: a line break or a control character
in it reads as an escape, and only our own line break separates the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftaudit.findings import Finding
from driftaudit.report.escape import github_data, github_property, visible
from driftaudit.report.regions import region

if TYPE_CHECKING:
    from driftaudit.sources import SourceTree
    from driftaudit.usage.files import ConsumerFiles

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def annotation(finding: Finding, files: ConsumerFiles | None = None, prefix: str = "") -> str:
    line, column, end_line, end_column = region(finding, files)
    properties = {
        "file": prefix + finding.path,
        "line": line,
        "col": column,
        "endLine": end_line,
        "endColumn": end_column,
        "title": f"{finding.code.code} {finding.code.kind}",
    }
    rendered = ",".join(f"{k}={github_property(str(v))}" for k, v in properties.items())
    message = visible(finding.message)
    if finding.fix:
        message += f"\nfix: {visible(finding.fix.description)}"
    return f"::{_COMMAND[finding.severity]} {rendered}::{github_data(message)}"


def findings_github(
    findings: list[Finding],
    files: ConsumerFiles | None = None,
    prefix: str = "",
    old: SourceTree | None = None,
) -> str:
    """`files`: the consumer's index (regions); `prefix`: the consumer's path from the
    repository root (annotations name files relative to the workspace). With `old` read
    from the consumer's pin, a first `::notice` on that pin says so."""
    return _pin_notice(old, prefix) + "".join(annotation(f, files, prefix) + "\n" for f in findings)


def _pin_notice(old: SourceTree | None, prefix: str) -> str:
    given = old.provenance if old is not None else None
    if old is None or given is None or given.path is None or given.line is None:
        return ""
    properties = {"file": prefix + given.path, "line": given.line, "title": "driftaudit --old"}
    rendered = ",".join(f"{k}={github_property(str(v))}" for k, v in properties.items())
    message = f"audited from sglang {visible(old.version or old.spec)}, pinned here"
    return f"::notice {rendered}::{github_data(message)}\n"
